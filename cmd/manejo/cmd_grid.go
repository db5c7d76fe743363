package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"github.com/manejo/manejo/export"
	"github.com/manejo/manejo/grid"
)

func init() {
	register(&command{name: "grid", synopsis: "divide talhões into cells and write their centres (IN 6.2, 6.4 I)", run: runGrid})
}

// gridStatus is the outcome of one talhão, printed to stderr and written to
// --report.
type gridStatus struct {
	FieldID       string   `json:"field_id,omitempty"`
	Feature       int      `json:"feature,omitempty"` // 1-based feature number in the source
	Status        string   `json:"status"`            // "ok" or "skipped"
	Reason        string   `json:"reason,omitempty"`
	AreaHa        float64  `json:"area_ha,omitempty"`
	CellSizeHa    float64  `json:"cell_size_ha,omitempty"`
	Cells         int      `json:"cells,omitempty"`
	EPSG          int      `json:"epsg,omitempty"`
	MODISEligible bool     `json:"modis_eligible"`
	MODISPoints   int      `json:"modis_points"`
	MODISReason   string   `json:"modis_reason,omitempty"`
	Flags         []string `json:"flags,omitempty"`
}

// gridReport is the --report document.
type gridReport struct {
	Fields  string       `json:"fields"`
	Out     string       `json:"out"`
	OK      int          `json:"ok"`
	Skipped int          `json:"skipped"`
	Talhoes []gridStatus `json:"talhoes"`
}

