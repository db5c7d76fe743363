package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"

	"github.com/manejo/manejo/pipeline"
	"github.com/manejo/manejo/series"
	"github.com/manejo/manejo/tillage"
)

func init() {
	register(&command{name: "analyse", synopsis: "run T, C, cycles and payloads over your own series: a long table of points and dates (CSV or Parquet)", run: runAnalyse})
}

// analyseFlags are the flags of manejo analyse.
type analyseFlags struct {
	contractFlags
	tc pipeline.TableConfig
}

func (f *analyseFlags) define(fs *flag.FlagSet) {
	fs.StringVar(&f.tc.Observations, "observations", "", "observation table, CSV or Parquet, local, s3:// or https:// (required): field_id, point_id, lon, lat, date and ndvi, ndti or red, nir, swir16, swir22 (docs/series.md)")
	fs.StringVar(&f.tc.Collection, "collection", "", "collection of the rows without one (a table without a collection column), e.g. sentinel-2-l2a")
	f.contractFlags.define(fs)
	fs.StringVar(&f.tc.Out, "out", "", "output folder, local or s3://bucket/prefix (required)")
	workersFlag(fs, &f.tc.Workers)
	fs.IntVar(&f.tc.MaxCellScenes, "max-cell-scenes", 0, fmt.Sprintf("memory budget of one talhão in points × scenes (dates; about 1.6 KB each here): a talhão over it fails with the reason, its rows dropped as soon as it passes it; 0 = %d, -1 = no cap", series.DefaultMaxCellScenes))
}

// config checks the flags and turns them into the analysis's configuration.
func (f *analyseFlags) config(ctx context.Context) (pipeline.TableConfig, error) {
	tc := f.tc
	tc.Crops, tc.Sowing, tc.UndeclaredPracticesAsZero, tc.Force = f.crops, f.sowing, f.undeclaredAsZero, f.force
	var err error
	for _, in := range []struct{ flag, v string }{{"--observations", tc.Observations}, {"--out", tc.Out}, {"--season", f.season}} {
		if in.v == "" {
			return tc, usagef("%s is required", in.flag)
		}
	}
	if err := writableLoc("--out", tc.Out); err != nil {
		return tc, err
	}
	if err := countFlags(map[string]int{"--workers": tc.Workers}); err != nil {
		return tc, err
	}
	if err := maxCellScenes(tc.MaxCellScenes); err != nil {
		return tc, err
	}
	d, err := f.dates()
	if err != nil {
		return tc, err
	}
	tc.AgriYearStart, tc.Season, tc.From, tc.AsOf = d.yearStart, d.season, d.from, d.asOf
	asOf := pipeline.Config{Season: tc.Season, AsOf: tc.AsOf}.AsOfOrDefault()
	if err := dateRange(tc.From, asOf); err != nil {
		return tc, err
	}
	if err := coverageFlags(f.cp); err != nil {
		return tc, err
	}
	if err := f.tp.Validate(); err != nil {
		return tc, usagef("tillage parameters: %v", err)
	}
	if err := checkOperatorCNPJ(f.cnpj); err != nil {
		return tc, err
	}
	tc.OperatorCNPJ = f.cnpj
	if tc.Codes, err = loadCodes(ctx, f.codes, f.codesFile); err != nil {
		return tc, err
	}
	if tc.Sowing != "" {
		if err := inputExists(ctx, "--sowing", tc.Sowing); err != nil {
			return tc, err
		}
	}
	tc.Tillage, tc.Coverage, tc.Version = f.tp, f.cp, version
	return tc, nil
}

func runAnalyse(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("analyse", "analyse --observations FILE --season 2026/2027 --satellite-codes K=S0n,... --out DIR [flags]", stderr)
	f := analyseFlags{contractFlags: contractFlags{tp: tillage.DefaultParams()}}
	f.define(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	tc, err := f.config(ctx)
	if err != nil {
		return err
	}
	if !f.quiet {
		tc.Log = slog.New(slog.NewJSONHandler(stderr, nil))
	}
	sum, err := pipeline.AnalyseTable(ctx, tc)
	if err != nil {
		if errors.Is(err, pipeline.ErrConfig) {
			return usagef("%v", err)
		}
		return err
	}
	fmt.Fprintf(stdout, "%d talhões: %d ok, %d partial (an indicator missing, with its reason), %d failed; %d SINM payload(s); manifest %s\n",
		sum.Total, sum.OK, sum.Partial, sum.Failed, sum.Payloads, sum.Manifest)
	return runOutcome(sum, tc.Out, stderr)
}
