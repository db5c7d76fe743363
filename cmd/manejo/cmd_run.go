package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/manejo/manejo/export"
	"github.com/manejo/manejo/pipeline"
	"github.com/manejo/manejo/series"
	"github.com/manejo/manejo/sinm"
	"github.com/manejo/manejo/stacapi"
	"github.com/manejo/manejo/storage"
	"github.com/manejo/manejo/tillage"
)

func init() {
	register(&command{name: "run", synopsis: "run the whole pipeline over a portfolio of talhões (grid → series → T, C, slope → outputs)", run: runRun})
}

// runFlags are the flags of manejo run.
type runFlags struct {
	contractFlags
	cfg                      pipeline.Config
	shard                    string
	shards                   int
	allow, collections, noQA stringList
}

// define declares the flags on fs.
func (f *runFlags) define(fs *flag.FlagSet) {
	talhoesFlags(fs, &f.cfg.Fields, &f.cfg.IDField)
	catalogFlags(fs, &f.cfg.Catalog, &f.collections)
	readRuleFlags(fs, &f.allow, &f.noQA)
	demFlag(fs, &f.cfg.DEM)
	f.contractFlags.define(fs)
	fs.StringVar(&f.cfg.Out, "out", "", "output folder, local or s3://bucket/prefix (required)")
	fs.StringVar(&f.shard, "shard", "", "this process's shard, i/n (default: AWS_BATCH_JOB_ARRAY_INDEX or JOB_COMPLETION_INDEX with --shards)")
	fs.IntVar(&f.shards, "shards", 0, "number of shards when the index comes from AWS Batch or a Kubernetes Indexed Job")
	fs.StringVar(&f.cfg.ShardBy, "shard-by", pipeline.ShardBySpace, "how talhões are assigned to shards: space (neighbours together, balanced by cells) or hash (FNV-1a of the id, the assignment before issue 26)")
	fs.IntVar(&f.cfg.ShardBlockPx, "shard-block-px", pipeline.DefaultShardBlockPx, "side in pixels of the imagery's COG blocks that spatial shards are planned on (1024: Sentinel-2 L2A COGs); -1: cut on the tiling grid's lines alone, the assignment before the block search (docs/deploy.md)")
	fs.StringVar(&f.cfg.ReadPass, "read-pass", pipeline.ReadPassAuto, "read each scene once for neighbouring talhões before the batches: auto (when the imagery is remote), on or off; outputs are unchanged (docs/performance.md)")
	fs.StringVar(&f.cfg.Phase, "phase", pipeline.PhaseAll, "two-phase sharded run with the block exchange: read (read the scenes this shard owns for every talhão, hand them over under --out/_exchange/) or finish (wait for every shard's read phase, then compute this shard's talhões); empty: one phase (docs/deploy.md)")
	fs.DurationVar(&f.cfg.ExchangeWait, "exchange-wait", pipeline.DefaultExchangeWait, "how long --phase finish waits for the read phases of all shards before it stops (exit 1) naming the missing ones")
	fs.IntVar(&f.cfg.ReadCells, "read-cells", pipeline.DefaultReadCells, "cells of one group of the read pass: larger groups read fewer tiles twice and hold more in flight")
	fs.IntVar(&f.cfg.ReadPairs, "read-pairs", pipeline.DefaultReadPairs, "cell × scene pairs of one read of the read pass (a group's scenes are read in date ranges that fit)")
	workersFlag(fs, &f.cfg.Workers)
	fs.IntVar(&f.cfg.IOConcurrency, "io-concurrency", series.DefaultIOConcurrency, "scenes read at once from an object store or HTTP server (each mostly waits for the network, and sends up to 4 range requests per file at once; local files are read --workers at a time)")
	fs.DurationVar(&f.cfg.RetryBudget, "retry-budget", series.DefaultRetryBudget, "how long reads of a scene (or of a whole bucket or host) that keep failing transiently are retried, from their first failure; then its talhões end incomplete for this run, no payload, exit 4, read again by the next run (docs/deploy.md)")
	fs.DurationVar(&f.cfg.LeaseTTL, "lease-ttl", pipeline.DefaultLeaseTTL, "the shard's lease of --out is renewed every TTL/6; a retry of a killed run (any host) takes it over after seeing it unchanged this long, and waits up to 2×TTL for a live one (docs/deploy.md)")
	fs.IntVar(&f.cfg.BatchSize, "batch-size", 64, "talhões per batch: peak memory grows with it, not with the portfolio")
	fs.IntVar(&f.cfg.BatchCellScenes, "batch-cell-scenes", 0, fmt.Sprintf("cell × scene pairs of one batch at most (about 1.1 KB each at its peak; the Go heap is held to 1 KiB a pair unless GOMEMLIMIT is set), so large talhões make smaller batches; a talhão over it is a batch alone; 0 = %d, -1 = only --batch-size bounds a batch", pipeline.DefaultBatchCellScenes))
	fs.IntVar(&f.cfg.MaxCellScenes, "max-cell-scenes", 0, fmt.Sprintf("memory budget of one talhão in cells × scenes (about 1.1 KB each): a talhão over it fails unread with the reason; 0 = %d (about 4.4 GB), -1 = no cap", series.DefaultMaxCellScenes))
	fs.StringVar(&f.cfg.Cache, "cache", "", "observation cache, local folder or s3://bucket/prefix/: scenes it holds for a talhão are not read again; outputs are unchanged (docs/cache.md)")
	fs.Float64Var(&f.cfg.Grid.CellHa, "cell-ha", 0, "cell area in ha inside the legal class (IN 6.2: 1–5 below 100 ha, 5–10 from 100 ha); 0 = smallest legal")
	fs.Float64Var(&f.cfg.Grid.EdgeBufferM, "edge-buffer-m", 15, "minimum distance in metres from a cell centre to the talhão border")
}

