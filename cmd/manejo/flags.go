package main

import (
	"context"
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/manejo/manejo/coverage"
	"github.com/manejo/manejo/grid"
	"github.com/manejo/manejo/pipeline"
	"github.com/manejo/manejo/storage"
)

// Checks of flag values shared by several commands. Each returns a usage
// error (exit 2): a value that parses as a number but means nothing (NaN,
// ±Inf, a negative distance) must never reach a run and be recorded as
// its parameters (issue 19 defect 12).

// finite is a usage error unless v is a finite number.
func finite(flag string, v float64) error {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return usagef("%s %g: want a finite number", flag, v)
	}
	return nil
}

// gridOptions checks --cell-ha and --edge-buffer-m and returns the grid
// options they give. --edge-buffer-m 0 means no buffer (grid.Options reads
// 0 as the default).
func gridOptions(cellHa, bufferM float64) (grid.Options, error) {
	switch {
	case math.IsNaN(cellHa) || cellHa != 0 && (cellHa < 1 || cellHa > 10):
		return grid.Options{}, usagef("--cell-ha %g: cells must be 1–5 ha (talhões under 100 ha) or 5–10 ha (from 100 ha); 0 = smallest legal size", cellHa)
	case math.IsNaN(bufferM) || math.IsInf(bufferM, 0) || bufferM < 0:
		return grid.Options{}, usagef("--edge-buffer-m %g: want a finite distance ≥ 0 in metres", bufferM)
	}
	o := grid.Options{CellHa: cellHa, EdgeBufferM: bufferM}
	if bufferM == 0 {
		o.EdgeBufferM = -1
	}
	return o, nil
}

// checkIDField refuses an --id-field whose values would be CPF/CNPJ: ids go into
// file names, run.json and Parquet.
func checkIDField(name string) error {
	if err := grid.CheckIDField(name); err != nil {
		return usagef("--id-field: %v", err)
	}
	return nil
}

// coverageFlags checks the straw-cover flags of run (--straw-max-ndvi,
// --bare-ndti, --straw-ndti) and then p as a whole (coverage.Params.Validate).
func coverageFlags(p coverage.Params) error {
	for _, f := range []struct {
		name string
		v    float64
	}{{"--straw-max-ndvi", p.MaxNDVI}, {"--bare-ndti", p.BareNDTI}, {"--straw-ndti", p.StrawNDTI}} {
		if err := finite(f.name, f.v); err != nil {
			return err
		}
	}
	if err := p.Validate(); err != nil {
		return usagef("straw cover parameters: %v", err)
	}
	return nil
}

// maxCellScenes checks --max-cell-scenes (run and analyse).
func maxCellScenes(n int) error {
	if n < -1 {
		return usagef("--max-cell-scenes %d: want a positive budget, 0 (the default) or -1 (no cap)", n)
	}
	return nil
}

// dateRange is a usage error when --from falls after --as-of (both given).
func dateRange(from, asOf time.Time) error {
	if !from.IsZero() && !asOf.IsZero() && from.After(asOf) {
		return usagef("--from %s is after --as-of %s: no scene could be read", from.Format(time.DateOnly), asOf.Format(time.DateOnly))
	}
	return nil
}

// checkRun checks the flags of run that the checks above cover and
// pipeline.Config.Validate does not (cmd_run.go calls it after Validate),
// and sets cfg.Grid.
func checkRun(cfg *pipeline.Config, cp coverage.Params) error {
	o, err := gridOptions(cfg.Grid.CellHa, cfg.Grid.EdgeBufferM)
	if err != nil {
		return err
	}
	cfg.Grid = o
	if err := coverageFlags(cp); err != nil {
		return err
	}
	return maxCellScenes(cfg.MaxCellScenes)
}

// schemeRE finds the scheme of a location written as a URL ("gs://b/x",
// and "ftp:/x" too): anything else is a local path.
var schemeRE = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9+.-]*):/`)

// writableLoc checks a location manejo writes (--out, --cache): a local
// path or s3://bucket/prefix. Any other scheme (gs://, ftp://, https://,
// file://) or a GDAL /vsi… path is a usage error before anything is
// created: written as a local path it would make a folder named "gs:".
func writableLoc(flag, loc string) error {
	m := schemeRE.FindStringSubmatch(loc)
	switch {
	case m == nil && strings.HasPrefix(loc, "/vsi"):
		return usagef("%s %s: GDAL virtual paths cannot be written: want a local folder or s3://bucket/prefix", flag, loc)
	case m == nil:
		return nil
	case strings.EqualFold(m[1], "s3"):
		if bucket, _, _ := strings.Cut(strings.TrimPrefix(loc, "s3://"), "/"); !strings.HasPrefix(loc, "s3://") || bucket == "" {
			return usagef("%s %s: want s3://bucket/prefix", flag, loc)
		}
		return nil
	}
	return usagef("%s %s: scheme %s is not supported here: want a local folder or s3://bucket/prefix", flag, loc, m[1])
}

// localLoc checks a location only written on the local disk (synth, slope):
// any URL scheme is a usage error.
func localLoc(flag, loc string) error {
	if m := schemeRE.FindStringSubmatch(loc); m != nil || strings.HasPrefix(loc, "/vsi") {
		return usagef("%s %s: want a local path", flag, loc)
	}
	return nil
}

// inputExists is a usage error when loc names no file or object (a typo,
// a file not copied): a configuration error, not a failure to retry. A
// store that cannot tell (network, permissions) is the run's error.
func inputExists(ctx context.Context, flag, loc string) error {
	ok, err := storage.Exists(ctx, loc)
	switch {
	case err != nil:
		return fmt.Errorf("%s %s: %w", flag, loc, err)
	case !ok:
		return usagef("%s %s: no such file", flag, loc)
	}
	return nil
}

// countFlags refuses a negative count (--workers -3): 0 means the default.
func countFlags(counts map[string]int) error {
	for _, name := range slices.Sorted(maps.Keys(counts)) {
		if counts[name] < 0 {
			return usagef("%s %d: want 0 (the default) or a positive number", name, counts[name])
		}
	}
	return nil
}
