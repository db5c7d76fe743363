package pipeline

import (
	"context"
	"runtime"

	"github.com/manejo/manejo/grid"
	"github.com/manejo/manejo/slope"
	"github.com/manejo/manejo/storage"
)

// SlopeConfig is what Slopes needs.
type SlopeConfig struct {
	Fields, IDField string
	DEM             string // any GDAL raster; local, s3:// or https://
	Workers         int    // talhões computed at once; default GOMAXPROCS
}

// SlopeResult is the slope of every readable talhão, in source order, with
// the features that could not be read.
type SlopeResult struct {
	Results    []slope.Result
	Errs       []error // Errs[i] is the error of Results[i], nil when it has a slope
	Unreadable []error // from grid.Read: bad features and an unreadable source
}

// Slopes opens the DEM, reads the talhões and computes the slope of each
// one, Workers at a time. It fails only when the DEM cannot be opened or ctx
// is done.
func Slopes(ctx context.Context, cfg SlopeConfig) (SlopeResult, error) {
	// s3:// DEMs and talhões go through GDAL's /vsis3/ with the same AWS
	// settings as the SDK (endpoint, path style, region).
	storage.SetGDALEnv()
	d, err := slope.Open(ctx, cfg.DEM)
	if err != nil {
		return SlopeResult{}, err
	}
	defer d.Close()
	fields, readErrs := grid.Read(ctx, cfg.Fields, grid.ReadOptions{IDField: cfg.IDField})
	res := SlopeResult{Unreadable: readErrs}
	workers := cfg.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	res.Results, res.Errs = d.Fields(ctx, fields, workers)
	return res, ctx.Err()
}