// checkPlaces checks the flags that name places before the run creates
// anything: where it writes (--out, --cache), --shards, the href rules, --collections against the catalog and
// the --sowing file. Each is a usage error (exit 2).
func (f *runFlags) checkPlaces(ctx context.Context) error {
	cfg := &f.cfg
	if err := writableLoc("--out", cfg.Out); err != nil {
		return err
	}
	if cfg.Cache != "" {
		if err := writableLoc("--cache", cfg.Cache); err != nil {
			return err
		}
	}
	if err := countFlags(map[string]int{"--shards": f.shards}); err != nil {
		return err
	}
	if err := series.CheckHrefPrefixes(f.allow); err != nil {
		return usagef("%v", err)
	}
	if err := staticCollections(cfg.Catalog, f.collections); err != nil {
		return err
	}
	if cfg.Sowing != "" {
		return inputExists(ctx, "--sowing", cfg.Sowing)
	}
	return nil
}

// staticCollections refuses --collections with a catalog that cannot be a
// STAC API root (a file, a folder, s3://): only a search reads them, and a
// static catalog would silently ignore them.
func staticCollections(catalog string, collections []string) error {
	if len(collections) > 0 && !stacapi.MaybeAPI(catalog) {
		return usagef("--collections %s: --catalog %s is a static catalog, not a STAC API root; --collections only selects what a search reads (drop it, or filter the catalog)", strings.Join(collections, ","), catalog)
	}
	return nil
}

// operatorCNPJEnv is the environment variable that gives
// --cnpj-empresa-sensoriamento its default (one operator, many runs).
const operatorCNPJEnv = "MANEJO_CNPJ_EMPRESA_SENSORIAMENTO"

// checkOperatorCNPJ refuses a --cnpj-empresa-sensoriamento (or its
// environment default) that is not a valid CNPJ; empty is allowed. Company
// data: the message does not repeat the value.
func checkOperatorCNPJ(v string) error {
	if v == "" {
		return nil
	}
	if _, ok := sinm.NormalizeCNPJ(v); !ok {
		return badOperatorCNPJ()
	}
	return nil
}

