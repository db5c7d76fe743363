package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/manejo/manejo/classify"
	"github.com/manejo/manejo/coverage"
	"github.com/manejo/manejo/pipeline"
	"github.com/manejo/manejo/series"
	"github.com/manejo/manejo/tillage"
)

func init() {
	register(&command{name: "analyse", synopsis: "run T, C, cycles and payloads over your own series: a long table of points and dates (CSV or Parquet)", run: runAnalyse})
}

// analyseFlags are the flags of manejo analyse.
type analyseFlags struct {
	tc                     pipeline.TableConfig
	season, agriStart      string
	from, asOf             string
	codes, codesFile, cnpj string
	quiet                  bool
	tp                     tillage.Params
	cp                     coverage.Params
}

func (f *analyseFlags) define(fs *flag.FlagSet) {
	fs.StringVar(&f.tc.Observations, "observations", "", "observation table, CSV or Parquet, local, s3:// or https:// (required): field_id, point_id, lon, lat, date and ndvi, ndti or red, nir, swir16, swir22 (docs/series.md)")
	fs.StringVar(&f.tc.Collection, "collection", "", "collection of the rows without one (a table without a collection column), e.g. sentinel-2-l2a")
	fs.StringVar(&f.tc.Crops, "crops", "", "declared crop history CSV, the table of manejo classify --crops ("+strings.Join(classify.CropsColumns, ",")+"): each season's straw is read with the residue of the crop that ended last before its sowing (docs/coverage.md)")
	fs.StringVar(&f.tc.Sowing, "sowing", "", "declared sowing dates CSV: field_id,season,sowing_date[,crop] (declared dates win over detection)")
	fs.StringVar(&f.tc.Out, "out", "", "output folder, local or s3://bucket/prefix (required)")
	fs.StringVar(&f.season, "season", "", "contract agricultural year, e.g. 2026/2027: C reads the three years before it (required)")
	fs.StringVar(&f.agriStart, "agri-year-start", "07-01", "first day (MM-DD) of an agricultural year")
	fs.StringVar(&f.from, "from", "", fmt.Sprintf("first date read, YYYY-MM-DD (default: %d years before the contract year)", pipeline.HistoryYears))
	fs.StringVar(&f.asOf, "as-of", "", "reference date of T and last date read, YYYY-MM-DD (default: the day before the contract year)")
	fs.StringVar(&f.codes, "satellite-codes", "", "SINM satellite codes, collection=S0n,...; dem names the source of the table's slope_pct")
	fs.StringVar(&f.codesFile, "satellite-codes-file", "", "file with the satellite codes (JSON object or key=value lines); --satellite-codes entries override it")
	fs.StringVar(&f.cnpj, "cnpj-empresa-sensoriamento", os.Getenv(operatorCNPJEnv), "CNPJ of the remote-sensing company, written as cnpjEmpresaSensoriamento in every payload (default $"+operatorCNPJEnv+")")
	fs.BoolVar(&f.tc.UndeclaredPracticesAsZero, "undeclared-practices-as-zero", false, "send plantioContorno/terraceamento 0 for a talhão whose table has no plantio_contorno/terraceamento (SINM requires both; without this flag its payload is held back)")
	workersFlag(fs, &f.tc.Workers)
	fs.IntVar(&f.tc.MaxCellScenes, "max-cell-scenes", 0, fmt.Sprintf("memory budget of one talhão in points × scenes (dates; about 1.6 KB each here): a talhão over it fails with the reason, its rows dropped as soon as it passes it; 0 = %d, -1 = no cap", series.DefaultMaxCellScenes))
	fs.BoolVar(&f.tc.Force, "force", false, "recompute even when a previous analysis of the same inputs is complete")
	fs.BoolVar(&f.quiet, "quiet", false, "no progress lines (errors are still printed)")
	fs.Float64Var(&f.tp.K, "tillage-k", f.tp.K, "tillage break threshold in historical standard deviations (Portaria 349, 6.8)")
	fs.Float64Var(&f.tp.MinCellFraction, "tillage-min-cells", f.tp.MinCellFraction, "share of interior points that must break for a talhão event")
	fs.Float64Var(&f.cp.MaxNDVI, "straw-max-ndvi", 0, "readings at or above this NDVI are left out of the straw reading (see docs/coverage.md)")
	fs.Float64Var(&f.cp.BareNDTI, "bare-ndti", 0, "NDTI of bare soil, 0 % straw (default: see README)")
	fs.Float64Var(&f.cp.StrawNDTI, "straw-ndti", 0, "NDTI of full straw cover, 100 % (default: see README)")
}

// config checks the flags and turns them into the analysis's configuration.
func (f *analyseFlags) config(ctx context.Context) (pipeline.TableConfig, error) {
	tc := f.tc
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
	if tc.AgriYearStart, err = coverage.ParseMonthDay(f.agriStart); err != nil {
		return tc, usagef("--agri-year-start: %v", err)
	}
	if tc.Season, err = coverage.ParseSeason(f.season, tc.AgriYearStart); err != nil {
		return tc, usagef("--season: %v", err)
	}
	for _, d := range []struct {
		name, v string
		dst     *time.Time
	}{{"--from", f.from, &tc.From}, {"--as-of", f.asOf, &tc.AsOf}} {
		if d.v != "" {
			if *d.dst, err = time.Parse(time.DateOnly, d.v); err != nil {
				return tc, usagef("%s %q: want YYYY-MM-DD", d.name, d.v)
			}
		}
	}
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
	f := analyseFlags{tp: tillage.DefaultParams()}
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
