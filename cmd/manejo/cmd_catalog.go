package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/manejo/manejo/pipeline"
	"github.com/manejo/manejo/series"
	"github.com/manejo/manejo/stacapi"
)

func init() {
	register(&command{name: "catalog", synopsis: "catalog search: search a STAC API and freeze the items as an ItemCollection for --catalog", run: runCatalog})
}

func runCatalog(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "search" {
		return usagef("usage: manejo catalog search --api URL --collections C [--fields F | --bbox W,S,E,N] --from D --to D --out items.json")
	}
	fs := newFlagSet("catalog search", "catalog search --api URL --collections C [--fields F | --bbox W,S,E,N] --from D --to D --out items.json\n\nThe footprint searched is that of the talhões of --fields, or --bbox", stderr)
	var cfg pipeline.FreezeConfig
	var cols stringList
	var bbox, from, to string
	fs.StringVar(&cfg.API, "api", "", "STAC API root URL (required)")
	fs.Var(&cols, "collections", "collections to search, comma-separated (default per API, see docs/stac-api.md)")
	talhoesFlags(fs, &cfg.Fields, &cfg.IDField)
	fs.StringVar(&bbox, "bbox", "", "footprint west,south,east,north in degrees (instead of --fields)")
	acquisitionFlags(fs, &from, &to)
	fs.StringVar(&cfg.Out, "out", "", "ItemCollection to write, local or s3:// (required)")
	if err := parseFlags(fs, args[1:]); err != nil {
		return err
	}
	if cfg.Out != "" {
		if err := writableLoc("--out", cfg.Out); err != nil {
			return err
		}
	}
	if cfg.API == "" || cfg.Out == "" {
		return usagef("--api and --out are required")
	}
	if (bbox == "") == (cfg.Fields == "") {
		return usagef("give one of --fields and --bbox")
	}
	var err error
	if bbox != "" {
		if cfg.BBox, err = parseBBox(bbox); err != nil {
			return err
		}
	}
	if cfg.From, cfg.To, err = seriesDates(from, to); err != nil {
		return err
	}
	cfg.Collections = cols
	res, err := pipeline.FreezeCatalog(ctx, cfg)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "matched %d, returned %d, duplicates %d, same acquisition %d, malformed %d, pages %d, retries %d: %d items written to %s\n",
		res.Matched, res.Returned, res.Duplicates, res.SameAcquisition, res.Malformed, res.Pages, res.Retries, res.Kept, cfg.Out)
	unreadable(stderr, res)
	return nil
}

// unreadable names the collections of a search that no sensor profile
// reads (sentinel-1-grd, sentinel-2-l1c): their items are frozen as asked,
// but a run skips them (no-profile) and computes nothing from them.
func unreadable(stderr io.Writer, res *stacapi.Result) {
	profiles := series.Profiles()
	n := map[string]int{}
	for _, it := range res.Items {
		if profiles[it.Collection] == nil {
			n[it.Collection]++
		}
	}
	for _, c := range slices.Sorted(maps.Keys(n)) {
		fmt.Fprintf(stderr, "manejo catalog search: collection %s has no sensor profile: manejo cannot read it (%d items kept in the file; a run skips them as no-profile)\n", c, n[c])
	}
}

// parseBBox parses west,south,east,north.
func parseBBox(s string) ([]float64, error) {
	parts := strings.Split(s, ",")
	if len(parts) != 4 {
		return nil, usagef("--bbox %q: want west,south,east,north", s)
	}
	b := make([]float64, 4)
	for i, p := range parts {
		v, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || v != v || v > 180 || v < -180 {
			return nil, usagef("--bbox %q: %q is not a longitude or latitude", s, p)
		}
		b[i] = v
	}
	if b[0] > b[2] || b[1] > b[3] {
		return nil, usagef("--bbox %q: west > east or south > north", s)
	}
	return b, nil
}
