package main

import (
	"flag"
	"strings"

	"github.com/manejo/manejo/grid"
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
