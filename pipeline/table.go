package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/manejo/manejo/coverage"
	"github.com/manejo/manejo/export"
	"github.com/manejo/manejo/series"
	"github.com/manejo/manejo/sinm"
	"github.com/manejo/manejo/slope"
	"github.com/manejo/manejo/storage"
	"github.com/manejo/manejo/tillage"
	"github.com/manejo/manejo/zarc"
)

// TableConfig is what AnalyseTable needs. Observations, Out and Season are
// required; the zero value of every other field means its documented
// default (those of Config).
type TableConfig struct {
	// Observations is an observation table, CSV or Parquet, local, s3://
	// or https:// (series.ReadTable: its columns and rules).
	Observations string
	// Collection names the collection of rows without one.
	Collection string
	// ParseCrop reads the table's crop column; nil is zarc.ParseCrop.
	ParseCrop func(string) (zarc.Crop, error)

	Sowing        string // declared sowing dates CSV; "" = detect all
	Crops         string // declared crop history CSV (Config.Crops); "" = none
	Out           string // output folder, local or s3://bucket/prefix
	Season        coverage.Season
	AgriYearStart coverage.MonthDay
	From, AsOf    time.Time // readings outside From..AsOf are left out (counted)
	Codes         sinm.SatelliteCodes
	OperatorCNPJ  string
	// UndeclaredPracticesAsZero sends plantioContorno/terraceamento 0 for a
	// talhão whose table gives no plantio_contorno/terraceamento (Config's).
	UndeclaredPracticesAsZero bool
	Workers                   int
	// MaxCellScenes is the memory budget of one talhão in points × scenes
	// (series.TableOptions.MaxCellScenes, Config.MaxCellScenes of a run):
	// a talhão over it fails with the reason. 0 means
	// series.DefaultMaxCellScenes; negative, no cap.
	MaxCellScenes int
	Force         bool
	Tillage       tillage.Params
	Coverage      coverage.Params

	Version  string
	Progress io.Writer
	Log      *slog.Logger
}

// config is the run configuration of the table's analysis.
func (tc TableConfig) config() (Config, error) {
	for _, in := range []struct{ flag, v string }{{"--observations", tc.Observations}, {"--out", tc.Out}} {
		if in.v == "" {
			return Config{}, fmt.Errorf("%w: %s is required", ErrConfig, in.flag)
		}
	}
	cfg := Config{Fields: tc.Observations, Catalog: tc.Observations, Sowing: tc.Sowing, Crops: tc.Crops, Out: tc.Out,
		Season: tc.Season, AgriYearStart: tc.AgriYearStart, From: tc.From, AsOf: tc.AsOf, Codes: tc.Codes,
		OperatorCNPJ: tc.OperatorCNPJ, UndeclaredPracticesAsZero: tc.UndeclaredPracticesAsZero, Workers: tc.Workers, MaxCellScenes: tc.MaxCellScenes, Force: tc.Force, Tillage: tc.Tillage, Coverage: tc.Coverage,
		Version: tc.Version, Progress: tc.Progress, Log: tc.Log}
	err := cfg.defaults()
	return cfg, err
}

