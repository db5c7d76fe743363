package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/manejo/manejo/grid"
	"github.com/manejo/manejo/pipeline"
	"github.com/manejo/manejo/storage"
)

func init() {
	register(&command{name: "grid", synopsis: "divide talhões into cells and write their centres (IN 6.2, 6.4 I)", run: runGrid})
}

// gridReport is the --report document.
type gridReport struct {
	Fields  string                `json:"fields"`
	Out     string                `json:"out"`
	OK      int                   `json:"ok"`
	Skipped int                   `json:"skipped"`
	Talhoes []pipeline.GridStatus `json:"talhoes"`
}

func runGrid(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("grid", "grid --fields F --out cells.geojson|cells.parquet [--id-field id] [--cell-ha X] [--edge-buffer-m 15] [--report status.json]\n\n--fields and --out are required", stderr)
	fields, idField := new(string), new(string)
	talhoesFlags(fs, fields, idField)
	out := fs.String("out", "", "output file: .geojson (cell centres as Points) or .parquet (GeoParquet cells) (required)")
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
	}
	if ext := strings.ToLower(filepath.Ext(*out)); ext != ".geojson" && ext != ".json" && ext != ".parquet" {
		return usagef("--out %s: want a .geojson or .parquet file", *out)
	}
	if err := writableLoc("--out", *out); err != nil {
		return err
	}
	opts, err := gridOptions(*cellHa, *buffer)
	if err != nil {
		return err
	}
	if err := checkIDField(*idField); err != nil {
		return err
	}
	statuses, done, err := pipeline.Grid(ctx, pipeline.GridConfig{Fields: *fields, IDField: *idField, Options: opts, Out: *out})
	var cse *pipeline.CellSizeError
	switch {
	case errors.As(err, &cse):
		return usagef("--cell-ha %g is outside the legal cell size of %d talhões: %s", *cellHa, len(cse.Talhoes), strings.Join(cse.Talhoes, ", "))
	case errors.Is(err, grid.ErrCellSize):
		return usagef("%v", err)
	case err != nil:
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
		if err := storage.WriteFile(ctx, *report, append(b, '\n')); err != nil {
			return err
		}
	}
	fmt.Fprintf(stdout, "%d talhões gridded, %d skipped, %d cells written to %s\n", rep.OK, rep.Skipped, countCells(done), *out)
	if rep.Skipped > 0 {
		return partialError(rep.Skipped, rep.OK+rep.Skipped)
	}
	return nil
}

func modisWord(st pipeline.GridStatus) string {
	if st.MODISEligible {
		return fmt.Sprintf("eligible (%d points)", st.MODISPoints)
	}
	return "not eligible: " + st.MODISReason
}

func countCells(gs []grid.Grid) int {
	n := 0
	for _, g := range gs {
		n += len(g.Cells)
	}
	return n
}