func runGrid(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("grid", "grid --fields F --out cells.geojson|cells.parquet [--id-field id] [--cell-ha X] [--edge-buffer-m 15] [--report status.json]", stderr)
	fields := fs.String("fields", "", "talhões: GeoJSON, GeoPackage, Shapefile, KML or any OGR vector; local path, s3://bucket/key or https:// URL (required)")
	out := fs.String("out", "", "output file: .geojson (cell centres as Points) or .parquet (GeoParquet cells) (required)")
	idField := fs.String("id-field", grid.DefaultIDField, "property holding the talhão id")
	cellHa := fs.Float64("cell-ha", 0, "cell area in hectares, inside the legal range of every talhão (1–5 ha under 100 ha, 5–10 ha from 100 ha); 0 = smallest legal size")
	buffer := fs.Float64("edge-buffer-m", grid.DefaultEdgeBufferM, "minimum distance in metres from a cell centre to the talhão boundary")
	report := fs.String("report", "", "write the per-talhão status as JSON to this file")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	switch {
	case *fields == "":
		return usagef("--fields is required")
	case *out == "":
		return usagef("--out is required")
	case math.IsNaN(*cellHa) || *cellHa != 0 && (*cellHa < 1 || *cellHa > 10):
		return usagef("--cell-ha %g: cells must be 1–5 ha (talhões under 100 ha) or 5–10 ha (from 100 ha)", *cellHa)
	case math.IsNaN(*buffer) || *buffer < 0:
		return usagef("--edge-buffer-m %g: want a distance ≥ 0 in metres", *buffer)
	}
	ext := strings.ToLower(filepath.Ext(*out))
	if ext != ".geojson" && ext != ".json" && ext != ".parquet" {
		return usagef("--out %s: want a .geojson or .parquet file", *out)
	}
	opts := grid.Options{CellHa: *cellHa, EdgeBufferM: *buffer}
	if *buffer == 0 {
		opts.EdgeBufferM = -1 // no buffer: grid.Options reads 0 as the default
	}

	talhoes, readErrs := grid.Read(ctx, *fields, grid.ReadOptions{IDField: *idField})
	for _, err := range readErrs {
		if errors.Is(err, grid.ErrSource) {
			return err
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	var statuses []gridStatus
	for _, err := range readErrs {
		st := gridStatus{Status: "skipped", Reason: err.Error()}
		var fe *grid.FieldError
		if errors.As(err, &fe) {
			st.FieldID, st.Feature, st.Reason = fe.ID, fe.Index, fe.Err.Error()
		}
		statuses = append(statuses, st)
	}

	// A --cell-ha outside the class of some talhão is a usage error: say
	// which talhões, and grid nothing.
	if *cellHa != 0 {
		var bad []string
		for _, f := range talhoes {
			if grid.Validate(f) != nil {
				continue // reported when built
			}
			a := grid.AreaHa(f.Geometry)
			if _, err := grid.CellSize(a, *cellHa); err != nil {
				lo, hi := grid.CellSizeRange(a)
				bad = append(bad, fmt.Sprintf("%s (%.2f ha: %g–%g ha)", f.ID, a, lo, hi))
			}
		}
		if len(bad) > 0 {
			return usagef("--cell-ha %g is outside the legal cell size of %d talhões: %s", *cellHa, len(bad), strings.Join(bad, ", "))
		}
	}

	grids, errs := buildAll(ctx, talhoes, opts)
	if err := ctx.Err(); err != nil {
		return err
	}
	var done []grid.Grid
	for i, f := range talhoes {
		if errs[i] != nil {
			if errors.Is(errs[i], grid.ErrCellSize) {
				return usagef("%v", errs[i])
			}
			statuses = append(statuses, gridStatus{FieldID: f.ID, Status: "skipped", Reason: errs[i].Error()})
			continue
		}
		g := grids[i]
		done = append(done, g)
		statuses = append(statuses, gridStatus{
			FieldID: f.ID, Status: "ok", AreaHa: round6(g.AreaHa), CellSizeHa: g.CellSizeHa,
			Cells: len(g.Cells), EPSG: g.EPSG, MODISEligible: g.MODISEligible,
			MODISPoints: g.MODISPoints, MODISReason: g.MODISReason, Flags: g.Flags,
		})
	}

	if err := writeCells(*out, ext, done); err != nil {
		return err
	}

	rep := gridReport{Fields: *fields, Out: *out, Talhoes: statuses}
	for _, st := range statuses {
		if st.Status == "ok" {
			rep.OK++
			fmt.Fprintf(stderr, "grid: %s ok: %.2f ha, %g ha cells, %d points, MODIS %s\n", st.FieldID, st.AreaHa, st.CellSizeHa, st.Cells, modisWord(st))
		} else {
			rep.Skipped++
			name := st.FieldID
			if name == "" {
				name = fmt.Sprintf("feature %d", st.Feature)
			}
			fmt.Fprintf(stderr, "grid: %s skipped: %s\n", name, st.Reason)
		}
	}
	if *report != "" {
		b, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			return fmt.Errorf("encode report: %w", err)
		}
		if err := writeFileAtomic(*report, func(w io.Writer) error { _, err := w.Write(append(b, '\n')); return err }); err != nil {
			return err
		}
	}
	fmt.Fprintf(stdout, "%d talhões gridded, %d skipped, %d cells written to %s\n", rep.OK, rep.Skipped, countCells(done), *out)
	if rep.Skipped > 0 {
		return partialError(rep.Skipped, rep.OK+rep.Skipped)
	}
	return nil
}

func modisWord(st gridStatus) string {
	if st.MODISEligible {
		return fmt.Sprintf("eligible (%d points)", st.MODISPoints)
	}
	return "not eligible: " + st.MODISReason
}

func round6(v float64) float64 { return math.Round(v*1e6) / 1e6 }

func countCells(gs []grid.Grid) int {
	n := 0
	for _, g := range gs {
		n += len(g.Cells)
	}
	return n
}

// buildAll grids the talhões on all cores, keeping their order.
func buildAll(ctx context.Context, fs []grid.Field, o grid.Options) ([]grid.Grid, []error) {
	grids := make([]grid.Grid, len(fs))
	errs := make([]error, len(fs))
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				grids[i], errs[i] = grid.Build(fs[i], o)
			}
		}()
	}
	for i := range fs {
		if ctx.Err() != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	return grids, errs
}

// writeCells writes the cells to path, atomically (temporary file, then
// rename), as GeoJSON centres or GeoParquet.
func writeCells(path, ext string, grids []grid.Grid) error {
	return writeFileAtomic(path, func(w io.Writer) error {
		if ext == ".parquet" {
			return export.WriteCellsParquet(w, grids)
		}
		return grid.WriteCellsGeoJSON(w, grids)
	})
}

func writeFileAtomic(path string, write func(io.Writer) error) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if err := write(tmp); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
