package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/manejo/manejo/classify"
	"github.com/manejo/manejo/coverage"
	"github.com/manejo/manejo/grid"
	"github.com/manejo/manejo/pipeline"
	"github.com/manejo/manejo/tillage"
)

// The flags several commands declare, each defined once here: one name, one
// type, one default and one help text across the CLI. A command says in its
// usage line which of them it requires.

// stringList is a repeatable (or comma-separated) string flag.
type stringList []string

func (l *stringList) String() string { return strings.Join(*l, ",") }
func (l *stringList) Set(v string) error {
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			*l = append(*l, s)
		}
	}
	return nil
}

// talhoesFlags declares --fields, the talhões file, and --id-field, the
// property holding each talhão's id (grid, series, run, slope, catalog
// search, cache prune).
func talhoesFlags(fs *flag.FlagSet, fields, idField *string) {
	fs.StringVar(fields, "fields", "", "talhões: GeoJSON, GeoPackage, Shapefile, KML or any OGR vector; local path, s3:// or https://")
	fs.StringVar(idField, "id-field", grid.DefaultIDField, "property of --fields holding the talhão id (never a CPF or CNPJ)")
}

// workersFlag declares --workers, the parallelism of every command that
// has one (run, analyse, series, slope).
func workersFlag(fs *flag.FlagSet, workers *int) {
	fs.IntVar(workers, "workers", 0, "parallelism: talhões or scenes worked on at once; 0 = all cores")
}

// acquisitionFlags declares --from and --to, the window of acquisition
// dates that series samples and catalog search searches; parse them with
// seriesDates.
func acquisitionFlags(fs *flag.FlagSet, from, to *string) {
	fs.StringVar(from, "from", "", "first acquisition date, YYYY-MM-DD, included (default: no limit)")
	fs.StringVar(to, "to", "", "last acquisition date, YYYY-MM-DD, included (default: no limit)")
}

// demFlag declares --dem (run, slope).
func demFlag(fs *flag.FlagSet, dem *string) {
	fs.StringVar(dem, "dem", "", "elevation model for slope: any GDAL raster (NASADEM 1″ GeoTIFF/HGT, a VRT mosaic, a COG); local, s3:// or https://")
}

// catalogFlags declares --catalog and --collections (series, run).
func catalogFlags(fs *flag.FlagSet, catalog *string, collections *stringList) {
	fs.StringVar(catalog, "catalog", "", "STAC ItemCollection JSON, directory of Item JSON files, or NDJSON; local, s3:// or https://; or a STAC API root URL, searched by the talhões' footprint and dates")
	fs.Var(collections, "collections", "collections searched when --catalog is a STAC API (comma-separated; default per API, see docs/stac-api.md)")
}

// readRuleFlags declares --allow-href-prefix and --allow-missing-qa
// (series, run).
func readRuleFlags(fs *flag.FlagSet, allow, noQA *stringList) {
	fs.Var(allow, "allow-href-prefix", "only read assets whose href starts with this prefix, after resolving relative hrefs; others are skipped as bad-href (repeatable or comma-separated)")
	fs.Var(noQA, "allow-missing-qa", "read this collection's scenes that lack their QA asset (an NDVI-only cube) unmasked, their observations flagged no-qa (repeatable or comma-separated)")
}

// contractFlags are the flags of run and analyse that say which contract
// year is assessed, with which parameters, and how its payloads are
// written: both commands assess the same way, from imagery or a table.
type contractFlags struct {
	season, agriStart, from, asOf         string
	codes, codesFile, cnpj, crops, sowing string
	undeclaredAsZero, force, quiet        bool
	tp                                    tillage.Params
	cp                                    coverage.Params
}

