package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"runtime/debug"
	"time"

	"github.com/manejo/manejo/coverage"
	"github.com/manejo/manejo/export"
	"github.com/manejo/manejo/grid"
	"github.com/manejo/manejo/series"
	"github.com/manejo/manejo/sinm"
	"github.com/manejo/manejo/stacapi"
	"github.com/manejo/manejo/storage"
	"github.com/manejo/manejo/tillage"
)

// Config is everything a run needs. Fields, Catalog and Out are required;
// the zero value of every other field means its documented default.
type Config struct {
	Fields  string // talhões: GeoJSON or any OGR vector; local, s3:// or https://
	IDField string // property holding the talhão id; default "id"
	Catalog string // STAC ItemCollection, Item directory, NDJSON, or a STAC API root
	// Collections are searched when Catalog is a STAC API root; empty
	// means the API's defaults (stacapi.DefaultCollections).
	Collections []string
	// STAC searches API catalogs (nil: stacapi's defaults); Access applies
	// the archives' read rules to the items (nil: from the environment).
	STAC   *stacapi.Client
	Access *stacapi.Access
	DEM    string // elevation model for slope; "" leaves slope missing
	Sowing string // declared sowing dates CSV; "" = detect all
	// Crops is the declared crop history CSV (the table `manejo classify
	// --crops` reads): the residue of each season's straw; "" = none.
	Crops string
	Out   string // output folder, local or s3://bucket/prefix

	Season        coverage.Season   // contract agricultural year (--season)
	AgriYearStart coverage.MonthDay // agricultural-year boundary; default 07-01
	// From is the first scene date read; zero means HistoryYears
	// agricultural years before the contract year.
	From time.Time
	// AsOf is the reference date of T and the last scene date read; zero
	// means the day before the contract year starts.
	AsOf time.Time

	Codes   sinm.SatelliteCodes // collection → SINM code (--satellite-codes)
	Shard   Shard
	Workers int // talhões analysed at once and local scenes read at once; default GOMAXPROCS
	// IOConcurrency bounds the scenes read at once from an object store
	// or HTTP server (--io-concurrency), not their requests (up to 4 a
	// file at once, series.Options.IOConcurrency); default
	// series.DefaultIOConcurrency.
	IOConcurrency int
	// SceneAttempts and SceneRetryDelay are the retry budget of a scene
	// whose reads fail transiently (series.Options); zero means the default.
	SceneAttempts   int
	SceneRetryDelay time.Duration
	// RetryBudget bounds, per scene and per object store, how long reads
	// that keep failing transiently are retried before their talhões are
	// left incomplete for this run (--retry-budget; series.RetryBudget);
	// zero means series.DefaultRetryBudget.
	RetryBudget time.Duration
	// LeaseTTL is how long the shard's lease of Out stays valid without a
	// renewal (--lease-ttl): a retry of a killed run takes it over once it
	// has seen it unchanged that long. Zero means DefaultLeaseTTL.
	LeaseTTL  time.Duration
	BatchSize int // talhões per batch; default 64
	// BatchCellScenes bounds the cell × scene pairs of a batch (a talhão
	// over it is a batch alone), so that its memory (about 1.1 KB a pair)
	// is set by the settings whatever the talhões' size (cutBatches;
	// --batch-cell-scenes). 0 means DefaultBatchCellScenes; negative, the
	// count of talhões alone bounds a batch.
	BatchCellScenes int
	// BoundHeap sets the process's Go soft memory limit from the batches'
	// budget (boundHeap), unless GOMEMLIMIT is set, so that a batch's
	// peak follows its pairs rather than when the collector last ran.
	// It is process-wide while Run runs (the previous limit is restored
	// when it returns): manejo run sets it; a program running other work
	// or other Runs beside it should leave it off.
	BoundHeap bool
	// ShardBy is how talhões are assigned to shards: ShardBySpace (the
	// default: runs of the Hilbert order of their centres, balanced by
	// cells) or ShardByHash (FNV-1a of the id, the assignment before
	// issue 26).
	ShardBy string
	// ShardBlockPx is the side, in pixels, of the COG blocks of the
	// imagery that spatial shards are planned on (--shard-block-px;
	// blockShards): 0 means DefaultShardBlockPx; negative, the cut on the
	// tiling grid's lines alone (spatialShards, the assignment before
	// 2026-12-01's block search).
	ShardBlockPx int
	// ReadPass says whether a read pass reads, before the batches, every
	// scene the shard's talhões need once for all of them (readpass.go):
	// ReadPassAuto (the default: when the catalog's assets are remote),
	// ReadPassOn or ReadPassOff. It changes no output.
	ReadPass string
	// ReadCells bounds the cells of one group of the read pass
	// (talhões read together, in spatial order); default DefaultReadCells.
	ReadCells int
	// ReadPairs bounds the cell × scene pairs of one read of the read
	// pass (a group's scenes are read in date ranges that fit it); default
	// DefaultReadPairs.
	ReadPairs int
	// Phase is the phase of a two-phase sharded run with the block
	// exchange (exchange.go): PhaseAll (the default, one phase), PhaseRead
	// or PhaseFinish. It changes no output.
	Phase string
	// ExchangeWait bounds how long the finish phase waits for the other
	// shards' read phases (default DefaultExchangeWait).
	ExchangeWait time.Duration
	// ProgressEvery is how often progress is reported while a batch or
	// the read pass runs; default 10 s.
	ProgressEvery time.Duration
	Force         bool // recompute even what a previous run committed
	// Cache is the observation cache (--cache, a local folder or s3://
	// prefix): scenes it holds for a talhão are not read again (docs/cache.md).
	// "" reads everything. It does not change any output.
	Cache string

	// OperatorCNPJ is the CNPJ of the remote-sensing company producing the
	// run (--cnpj-empresa-sensoriamento), written as cnpjEmpresaSensoriamento
	// in every SINM payload; punctuation is allowed. "" leaves the property
	// out. An invalid one fails Run before any work, and Run never writes it
	// into a message: it is company data.
	OperatorCNPJ string
	// MaxCellScenes is the memory budget of one talhão, in cells × scenes
	// selected for it (about 1.1 KB each): a talhão over it fails before
	// any read. 0 means series.DefaultMaxCellScenes; negative, no cap
	// (--max-cell-scenes).
	MaxCellScenes int
	// UndeclaredPracticesAsZero sends plantioContorno/terraceamento 0 for a
	// talhão that does not declare them (--undeclared-practices-as-zero);
	// by default such a talhão's payload is held back (sinm.ErrUndeclared).
	UndeclaredPracticesAsZero bool

	Grid            grid.Options
	AllowHrefPrefix []string                   // asset hrefs must start with one of these (when given)
	SeriesProfiles  map[string]*series.Profile // collection → profile overrides
	// AllowMissingQA lists collections whose scenes are read without their
	// QA asset when they lack it (an NDVI-only cube): their observations
	// are flagged no-qa; other collections' scenes without QA are skipped.
	AllowMissingQA []string
	Tillage        tillage.Params // zero = tillage.DefaultParams()
	Coverage       coverage.Params

	Version  string    // manejo version, recorded in every output
	Progress io.Writer // human-readable log lines; nil = silent
	// Log, when set, receives the same messages as structured records.
	Log *slog.Logger
	// OnProgress, when set, is called when the computation starts, after
	// every batch and at the end (see Progress, Bar, LogProgress). Without
	// it, every batch also writes a line to Progress.
	OnProgress func(Progress)
	// callTimeout bounds the reads of the talhões file and the DEM
	// (callDeadline); 0 means storage.CallTimeout. Tests shorten it.
	callTimeout time.Duration
}