func badOperatorCNPJ() error {
	return usagef("--cnpj-empresa-sensoriamento (or $%s) is not a valid CNPJ (14 digits with valid check digits)", operatorCNPJEnv)
}

// configUsage is the usage error (exit 2) of a pipeline.Config.Validate
// error; the operator's CNPJ is named with its environment default.
func configUsage(err error) error {
	if errors.Is(err, pipeline.ErrOperatorCNPJ) {
		return badOperatorCNPJ()
	}
	return usagef("%v", err)
}

// config checks the flags and turns them into the run's configuration.
func (f *runFlags) config(ctx context.Context) (pipeline.Config, error) {
	f.cfg.Crops, f.cfg.Sowing, f.cfg.OperatorCNPJ = f.crops, f.sowing, f.cnpj
	f.cfg.UndeclaredPracticesAsZero, f.cfg.Force = f.undeclaredAsZero, f.force
	f.cfg.BoundHeap = true // the process is the run's: its Go heap follows the batches' budget
	cfg := f.cfg
	d, err := f.dates() // no --season: Validate names it, after the inputs before it
	if err != nil {
		return cfg, err
	}
	cfg.AgriYearStart, cfg.Season, cfg.From, cfg.AsOf = d.yearStart, d.season, d.from, d.asOf
	if f.codes != "" || f.codesFile != "" { // none: Validate names them
		if cfg.Codes, err = loadCodes(ctx, f.codes, f.codesFile); err != nil {
			return cfg, err
		}
	}
	if err := cfg.Validate(); err != nil { // required inputs, counts, dates, --id-field, codes, CNPJ
		return cfg, configUsage(err)
	}
	if err := checkRun(&cfg, f.cp); err != nil { // flags.go: NaN/Inf/negative
		return cfg, err
	}
	if err := f.checkPlaces(ctx); err != nil {
		return cfg, err
	}
	if cfg.RetryBudget <= 0 {
		return cfg, usagef("--retry-budget %s: want a positive duration", cfg.RetryBudget)
	}
	if cfg.LeaseTTL < time.Second {
		return cfg, usagef("--lease-ttl %s: want at least 1s", cfg.LeaseTTL)
	}
	if cfg.Shard, _, err = pipeline.ShardFromEnv(f.shard, f.shards, nil); err != nil {
		return cfg, usagef("%v", err)
	}
	if err := f.tp.Validate(); err != nil {
		return cfg, usagef("tillage parameters: %v", err)
	}
	cfg.Tillage, cfg.Coverage = f.tp, f.cp
	cfg.AllowHrefPrefix, cfg.Collections, cfg.AllowMissingQA = f.allow, f.collections, f.noQA
	cfg.Version = version
	return cfg, nil
}

func runRun(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("run", "run --fields F --catalog C --season 2026/2027 --satellite-codes K=S0n,... --out DIR [--dem D] [flags]\n\n--fields, --catalog, --season, the satellite codes and --out are required; without --dem slope is missing", stderr)
	f := runFlags{contractFlags: contractFlags{tp: tillage.DefaultParams()}}
	f.define(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	cfg, err := f.config(ctx)
	if err != nil {
		return err
	}
	if !f.quiet {
		if isTerminal(stderr) {
			// A live one-line bar; log lines print above it.
			bar := pipeline.NewBar(stderr)
			defer bar.Close()
			cfg.Progress, cfg.OnProgress = bar, bar.Update
		} else {
			// Batch jobs, CI, files: one JSON object per line.
			l := slog.New(slog.NewJSONHandler(stderr, nil))
			cfg.Log, cfg.OnProgress = l, pipeline.LogProgress(l)
		}
	}

	sum, err := pipeline.Run(ctx, cfg)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("interrupted: committed batches are kept in %s/_staging and the next run with the same inputs resumes from them: %w", cfg.Out, err)
		}
		if errors.Is(err, pipeline.ErrConfig) {
			return usagef("%v", err)
		}
		return err
	}
	if cfg.Phase == pipeline.PhaseRead {
		fmt.Fprintf(stdout, "read phase of shard %s done; marker %s\n", cfg.Shard, sum.Manifest)
		return nil
	}
	fmt.Fprintf(stdout, "%s (partial: an indicator missing, with its reason; incomplete: scenes still failing transiently, run again); %d SINM payload(s); manifest %s\n",
		statusCounts(sumCounts(sum)), sum.Payloads, sum.Manifest)
	return runOutcome(sum, cfg.Out, stderr)
}