// AnalyseTable runs the T, C, cycle and payload stages of a run over an
// observation table instead of a catalog (manejo analyse): the same
// analysis of each talhão as Run, the same datasets, payloads and run.json
// in Out, except that cells.parquet is empty (a table has points, not cell
// polygons) and slope comes from the table's slope_pct, when given. A
// talhão with a bad row fails with the row and column named; the others go
// on. The error is for a run that cannot go on (unreadable or unusable
// table, output not writable).
func AnalyseTable(ctx context.Context, tc TableConfig) (Summary, error) {
	start := time.Now()
	cfg, err := tc.config()
	if err != nil {
		return Summary{}, err
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	r, lk, err := beginRun(ctx, cfg, start, cancel)
	if err != nil {
		return Summary{}, err
	}
	defer lk.release()
	sum, err := r.analyseTable(ctx, tc)
	return sum, leaseCause(ctx, err)
}

// analyseTable is AnalyseTable once the lease is held.
func (r *run) analyseTable(ctx context.Context, tc TableConfig) (Summary, error) {
	cfg, start := r.cfg, r.start
	runID := r.m.RunID
	tableParameters(r.m, tc)
	tab, err := r.openTable(ctx, tc)
	if err != nil {
		return Summary{}, err
	}
	if prev, done := r.previous(ctx); done {
		return prev, nil
	}
	st := newStage(r.in, runID)
	r.tr = &tracker{start: start, p: Progress{Shard: cfg.Shard, Phase: "start", Batches: 1, Total: len(tab.Grids), Failed: r.m.Status.Failed}}
	obs, outside := within(tab.Obs, cfg.From, cfg.AsOf)
	if outside > 0 {
		r.m.Counts["readings_outside_period"] = int64(outside)
		r.m.Warnings = append(r.m.Warnings, fmt.Sprintf("%d reading(s) outside %s..%s left out", outside, cfg.From.Format(time.DateOnly), cfg.AsOf.Format(time.DateOnly)))
	}
	sum := batchSummary{Counts: map[string]int64{}, Skipped: map[string]int64{}, Timings: map[string]float64{}, Warnings: []string{}, Failures: []export.Failure{}, Payloads: []export.Output{}}
	t0 := time.Now()
	outs := st.analyseAll(ctx, tab.Grids, obs, tab.Gaps(), nil)
	for i, g := range tab.Grids {
		outs[i].Cells = nil // points, not cells: nothing for cells.parquet
		if g.AreaHa == 0 && outs[i].Failure == "" {
			why := export.Reason{Subject: export.SubjectArea, Code: export.CodeUnknownArea, Detail: "the observation table gives no area_ha, so area_ha is 0 (unknown)"}
			outs[i].Indicator.Reasons = append(outs[i].Indicator.Reasons, why.String())
		}
		if err, ok := tab.UnknownCrop[g.Field.ID]; ok && outs[i].Failure == "" {
			outs[i].Indicator.Reasons = append(outs[i].Indicator.Reasons, unknownCropReason(g.Field.ID, err).String())
		}
	}
	sum.Timings["analyse"] = time.Since(t0).Seconds()
	if err := st.commit(ctx, st.stagingDir(0), outs, &sum); err != nil {
		return Summary{}, err
	}
	r.payloads = [][]export.Output{sum.Payloads}
	r.m.merge(sum)
	r.m.Counts["table_rows"] = int64(tab.Rows)
	return r.finish(ctx, st, 1, Summary{})
}

// unknownCropReason says what a talhão whose crop is unknown still gets
// (T, C, cycles) and what it does not (its crop, so a ZARC level).
func unknownCropReason(id string, err error) export.Reason {
	return export.Reason{Subject: export.SubjectCrop, Code: export.CodeUnknownCrop, Detail: fmt.Sprintf("talhão %s: %v; T, C and cycles are read (sowing window and lag as for a talhão without a crop: soja's), crop left empty, so no ZARC level can be given", id, err)}
}

// tableParameters records the analysis's own flags in run.json instead of
// a run's talhões, catalog, DEM and grid.
func tableParameters(m *runManifest, tc TableConfig) {
	for _, k := range []string{"fields", "catalog", "dem", "id-field", "cell-ha", "edge-buffer-m", "shard", "batch-size"} {
		delete(m.Parameters, k)
	}
	m.Parameters["observations"] = tc.Observations
	m.Parameters["collection"] = tc.Collection
}

// openTable reads the observation table and the declared sowings and
// records the refused talhões and rows.
func (r *run) openTable(ctx context.Context, tc TableConfig) (series.Table, error) {
	src := tc.Observations
	in := &inputs{cfg: r.cfg, finger: map[string]string{}, roles: map[string]string{src: "observations", r.cfg.Sowing: "sowing", r.cfg.Crops: "crops"}}
	r.in = in
	b, err := storage.ReadFile(ctx, src)
	if err != nil {
		return series.Table{}, fmt.Errorf("read observations: %w", err)
	}
	in.finger[src] = sha(b)
	t0 := time.Now()
	tab, err := series.ReadTable(b, src, series.TableOptions{Collection: tc.Collection, ParseCrop: tc.ParseCrop, MaxCellScenes: tc.MaxCellScenes})
	if err != nil {
		return tab, fmt.Errorf("%w: %v", ErrConfig, err)
	}
	r.m.Record("read_observations", time.Since(t0))
	known := make([]string, 0, len(tab.Grids)+len(tab.Refused))
	for _, g := range tab.Grids {
		known = append(known, g.Field.ID)
	}
	for id, errs := range tab.Refused {
		known = append(known, id)
		r.m.addFailure(id, "read", errors.Join(errs...).Error())
	}
	sort.Slice(r.m.Failures, func(i, j int) bool { return r.m.Failures[i].FieldID < r.m.Failures[j].FieldID })
	if err := r.readSowing(in, known, r.startSowing(ctx)); err != nil {
		return tab, err
	}
	if err := r.readCrops(in, known, r.startCrops(ctx)); err != nil {
		return tab, err
	}
	if err := tableCodes(r.cfg.Codes, tab); err != nil {
		return tab, err
	}
	in.slopes, in.points = tab.SlopePct, true
	in.params = paramsHash(r.cfg, in.finger)
	for k, v := range in.finger {
		r.m.Inputs = append(r.m.Inputs, export.Input{Role: in.roles[k], Path: k, Bytes: sizeOf(ctx, k), SHA256: v})
	}
	sort.Slice(r.m.Inputs, func(i, j int) bool { return r.m.Inputs[i].Path < r.m.Inputs[j].Path })
	r.m.ParamsHash = in.params
	r.logf("%d rows of %s: %d talhões, %d refused for bad rows", tab.Rows, src, len(tab.Grids), len(tab.Refused))
	return tab, nil
}

// tableCodes requires a satellite code for every collection of the table
// (and for the DEM when a talhão gave its slope): without one, every payload
// would fail.
func tableCodes(codes sinm.SatelliteCodes, tab series.Table) error {
	need := map[string]bool{}
	for _, o := range tab.Obs {
		need[o.Collection] = true
	}
	if len(tab.SlopePct) > 0 {
		need[sinm.DEMKey] = true
	}
	var missing []string
	for k := range need {
		if _, ok := codes[k]; !ok {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return fmt.Errorf("%w: no satellite code for %s (--satellite-codes)", ErrConfig, strings.Join(missing, ", "))
	}
	return nil
}

// within keeps the readings dated from..to and counts the others.
func within(obs []series.Obs, from, to time.Time) ([]series.Obs, int) {
	out := make([]series.Obs, 0, len(obs))
	for _, o := range obs {
		if o.Date.Before(from) || o.Date.After(to) {
			continue
		}
		out = append(out, o)
	}
	return out, len(obs) - len(out)
}

// tableSlope sets the slope indicators of a talhão from the slope its
// table gave (slope_pct, the mean over the talhão): the contour rule on the
// unrounded mean, as slope.Field does.
func tableSlope(pct float64, ind *export.IndicatorRow) {
	ind.SlopeMeanPct = new(pct)
	ind.ContourRequired = new(pct >= slope.ContourThresholdPct)
	ind.DeclividadeMedia = new(int32(math.Round(pct)))
}
