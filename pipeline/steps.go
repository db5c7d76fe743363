package pipeline

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/manejo/manejo/export"
	"github.com/manejo/manejo/grid"
	"github.com/manejo/manejo/series"
	"github.com/manejo/manejo/stacapi"
	"github.com/manejo/manejo/storage"
	"github.com/manejo/manejo/zarc"
)

// The steps below are the first stages of a run, exposed so that a command
// can run part of the pipeline exactly as Run does.

// ReadFields reads the talhões of src. Bad features come back as errors
// (a *grid.FieldError names the talhão); an unreadable source is the
// returned error.
func ReadFields(ctx context.Context, src, idField string) ([]grid.Field, []error, error) {
	fields, errs := grid.Read(ctx, src, grid.ReadOptions{IDField: idField})
	for _, e := range errs {
		if errors.Is(e, grid.ErrSource) {
			return nil, nil, e
		}
	}
	return fields, errs, nil
}

// BuildGrids builds the cells of each talhão. A talhão whose grid fails is
// left out and returned as a failure of stage "grid".
func BuildGrids(ctx context.Context, fields []grid.Field, o grid.Options) ([]grid.Grid, []export.Failure, error) {
	var (
		grids    []grid.Grid
		failures []export.Failure
	)
	for _, f := range fields {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		g, err := grid.Build(f, o)
		if err != nil {
			failures = append(failures, export.Failure{FieldID: f.ID, Stage: "grid", Status: export.StatusFailed, Reason: err.Error()})
			continue
		}
		grids = append(grids, g)
	}
	return grids, failures, nil
}

// LoadCatalog loads a STAC catalog through storage, keeping only assets
// whose href starts with one of allow (when given). It returns nil when
// nothing is usable, and the rejected items or files as problems.
func LoadCatalog(ctx context.Context, src string, allow []string) (*series.Catalog, []error) {
	return series.LoadCatalog(ctx, src, series.CatalogOptions{Open: storage.Open, AllowHrefPrefixes: allow})
}

// ObsRows converts observations into rows of the observations dataset;
// masked observations keep their row with null indices. The per-reading
// fractions are left null (the analysis sets them, see readingFractions).
func ObsRows(obs []series.Obs) []export.ObsRow {
	if len(obs) == 0 {
		return nil
	}
	rows := make([]export.ObsRow, 0, len(obs))
	for _, o := range obs {
		r := export.ObsRow{FieldID: o.FieldID, CellID: o.CellID, Date: zarc.DateOf(o.Date), Collection: o.Collection, ItemID: o.ItemID}
		if o.Mask != "" {
			r.MaskReason = new(string(o.Mask))
		}
		if valid(o.NDVI) {
			r.NDVI = new(o.NDVI)
		}
		if valid(o.NDTI) {
			r.NDTI = new(o.NDTI)
		}
		r.Red, r.NIR, r.SWIR16, r.SWIR22 = optFloat(o.Red), optFloat(o.NIR), optFloat(o.SWIR1), optFloat(o.SWIR2)
		rows = append(rows, r)
	}
	return rows
}

// optFloat is v as a nullable column: nil for NaN.
func optFloat(v float32) *float32 {
	if !valid(v) {
		return nil
	}
	return &v
}

// SeriesConfig is what Series needs: the talhões, the catalog, the sampling
// options and where to write the observations.
type SeriesConfig struct {
	Fields, IDField string
	Catalog         string
	AllowHrefPrefix []string
	// Collections are searched when Catalog is a STAC API root.
	Collections []string
	Sample      series.Options
	// Out is a .parquet (observations dataset) or .csv file, local or s3://.
	Out     string
	Version string // recorded in the Parquet footer
}

// SeriesResult is what Series read and sampled.
type SeriesResult struct {
	Talhoes, Cells, Items int
	Obs                   []series.Obs
	Stats                 series.Stats
	// Unreadable are the talhões the source could not give; Failed those
	// whose grid failed; Catalog the rejected catalog items or files.
	Unreadable []error
	Failed     []export.Failure
	Catalog    []error
}

// Series runs the first stages of a run — read the talhões, build their
// grids, load the catalog, sample every cell — and writes the observations
// to cfg.Out. Talhões that cannot be read or gridded are left out and
// listed in the result.
func Series(ctx context.Context, cfg SeriesConfig) (SeriesResult, error) {
	var res SeriesResult
	ext := strings.ToLower(filepath.Ext(cfg.Out))
	if ext != ".parquet" && ext != ".csv" {
		return res, fmt.Errorf("%s: want a .parquet or .csv file", cfg.Out)
	}
	fields, readErrs, err := ReadFields(ctx, cfg.Fields, cfg.IDField)
	if err != nil {
		return res, err
	}
	res.Unreadable = readErrs
	grids, failed, err := BuildGrids(ctx, fields, grid.Options{})
	if err != nil {
		return res, err
	}
	res.Failed, res.Talhoes = failed, len(grids)
	for _, g := range grids {
		res.Cells += len(g.Cells)
	}
	var gridded []grid.Field
	for _, g := range grids {
		gridded = append(gridded, g.Field)
	}
	cat, problems, _, _, err := findCatalog(ctx, catalogQuery{src: cfg.Catalog, allow: cfg.AllowHrefPrefix, collections: cfg.Collections,
		fields: gridded, from: cfg.Sample.From, to: cfg.Sample.To, client: &stacapi.Client{}, access: stacapi.AccessFromEnv()})
	res.Catalog = problems
	if cat == nil {
		return res, fmt.Errorf("load catalog %s: nothing usable: %w", cfg.Catalog, err)
	}
	if err != nil {
		return res, err
	}
	res.Items = len(cat.Items)
	if res.Obs, res.Stats, err = series.Sample(ctx, cat, grids, cfg.Sample); err != nil {
		return res, err
	}
	var buf bytes.Buffer
	if ext == ".parquet" {
		err = export.Write(&buf, ObsRows(res.Obs), export.Options{Version: cfg.Version})
	} else {
		err = writeObsCSV(&buf, res.Obs)
	}
	if err == nil {
		err = storage.WriteFile(ctx, cfg.Out, buf.Bytes())
	}
	if err != nil {
		return res, fmt.Errorf("write %s: %w", cfg.Out, err)
	}
	return res, nil
}

// writeObsCSV writes observations as CSV, the columns of the observations
// dataset up to the reflectances (no fractions: nothing is unmixed here); a
// masked value is empty.
func writeObsCSV(w io.Writer, obs []series.Obs) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"field_id", "cell_id", "date", "collection", "item_id", "ndvi", "ndti", "mask_reason", "red", "nir", "swir16", "swir22"})
	f := func(v float32) string {
		if math.IsNaN(float64(v)) {
			return ""
		}
		return strconv.FormatFloat(float64(v), 'g', -1, 32)
	}
	for _, o := range obs {
		if err := cw.Write([]string{o.FieldID, o.CellID, o.Date.Format("2006-01-02"), o.Collection, o.ItemID, f(o.NDVI), f(o.NDTI), string(o.Mask), f(o.Red), f(o.NIR), f(o.SWIR1), f(o.SWIR2)}); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