// callDeadline is the bound of one read of an input GDAL or the file
// system may block in (storage.CallTimeout unless callTimeout is set).
func (c Config) callDeadline() time.Duration {
	if c.callTimeout > 0 {
		return c.callTimeout
	}
	return storage.CallTimeout
}

// ErrOperatorCNPJ is Run's error for a Config.OperatorCNPJ that is not a
// valid CNPJ. It does not repeat the value.
var ErrOperatorCNPJ = errors.New("the operator CNPJ (cnpjEmpresaSensoriamento) is not a valid CNPJ: 14 digits with valid check digits")

// HistoryYears is how far back a run reads scenes by default: T reaches
// level 4 only after 8 full years without revolving (Tabela 1).
const HistoryYears = 9

// Summary counts the talhões of a run by status.
type Summary struct {
	Total, OK, Partial, Failed, Skipped int
	// Incomplete talhões lack scenes that still failed transiently: no
	// rows, no payload; the next run with the same inputs retries them.
	Incomplete int
	Resumed    int // batches taken from a previous run
	Payloads   int // SINM payloads published
	Manifest   string
	RunID      string
	// Failures are the first failed or partial talhões (ids and reasons,
	// never CPF/CNPJ), failed ones first; run.json has them all.
	Failures []export.Failure
}

// MaxSummaryFailures caps Summary.Failures.
const MaxSummaryFailures = 5

