package pipeline

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/manejo/manejo/coverage"
	"github.com/manejo/manejo/export"
	"github.com/manejo/manejo/grid"
	"github.com/manejo/manejo/series"
	"github.com/manejo/manejo/slope"
	"github.com/manejo/manejo/storage"
	"github.com/manejo/manejo/tillage"
)

// Config is everything a run needs. Fields, Catalog and Out are required;
// the zero value of every other field means its documented default.
type Config struct {
	Fields  string // talhões: GeoJSON or any OGR vector; local, s3:// or https://
	IDField string // property holding the talhão id; default "id"
	Catalog string // STAC ItemCollection, Item directory or NDJSON
	DEM     string // elevation model for slope; "" leaves slope missing
	Sowing  string // declared sowing dates CSV; "" = detect all
	Out     string // output folder, local or s3://bucket/prefix

	Season        coverage.Season   // contract agricultural year (--season)
	AgriYearStart coverage.MonthDay // agricultural-year boundary; default 07-01
	// From is the first scene date read; zero means HistoryYears
	// agricultural years before the contract year.
	From time.Time
	// AsOf is the reference date of T and the last scene date read; zero
	// means the day before the contract year starts.
	AsOf time.Time

	Codes     export.SatelliteCodes // collection → SINM code (--satellite-codes)
	Shard     Shard
	Workers   int  // talhões analysed at once and scenes read at once; default GOMAXPROCS
	BatchSize int  // talhões per batch; default 64
	Force     bool // recompute even what a previous run committed

	Grid            grid.Options
	AllowHrefPrefix []string                   // asset hrefs must start with one of these (when given)
	SeriesProfiles  map[string]*series.Profile // collection → profile overrides
	Tillage         tillage.Params             // zero = tillage.DefaultParams()
	Coverage        coverage.Params

	Version  string    // manejo version, recorded in every output
	Progress io.Writer // human-readable log lines; nil = silent
	// Log, when set, receives the same messages as structured records.
	Log *slog.Logger
	// OnProgress, when set, is called when the computation starts, after
	// every batch and at the end (see Progress, Bar, LogProgress). Without
	// it, every batch also writes a line to Progress.
	OnProgress func(Progress)
}

// HistoryYears is how far back a run reads scenes by default: T reaches
// level 4 only after 8 full years without revolving (Tabela 1).
const HistoryYears = 9

// Summary counts the talhões of a run by status.
type Summary struct {
	Total, OK, Partial, Failed, Skipped int
	Resumed                             int // batches taken from a previous run
	Manifest                            string
}