// sumCounts are a run's talhões by status.
func sumCounts(sum pipeline.Summary) map[string]int {
	return map[string]int{export.StatusOK: sum.OK, export.StatusPartial: sum.Partial,
		export.StatusFailed: sum.Failed, export.StatusIncomplete: sum.Incomplete}
}

// runOutcome names the first talhões that are not ok on stderr (ids and
// reasons, which never hold CPF/CNPJ), with the inspect command listing
// each status that occurred, and turns a run with incomplete talhões into
// exit 4 (a later run can complete them, whatever else failed) and one
// with failed talhões, or without a single payload, into exit 3.
func runOutcome(sum pipeline.Summary, out string, stderr io.Writer) error {
	if sum.Failed == 0 && sum.Incomplete == 0 && sum.Payloads > 0 {
		return nil
	}
	if len(sum.Failures) > 0 {
		fmt.Fprintf(stderr, "first talhões not ok:\n")
		for _, f := range sum.Failures {
			fmt.Fprintf(stderr, "  %s (%s): %s\n", printable(f.FieldID), f.Status, f.Reason)
		}
	}
	counts := sumCounts(sum)
	for _, st := range []string{export.StatusFailed, export.StatusIncomplete, export.StatusPartial} {
		if counts[st] > 0 {
			fmt.Fprintf(stderr, "every %s one: manejo inspect %s --status %s\n", st, out, st)
		}
	}
	if sum.Incomplete > 0 {
		return incompleteError{fmt.Sprintf("%d of %d talhões incomplete (a transient fault outlasted the retries; run again later to complete them); %s",
			sum.Incomplete, sum.Total, statusCounts(counts))}
	}
	if sum.Payloads == 0 {
		return finished("no talhão got a SINM payload; %s", statusCounts(counts))
	}
	return finished("%d of %d talhões failed; %s", sum.Failed, sum.Total, statusCounts(counts))
}

// printable quotes an id holding control or format characters, so an id
// cannot rewrite the terminal.
func printable(id string) string {
	for _, r := range id {
		if !unicode.IsPrint(r) {
			return strconv.QuoteToASCII(id)
		}
	}
	return id
}

// loadCodes builds the satellite-code mapping from a file and the flag.
func loadCodes(ctx context.Context, flagValue, file string) (sinm.SatelliteCodes, error) {
	codes := sinm.SatelliteCodes{}
	if file != "" {
		r, err := storage.Open(ctx, file)
		if errors.Is(err, storage.ErrNotExist) {
			return nil, usagef("--satellite-codes-file %s: no such file", file)
		}
		if err != nil {
			return nil, fmt.Errorf("read satellite codes: %w", err)
		}
		defer r.Close()
		if codes, err = sinm.LoadSatelliteCodes(r); err != nil {
			return nil, usagef("--satellite-codes-file %s: %v", file, err)
		}
	}
	if flagValue != "" {
		c, err := sinm.ParseSatelliteCodes(flagValue)
		if err != nil {
			return nil, usagef("--satellite-codes: %v", err)
		}
		for k, v := range c {
			codes[k] = v
		}
	}
	if len(codes) == 0 {
		return nil, usagef("satellite codes are required: SINM's catalogue is not public, so say which code each collection has (--satellite-codes 'sentinel-2-l2a=S01,dem=S09')")
	}
	return codes, nil
}

// isTerminal reports whether w is a character device (an interactive
// terminal), where a redrawn progress bar makes sense.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