func (c *Config) defaults() error {
	if err := c.Validate(); err != nil {
		return err
	}
	if c.IDField == "" {
		c.IDField = "id"
	}
	if c.Shard.Count == 0 {
		c.Shard = All
	}
	if c.Workers <= 0 {
		c.Workers = runtime.GOMAXPROCS(0)
	}
	if c.BatchSize <= 0 {
		c.BatchSize = 64
	}
	c.readDefaults()
	c.AsOf = c.AsOfOrDefault()
	if c.From.IsZero() {
		c.From = c.Season.Start.AddDate(-HistoryYears, 0, 0)
	}
	if c.Tillage == (tillage.Params{}) {
		c.Tillage = tillage.DefaultParams()
	}
	if err := c.allowMissingQA(); err != nil {
		return err
	}
	if c.OperatorCNPJ != "" {
		c.OperatorCNPJ, _ = sinm.NormalizeCNPJ(c.OperatorCNPJ) // valid: Validate checked it
	}
	return nil
}

// Run processes the talhões of cfg.Shard and writes the datasets, the SINM
// payloads and the manifest. A talhão that fails is recorded with its reason
// and the run goes on; Run returns an error only when the run itself cannot
// go on (unreadable talhões file or catalog, cancelled context, output not
// writable).
func Run(ctx context.Context, cfg Config) (Summary, error) {
	start := time.Now()
	if err := cfg.defaults(); err != nil {
		return Summary{}, err
	}
	storage.SetGDALEnv()
	storage.ClearRangeCache()
	if cfg.Phase == PhaseRead {
		return runReadPhase(ctx, cfg, start)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	r, lk, err := beginRun(ctx, cfg, start, cancel)
	if err != nil {
		return Summary{}, err
	}
	defer lk.release()
	sum, err := r.run(ctx)
	return sum, leaseCause(ctx, err)
}

// run is Run once the lease is held.
func (r *run) run(ctx context.Context) (Summary, error) {
	cfg := r.cfg
	runID := r.m.RunID
	owned, err := r.open(ctx)
	r.keys, r.keysOut = keysFile(cfg.Shard, owned)
	defer r.closeDEM()
	if err != nil {
		return Summary{}, err
	}
	if prev, done := r.previous(ctx); done {
		return prev, nil
	}
	st := newStage(r.in, runID)
	st.min = r.min
	defer func() { st.spill.close() }()
	batches, most := cutBatches(owned, cfg, r.in.cat)
	nb := len(batches)
	if limit, prev := boundHeap(cfg, most); limit > 0 {
		defer debug.SetMemoryLimit(prev)
		r.logf("Go heap bounded at %d MiB (%d B per pair of a batch; GOMEMLIMIT overrides)", limit>>20, PairHeapBytes)
	}
	if storage.KindOf(cfg.Out) == storage.Local {
		removeStaleTemps(cfg.Out, cfg.Shard, owned)
	}
	r.tr = newTracker(r.start, Progress{Shard: cfg.Shard, Phase: "start", Batches: nb, Total: len(owned), Failed: r.m.Status.Failed})
	r.progress()
	stop := r.tickProgress()
	defer stop()
	if err := r.readFirst(ctx, st, batches); err != nil {
		return Summary{}, err
	}
	sum, err := r.batches(ctx, st, batches, len(owned))
	if err != nil {
		return sum, err
	}
	return r.finish(ctx, st, nb, sum)
}

// closeDEM closes the DEM once the run is over (not one a stuck read may
// still hold).
func (r *run) closeDEM() {
	if r.in != nil && r.in.dem != nil && !r.in.demStuck.Load() {
		r.in.dem.Close()
	}
}

// readFirst reads ahead of the batches: the hand-over of the other
// shards' read phases in the finish phase, else the read pass.
func (r *run) readFirst(ctx context.Context, st *stage, batches [][]grid.Field) error {
	if r.cfg.Phase == PhaseFinish {
		return r.takeHandover(ctx, st, batches)
	}
	return r.readAhead(ctx, st, batches)
}

// run is the state of one Run: its configuration, inputs, manifest and
// progress.
type run struct {
	cfg         Config
	start       time.Time
	m           *runManifest
	manifestLoc string
	in          *inputs
	tr          *tracker
	// prev is the manifest a previous run left in the folder (nil when
	// none): its outputs are what this run may replace or remove.
	prev *runManifest
	// payloads are the staged payloads of each batch, in batch order.
	payloads [][]export.Output
	// frozen is the ItemCollection of a STAC API search's items
	// (catalog/items.json), nil for a static catalog.
	frozen *frozenCatalog
	// keys is the shard's file of SINM keys (keysFile), nil when no talhão
	// declares one; keysOut its record.
	keys    []byte
	keysOut export.Output
	// sizes are the input files' sizes for run.json, read in the
	// background (startSizes); nil before open has started them.
	sizes *later[map[string]int64]
	// min records the tiles the run's remote reads need: the least they
	// could have fetched (run.json io min_bytes).
	min *series.Minimum
	// others are the talhões of the input another shard owns (owned):
	// their payloads are not this shard's to remove.
	others map[string]bool
	// all are the readable talhões of every shard and shardOf their shard
	// (owned): what the exchange plans on.
	all     []grid.Field
	shardOf func(string) int
	// givenUp are the scenes a read phase could not read (item id → why;
	// nil outside a read phase: noteGivenUp).
	givenUp map[string]string
}

// logf writes a message to Progress and Log, when set.
func (r *run) logf(format string, a ...any) {
	if r.cfg.Progress != nil {
		fmt.Fprintf(r.cfg.Progress, "[shard %s] "+format+"\n", append([]any{r.cfg.Shard}, a...)...)
	}
	if r.cfg.Log != nil {
		r.cfg.Log.Info(fmt.Sprintf(format, a...), slog.String("shard", r.cfg.Shard.String()))
	}
}

// progress reports a snapshot to OnProgress, when set.
func (r *run) progress() {
	if r.cfg.OnProgress != nil {
		r.cfg.OnProgress(r.tr.snapshot())
	}
}

// batches computes (or resumes) the batches (cutBatches) of the shard's
// total talhões, in order.
func (r *run) batches(ctx context.Context, st *stage, batches [][]grid.Field, total int) (Summary, error) {
	cfg, m := r.cfg, r.m
	var sum Summary
	nb := len(batches)
	for b, batch := range batches {
		if err := ctx.Err(); err != nil {
			return sum, fmt.Errorf("run cancelled after %d of %d batches: %w", b, nb, err)
		}
		tb := time.Now()
		r.tr.mu.Lock()
		r.tr.p.Phase, r.tr.since = "batch", tb
		r.tr.mu.Unlock()
		res, resumed, err := st.batch(ctx, b, batch)
		if err != nil {
			return sum, err
		}
		if resumed {
			sum.Resumed++
		}
		r.payloads = append(r.payloads, res.Payloads)
		// The batch's rows are garbage: hand its heap back before the next
		// batch reads scenes, so a run of many batches peaks like a run of
		// one (issue 15 memory).
		storage.ReleaseMemory()
		tr := r.tr
		tr.mu.Lock()
		m.merge(res)
		tr.p.Phase = "batch"
		tr.p.OK, tr.p.Partial, tr.p.Failed = m.Status.OK, m.Status.Partial, m.Status.Failed
		tr.p.ScenesRead, tr.p.Observations = m.Counts["scenes_read"], m.Counts["observations"]
		tr.p.Incomplete = m.Status.Incomplete
		tr.batch(len(batch), time.Since(tb), resumed)
		p := tr.p
		tr.mu.Unlock()
		if cfg.OnProgress != nil {
			cfg.OnProgress(p)
		} else {
			note := ""
			if resumed {
				note = " [resumed]"
			}
			r.logf("batch %d/%d: %d/%d talhões (ok %d, partial %d, failed %d, incomplete %d)%s, %.1f talhões/s, %.1f MB/s read, eta %s",
				b+1, nb, p.Done, total, m.Status.OK, m.Status.Partial, m.Status.Failed, m.Status.Incomplete,
				note, p.Rate, p.MBps, p.ETA)
		}
	}
	return sum, nil
}

// finish publishes the part files and payloads, removes what an earlier
// run published that this one does not, writes the manifest and removes
// the staging files. Before it publishes anything it rewrites the manifest
// as incomplete, listing the earlier outputs and the new ones, so a run
// killed while publishing never leaves a complete run.json beside a mix
// of old and new files, and the next run still knows what manejo wrote.
func (r *run) finish(ctx context.Context, st *stage, nb int, sum Summary) (Summary, error) {
	m := r.m
	t0 := time.Now()
	var payloads, prevOuts []export.Output
	for _, ps := range r.payloads {
		for _, p := range ps {
			p.RunID = m.RunID // the run that publishes it, even when resumed from staging
			payloads = append(payloads, p)
		}
	}
	if r.prev != nil {
		prevOuts = r.prev.Outputs
	}
	npayloads := len(payloads)
	if r.keys != nil {
		payloads = append(payloads, r.keysOut)
	}
	m.Outputs = outputsUnion(payloads, prevOuts)
	r.recordSizes()
	r.recordMinimum()
	if err := m.write(ctx, r.manifestLoc); err != nil {
		return sum, err
	}
	parts, err := st.publish(ctx, nb, m.Counts)
	if err != nil {
		return sum, err
	}
	if err := st.publishPayloads(ctx, r.payloads); err != nil {
		return sum, err
	}
	frozen, err := r.publishFrozen(ctx)
	if err != nil {
		return sum, err
	}
	if err := r.publishKeys(ctx); err != nil {
		return sum, err
	}
	m.Outputs = append(append(parts, payloads...), frozen...)
	for _, p := range removeStale(ctx, r.cfg.Out, prevOuts, m.Outputs, r.others) {
		m.Warnings = append(m.Warnings, fmt.Sprintf("removed %s: an earlier run wrote it and this run does not", p))
	}
	m.Record("publish", time.Since(t0))
	m.Record("total", time.Since(r.start))
	m.Status.Total = m.Status.OK + m.Status.Partial + m.Status.Failed + m.Status.Incomplete
	m.Counts["talhoes_ok"], m.Counts["talhoes_partial"], m.Counts["talhoes_failed"] = int64(m.Status.OK), int64(m.Status.Partial), int64(m.Status.Failed)
	if m.Status.Incomplete > 0 {
		m.Counts["talhoes_incomplete"] = int64(m.Status.Incomplete)
	}
	m.FinishedAt = time.Now().UTC()
	m.Complete = true
	if err := m.write(ctx, r.manifestLoc); err != nil {
		return sum, err
	}
	st.cleanup(ctx, nb)
	sum.Total, sum.OK, sum.Partial, sum.Failed, sum.Incomplete = m.Status.Total, m.Status.OK, m.Status.Partial, m.Status.Failed, m.Status.Incomplete
	sum.Manifest, sum.RunID, sum.Payloads, sum.Failures = r.manifestLoc, m.RunID, npayloads, firstFailures(m.Failures)
	r.tr.mu.Lock()
	r.tr.p.Phase = "done"
	r.tr.p.OK, r.tr.p.Partial, r.tr.p.Failed = m.Status.OK, m.Status.Partial, m.Status.Failed
	r.tr.mu.Unlock()
	r.progress()
	r.logf("done: %d talhões (ok %d, partial %d, failed %d, incomplete %d) in %s; manifest %s",
		sum.Total, sum.OK, sum.Partial, sum.Failed, sum.Incomplete, time.Since(r.start).Round(time.Millisecond), r.manifestLoc)
	return sum, nil
}

// beginRun opens a run into cfg.Out: the folder is refused unless it is
// empty or a manejo output, this shard's lease is taken under a new run id
// (the caller releases it; lost cancels ctx when the lease is lost), and
// the run's manifest is started.
func beginRun(ctx context.Context, cfg Config, start time.Time, lost context.CancelCauseFunc) (*run, *lease, error) {
	if err := checkFolder(ctx, cfg.Out); err != nil {
		return nil, nil, err
	}
	runID := newRunID(start)
	r := &run{cfg: cfg, start: start, m: newManifest(cfg, start, runID), manifestLoc: storage.Join(cfg.Out, manifestName(cfg.Shard)), min: series.NewMinimum()}
	lt := leaseTimesOf(cfg.LeaseTTL)
	lk, err := acquireLease(ctx, cfg.Out, cfg.Shard, runID, lt, func(held leaseInfo) {
		r.logf("waiting for the lease %s: held by run %s (host %s, renewed at %s); taken over if it stays unchanged for %s",
			lockName(cfg.Shard), held.RunID, held.Host, held.Heartbeat.Format(time.RFC3339), held.ttl(lt.ttl))
	}, lost)
	if err != nil {
		return nil, nil, err
	}
	if lk.from != nil {
		r.logf("took over the lease %s of run %s (host %s, last renewed at %s): it stopped renewing it",
			lockName(cfg.Shard), lk.from.RunID, lk.from.Host, lk.from.Heartbeat.Format(time.RFC3339))
	}
	return r, lk, nil
}

// leaseCause returns the lease's loss as the error of a run it stopped,
// else err.
func leaseCause(ctx context.Context, err error) error {
	if c := context.Cause(ctx); err != nil && errors.Is(c, ErrLeaseLost) {
		return c
	}
	return err
}
