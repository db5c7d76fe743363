package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/manejo/manejo/sim/synth"
)

func init() {
	register(&command{name: "synth", synopsis: "write a synthetic Sentinel-2 archive (COGs, STAC, talhões, DEM) with ground truth", run: runSynth})
}

func runSynth(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("synth", "synth --out DIR [--seed N] [--talhoes N] [flags]", stderr)
	out := fs.String("out", "", "output directory (created if missing; required)")
	seed := fs.Int64("seed", 1, "random seed: the same seed gives byte-identical files")
	talhoes := fs.Int("talhoes", synth.DefaultFields, "number of talhões (the first 6 are designed, more are random)")
	start := fs.String("start", synth.DefaultStart.Format("2006-01-02"), "first acquisition date")
	end := fs.String("end", synth.DefaultEnd.Format("2006-01-02"), "last acquisition date (included)")
	revisit := fs.Int("revisit", synth.DefaultRevisitDays, "days between acquisitions")
	size := fs.Int("size", synth.DefaultSceneSizePx, "scene side in 10 m pixels (even, ≥ 384)")
	block := fs.Int("blocksize", synth.DefaultBlockSize, "COG tile size: 256 or 512")
	clouds := fs.Float64("cloud-scale", 1, "multiplier of the monthly cloud probabilities (negative: no clouds)")
	tiles := fs.Int("tiles", 0, "scenes side by side on the Sentinel-2 grid, --talhoes shared among them (0: one scene centred as before)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *out == "" {
		return usagef("--out is required")
	}
	if err := localLoc("--out", *out); err != nil {
		return err
	}
	o := synth.Options{Out: *out, Seed: *seed, Fields: *talhoes, RevisitDays: *revisit,
		SceneSizePx: *size, BlockSize: *block, CloudScale: *clouds, Tiles: *tiles}
	var err error
	if o.Start, err = time.Parse("2006-01-02", *start); err != nil {
		return usagef("--start: %v", err)
	}
	if o.End, err = time.Parse("2006-01-02", *end); err != nil {
		return usagef("--end: %v", err)
	}
	if *talhoes < 1 {
		return usagef("--talhoes %d: want at least 1", *talhoes)
	}
	t0 := time.Now()
	tr, err := synth.Generate(ctx, o)
	if errors.Is(err, synth.ErrOptions) { // bad --size, --blocksize, --talhoes...
		return usagef("%v", err)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "synth: %d items (%s..%s, every %d days), %d talhões, EPSG:%d, seed %d → %s in %.1fs\n",
		len(tr.Items), tr.Start.Format("2006-01-02"), tr.End.Format("2006-01-02"), tr.RevisitDays,
		len(tr.Fields), tr.EPSG, tr.Seed, *out, time.Since(t0).Seconds())
	return nil
}