// define declares the contract flags on fs, with c.tp's defaults.
func (c *contractFlags) define(fs *flag.FlagSet) {
	fs.StringVar(&c.season, "season", "", "contract agricultural year, e.g. 2026/2027: C reads the three years before it (required)")
	fs.StringVar(&c.agriStart, "agri-year-start", "07-01", "first day (MM-DD) of an agricultural year")
	fs.StringVar(&c.from, "from", "", fmt.Sprintf("first date read (scenes, or rows of a table), YYYY-MM-DD (default: %d years before the contract year)", pipeline.HistoryYears))
	fs.StringVar(&c.asOf, "as-of", "", "reference date of T and last date read: YYYY-MM-DD, an RFC 3339 timestamp (its UTC date; EventBridge Scheduler's <aws.scheduler.scheduled-time>) or today (the UTC date at start; weekly runs); default: the day before the contract year")
	fs.StringVar(&c.codes, "satellite-codes", "", "SINM satellite codes, collection=S0n,...; the key dem names the slope source, the DEM or a table's slope_pct (e.g. 'sentinel-2-l2a=S01,landsat-c2-l2=S02,dem=S09')")
	fs.StringVar(&c.codesFile, "satellite-codes-file", "", "file with the satellite codes (JSON object or key=value lines); --satellite-codes entries override it")
	fs.StringVar(&c.cnpj, "cnpj-empresa-sensoriamento", os.Getenv(operatorCNPJEnv), "CNPJ of the remote-sensing company running manejo, written as cnpjEmpresaSensoriamento in every SINM payload (punctuation allowed; default $"+operatorCNPJEnv+"; empty leaves it out)")
	fs.BoolVar(&c.undeclaredAsZero, "undeclared-practices-as-zero", false, "send plantioContorno/terraceamento 0 for a talhão that does not declare them (default: its payload is held back, with the reason)")
	fs.StringVar(&c.crops, "crops", "", "declared crop history CSV, the table of manejo classify --crops ("+strings.Join(classify.CropsColumns, ",")+"): each season's straw is read with the residue of the crop that ended last before its sowing (docs/coverage.md)")
	fs.StringVar(&c.sowing, "sowing", "", "declared sowing dates CSV: field_id,season,sowing_date[,crop] (declared dates win over detection)")
	fs.BoolVar(&c.force, "force", false, "recompute even what a previous run or analysis with the same inputs committed")
	fs.BoolVar(&c.quiet, "quiet", false, "no progress: neither the terminal bar nor the JSON log lines (errors are still printed)")
	fs.Float64Var(&c.tp.K, "tillage-k", c.tp.K, "tillage break threshold in historical standard deviations (Portaria 349, 6.8)")
	fs.Float64Var(&c.tp.MinCellFraction, "tillage-min-cells", c.tp.MinCellFraction, "share of interior cells (points of a table) that must break for a talhão event")
	fs.Float64Var(&c.cp.MaxNDVI, "straw-max-ndvi", 0, "readings at or above this NDVI are left out of the straw reading (default 0.5 with the unmixing estimator, 0.3 with the NDTI ones; see docs/coverage.md)")
	fs.Float64Var(&c.cp.BareNDTI, "bare-ndti", 0, "NDTI of bare soil, 0 % straw (default: see README)")
	fs.Float64Var(&c.cp.StrawNDTI, "straw-ndti", 0, "NDTI of full straw cover, 100 % (default: see README)")
}

// contractDates are the parsed dates of the contract flags.
type contractDates struct {
	yearStart coverage.MonthDay
	season    coverage.Season // zero when --season is not given
	from      time.Time
	asOf      time.Time
}

// dates parses --agri-year-start, --season (when given), --from and --as-of.
func (c *contractFlags) dates() (contractDates, error) {
	var d contractDates
	var err error
	if d.yearStart, err = coverage.ParseMonthDay(c.agriStart); err != nil {
		return d, usagef("--agri-year-start: %v", err)
	}
	if c.season != "" {
		if d.season, err = coverage.ParseSeason(c.season, d.yearStart); err != nil {
			return d, usagef("--season: %v", err)
		}
	}
	if c.from != "" {
		if d.from, err = time.Parse(time.DateOnly, c.from); err != nil {
			return d, usagef("--from %q: want YYYY-MM-DD", c.from)
		}
	}
	if c.asOf != "" {
		if d.asOf, err = pipeline.ParseAsOf(c.asOf, time.Now()); err != nil {
			return d, usagef("--as-of %v", err)
		}
	}
	return d, nil
}