func (c *Config) defaults() error {
	if c.Fields == "" || c.Catalog == "" || c.Out == "" {
		return errors.New("fields, catalog and out are required")
	}
	if c.Season.Label == "" {
		return errors.New("the contract season is required (e.g. 2026/2027)")
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
	if c.AsOf.IsZero() {
		c.AsOf = c.Season.Start.AddDate(0, 0, -1)
	}
	if c.From.IsZero() {
		c.From = c.Season.Start.AddDate(-HistoryYears, 0, 0)
	}
	if c.Tillage == (tillage.Params{}) {
		c.Tillage = tillage.DefaultParams()
	}
	if c.Codes == nil {
		return errors.New("satellite codes are required (--satellite-codes)")
	}
	return nil
}

// inputs holds what every batch shares.
type inputs struct {
	cfg      Config
	cat      *series.Catalog
	dem      *slope.DEM
	declared coverage.Declarations
	finger   map[string]string // input location → sha256 or description
	roles    map[string]string // input location → role (fields, catalog, ...)
	params   string            // hash of the parameters that shape the results
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
	m := newManifest(cfg, start)
	logf := func(format string, a ...any) {
		if cfg.Progress != nil {
			fmt.Fprintf(cfg.Progress, "[shard %s] "+format+"\n", append([]any{cfg.Shard}, a...)...)
		}
		if cfg.Log != nil {
			cfg.Log.Info(fmt.Sprintf(format, a...), slog.String("shard", cfg.Shard.String()))
		}
	}
	manifestLoc := storage.Join(cfg.Out, manifestName(cfg.Shard))

	in := &inputs{cfg: cfg, finger: map[string]string{}, roles: map[string]string{
		cfg.Fields: "fields", cfg.Catalog: "catalog", cfg.DEM: "dem", cfg.Sowing: "sowing"}}
	t0 := time.Now()
	fields, readErrs, err := readFields(ctx, cfg, in.finger)
	if err != nil {
		return Summary{}, err
	}
	m.Record("read_fields", time.Since(t0))
	for _, e := range readErrs {
		id := fieldIDOf(e)
		if id != "" && !cfg.Shard.Owns(id) {
			continue
		}
		if id == "" && cfg.Shard.Index != 0 {
			continue // unnamed bad features are reported by shard 0 only
		}
		m.addFailure(id, "read", e.Error())
	}
	var owned []grid.Field
	for _, f := range fields {
		if cfg.Shard.Owns(f.ID) {
			owned = append(owned, f)
		}
	}
	sort.Slice(owned, func(i, j int) bool { return owned[i].ID < owned[j].ID })
	logf("%d talhões in %s, %d in this shard, %d unreadable", len(fields)+len(readErrs), cfg.Fields, len(owned), len(m.Failures))

	if cfg.Sowing != "" {
		b, err := storage.ReadFile(ctx, cfg.Sowing)
		if err != nil {
			return Summary{}, fmt.Errorf("read sowing dates: %w", err)
		}
		in.finger[cfg.Sowing] = sha(b)
		d, err := coverage.ReadSowingCSV(bytes.NewReader(b), cfg.AgriYearStart)
		if err != nil {
			// Bad lines are reported; the good ones are used.
			m.Warnings = append(m.Warnings, fmt.Sprintf("%s: %v", cfg.Sowing, err))
		}
		in.declared = d
	}

	t0 = time.Now()
	cat, problems := series.LoadCatalog(ctx, cfg.Catalog, series.CatalogOptions{Open: storage.Open, AllowHrefPrefixes: cfg.AllowHrefPrefix})
	if cat == nil {
		return Summary{}, fmt.Errorf("load catalog %s: %w", cfg.Catalog, errors.Join(problems...))
	}
	in.cat = cat
	for _, p := range problems {
		m.addSkipped("catalog", p.Error())
	}
	in.finger[cfg.Catalog] = catalogFingerprint(cat)
	m.Record("load_catalog", time.Since(t0))
	logf("catalog %s: %d items, %d rejected", cfg.Catalog, len(cat.Items), len(problems))

	if cfg.DEM != "" {
		dem, err := slope.Open(ctx, cfg.DEM)
		if err != nil {
			// The DEM is one indicator: without it every talhão is partial,
			// and the run says why.
			m.Warnings = append(m.Warnings, fmt.Sprintf("DEM %s: %v", cfg.DEM, err))
		} else {
			in.dem = dem
			defer dem.Close()
			in.finger[cfg.DEM] = "gdal:" + storage.GDALPath(cfg.DEM)
		}
	}
	in.params = paramsHash(cfg, in.finger)
	for k, v := range in.finger {
		m.Inputs = append(m.Inputs, export.Input{Role: in.roles[k], Path: k, SHA256: v})
	}
	sort.Slice(m.Inputs, func(i, j int) bool { return m.Inputs[i].Path < m.Inputs[j].Path })
	m.ParamsHash = in.params

	if !cfg.Force {
		if prev, err := readManifest(ctx, manifestLoc); err == nil && prev.ParamsHash == in.params && prev.Complete {
			logf("already complete (%s): nothing to do; --force recomputes", manifestLoc)
			return Summary{Total: prev.Status.Total, OK: prev.Status.OK, Partial: prev.Status.Partial, Failed: prev.Status.Failed, Skipped: prev.Status.Total, Manifest: manifestLoc}, nil
		}
	}

	st := newStage(in)
	nb := (len(owned) + cfg.BatchSize - 1) / cfg.BatchSize
	if storage.KindOf(cfg.Out) == storage.Local {
		removeStaleTemps(cfg.Out, cfg.Shard, owned)
	}
	var sum Summary
	tr := &tracker{start: start, p: Progress{Shard: cfg.Shard, Phase: "start", Batches: nb, Total: len(owned), Failed: m.Status.Failed}}
	report := func() {
		if cfg.OnProgress != nil {
			tr.update()
			cfg.OnProgress(tr.p)
		}
	}
	report()
	for b := 0; b < nb; b++ {
		if err := ctx.Err(); err != nil {
			return sum, fmt.Errorf("run cancelled after %d of %d batches: %w", b, nb, err)
		}
		batch := owned[b*cfg.BatchSize : min((b+1)*cfg.BatchSize, len(owned))]
		tb := time.Now()
		res, resumed, err := st.batch(ctx, b, batch)
		if err != nil {
			return sum, err
		}
		if resumed {
			sum.Resumed++
		}
		m.merge(res)
		tr.p.Phase = "batch"
		tr.p.OK, tr.p.Partial, tr.p.Failed = m.Status.OK, m.Status.Partial, m.Status.Failed
		tr.p.ScenesRead, tr.p.Observations = m.Counts["scenes_read"], m.Counts["observations"]
		tr.batch(len(batch), time.Since(tb), resumed)
		if cfg.OnProgress != nil {
			cfg.OnProgress(tr.p)
		} else {
			logf("batch %d/%d: %d/%d talhões (ok %d, partial %d, failed %d)%s, %.1f talhões/s, eta %s",
				b+1, nb, tr.p.Done, len(owned), m.Status.OK, m.Status.Partial, m.Status.Failed,
				map[bool]string{true: " [resumed]"}[resumed], tr.p.Rate, tr.p.ETA)
		}
	}

	t0 = time.Now()
	if err := st.publish(ctx, nb); err != nil {
		return sum, err
	}
	m.Record("publish", time.Since(t0))
	m.Record("total", time.Since(start))
	m.Status.Total = m.Status.OK + m.Status.Partial + m.Status.Failed
	m.Counts["talhoes_ok"], m.Counts["talhoes_partial"], m.Counts["talhoes_failed"] = int64(m.Status.OK), int64(m.Status.Partial), int64(m.Status.Failed)
	m.FinishedAt = time.Now().UTC()
	m.Complete = true
	b, _ := json.MarshalIndent(m, "", "  ")
	if err := storage.WriteFile(ctx, manifestLoc, append(b, '\n')); err != nil {
		return sum, err
	}
	st.cleanup(ctx, nb)
	sum.Total, sum.OK, sum.Partial, sum.Failed = m.Status.Total, m.Status.OK, m.Status.Partial, m.Status.Failed
	sum.Manifest = manifestLoc
	tr.p.Phase = "done"
	tr.p.OK, tr.p.Partial, tr.p.Failed = m.Status.OK, m.Status.Partial, m.Status.Failed
	report()
	logf("done: %d talhões (ok %d, partial %d, failed %d) in %s; manifest %s",
		sum.Total, sum.OK, sum.Partial, sum.Failed, time.Since(start).Round(time.Millisecond), manifestLoc)
	return sum, nil
}

// readFields reads the talhões and fingerprints the source.
func readFields(ctx context.Context, cfg Config, finger map[string]string) ([]grid.Field, []error, error) {
	src := cfg.Fields
	if storage.KindOf(src) == storage.Local {
		b, err := storage.ReadFile(ctx, src)
		if err != nil {
			return nil, nil, fmt.Errorf("read talhões: %w", err)
		}
		finger[src] = sha(b)
	} else {
		finger[src] = "remote"
	}
	fields, errs := grid.Read(ctx, src, grid.ReadOptions{IDField: cfg.IDField})
	for _, e := range errs {
		if errors.Is(e, grid.ErrSource) {
			return nil, nil, e
		}
	}
	return fields, errs, nil
}

// fieldIDOf returns the talhão id named by a grid read error, if any.
func fieldIDOf(err error) string {
	var fe *grid.FieldError
	if errors.As(err, &fe) {
		return fe.ID
	}
	return ""
}

func sha(b []byte) string {
	h := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(h[:])
}

// paramsHash identifies everything that shapes the results of a shard, so
// a rerun resumes only from batches computed the same way.
func paramsHash(cfg Config, finger map[string]string) string {
	keys := make([]string, 0, len(finger))
	for k := range finger {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s=%s\n", k, finger[k])
	}
	p, _ := json.Marshal(struct {
		Version, Season, AgriYearStart, From, AsOf, Codes, Shard string
		BatchSize                                                int
		Grid                                                     grid.Options
		Tillage                                                  tillage.Params
		Coverage                                                 coverage.Params
		IDField                                                  string
	}{cfg.Version, cfg.Season.Label, cfg.AgriYearStart.String(), cfg.From.Format(time.DateOnly), cfg.AsOf.Format(time.DateOnly),
		cfg.Codes.String(), cfg.Shard.String(), cfg.BatchSize, cfg.Grid, cfg.Tillage, cfg.Coverage, cfg.IDField})
	b.Write(p)
	return sha([]byte(b.String()))
}

func manifestName(s Shard) string {
	if s.Count <= 1 {
		return "run.json"
	}
	return "run/" + s.Part() + ".json"
}

// parallel runs fn(i) for i in [0, n) on at most workers goroutines.
func parallel(n, workers int, fn func(i int)) {
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < min(workers, n); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				fn(i)
			}
		}()
	}
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
}

// catalogFingerprint hashes what the run uses of the catalog: item ids,
// dates, collections and asset hrefs, in a stable order.
func catalogFingerprint(cat *series.Catalog) string {
	lines := make([]string, 0, len(cat.Items))
	for _, it := range cat.Items {
		keys := make([]string, 0, len(it.Assets))
		for k, a := range it.Assets {
			keys = append(keys, k+"="+a.Href)
		}
		sort.Strings(keys)
		lines = append(lines, it.Collection+"|"+it.ID+"|"+it.Datetime.UTC().Format(time.RFC3339)+"|"+strings.Join(keys, ","))
	}
	sort.Strings(lines)
	return sha([]byte(strings.Join(lines, "\n")))
}
