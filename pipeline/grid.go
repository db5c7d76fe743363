package pipeline

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/manejo/manejo/export"
	"github.com/manejo/manejo/grid"
	"github.com/manejo/manejo/storage"
)

// GridConfig is what Grid needs: the talhões, the grid options and where to
// write the cells.
type GridConfig struct {
	Fields, IDField string
	Options         grid.Options
	// Out is a .geojson/.json file (cell centres as Points) or a .parquet
	// file (GeoParquet cells), local or s3://.
	Out string
}

// GridStatus is the outcome of one talhão of Grid.
type GridStatus struct {
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

// CellSizeError reports a requested cell size outside the legal range of
// some talhões (IN 6.2); nothing is gridded.
type CellSizeError struct {
	CellHa  float64
	Talhoes []string // "id (area ha: lo–hi ha)"
}

func (e *CellSizeError) Error() string {
	return fmt.Sprintf("cell size %g ha is outside the legal cell size of %d talhões: %s", e.CellHa, len(e.Talhoes), strings.Join(e.Talhoes, ", "))
}

// Grid reads the talhões, builds their grids on all cores and writes the
// cells to cfg.Out. It returns the status of every talhão (unreadable ones
// first, then in source order) and the cells written. A cell size outside
// the legal range is an error (*CellSizeError, or one wrapping
// grid.ErrCellSize), and so is an unreadable source.
func Grid(ctx context.Context, cfg GridConfig) ([]GridStatus, []grid.Grid, error) {
	ext := strings.ToLower(filepath.Ext(cfg.Out))
	if ext != ".geojson" && ext != ".json" && ext != ".parquet" {
		return nil, nil, fmt.Errorf("%s: want a .geojson or .parquet file", cfg.Out)
	}
	fields, readErrs, err := ReadFields(ctx, cfg.Fields, cfg.IDField)
	if err != nil {
		return nil, nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	statuses := unreadableStatuses(readErrs)
	if err := checkCellSize(fields, cfg.Options.CellHa); err != nil {
		return nil, nil, err
	}
	grids, errs := buildAll(ctx, fields, cfg.Options)
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	var done []grid.Grid
	for i, f := range fields {
		if errs[i] != nil {
			if errors.Is(errs[i], grid.ErrCellSize) {
				return nil, nil, errs[i]
			}
			statuses = append(statuses, GridStatus{FieldID: f.ID, Status: "skipped", Reason: errs[i].Error()})
			continue
		}
		g := grids[i]
		done = append(done, g)
		statuses = append(statuses, GridStatus{
			FieldID: f.ID, Status: "ok", AreaHa: math.Round(g.AreaHa*1e6) / 1e6, CellSizeHa: g.CellSizeHa,
			Cells: len(g.Cells), EPSG: g.EPSG, MODISEligible: g.MODISEligible,
			MODISPoints: g.MODISPoints, MODISReason: g.MODISReason, Flags: g.Flags,
		})
	}
	if err := writeCells(ctx, cfg.Out, ext, done); err != nil {
		return nil, nil, err
	}
	return statuses, done, nil
}

// unreadableStatuses are the statuses of the features the source could not
// give as talhões.
func unreadableStatuses(readErrs []error) []GridStatus {
	var statuses []GridStatus
	for _, err := range readErrs {
		st := GridStatus{Status: "skipped", Reason: err.Error()}
		var fe *grid.FieldError
		if errors.As(err, &fe) {
			st.FieldID, st.Feature, st.Reason = fe.ID, fe.Index, fe.Err.Error()
		}
		statuses = append(statuses, st)
	}
	return statuses
}

// checkCellSize says which talhões a requested cell size (0 = the smallest
// legal one) does not fit. Invalid talhões are left to grid.Build.
func checkCellSize(fields []grid.Field, cellHa float64) error {
	if cellHa == 0 {
		return nil
	}
	var bad []string
	for _, f := range fields {
		if grid.Validate(f) != nil {
			continue // reported when built
		}
		a := grid.AreaHa(f.Geometry)
		if _, err := grid.CellSize(a, cellHa); err != nil {
			lo, hi := grid.CellSizeRange(a)
			bad = append(bad, fmt.Sprintf("%s (%.2f ha: %g–%g ha)", f.ID, a, lo, hi))
		}
	}
	if len(bad) > 0 {
		return &CellSizeError{CellHa: cellHa, Talhoes: bad}
	}
	return nil
}

// buildAll grids the talhões on all cores, keeping their order; it stops
// starting new ones when ctx is done.
func buildAll(ctx context.Context, fields []grid.Field, o grid.Options) ([]grid.Grid, []error) {
	grids := make([]grid.Grid, len(fields))
	errs := make([]error, len(fields))
	var eg errgroup.Group
	eg.SetLimit(runtime.GOMAXPROCS(0))
	for i := range fields {
		if ctx.Err() != nil {
			break
		}
		eg.Go(func() error {
			grids[i], errs[i] = grid.Build(fields[i], o)
			return nil
		})
	}
	_ = eg.Wait() // the errors are per talhão, in errs
	return grids, errs
}

// writeCells writes the cells to loc atomically, as GeoJSON centres or
// GeoParquet, streaming them through a temporary file (storage.CreateTemp,
// storage.PutFile).
func writeCells(ctx context.Context, loc, ext string, grids []grid.Grid) error {
	f, err := storage.CreateTemp(loc)
	if err != nil {
		return err
	}
	if ext == ".parquet" {
		err = export.WriteCellsParquet(f, grids)
	} else {
		err = grid.WriteCellsGeoJSON(f, grids)
	}
	if err == nil {
		err = f.Chmod(0o644) // readable like any written file, not 0600
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("write %s: %w", loc, err)
	}
	return storage.PutFile(ctx, loc, f.Name())
}
