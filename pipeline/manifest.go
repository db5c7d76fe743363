package pipeline

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/manejo/manejo/export"
	"github.com/manejo/manejo/storage"
)

// runManifest is run.json (export.Manifest, its one definition) with the
// bookkeeping methods of a run.
type runManifest struct {
	export.Manifest
}

func newManifest(cfg Config, start time.Time, runID string) *runManifest {
	m := &runManifest{}
	m.Warnings = []string{}
	m.Tool, m.Version, m.StartedAt, m.RunID = "manejo", cfg.Version, start.UTC(), runID
	if cfg.Shard.Count > 1 {
		m.Shard = &export.Shard{Index: cfg.Shard.Index, Count: cfg.Shard.Count}
	}
	m.Parameters = map[string]string{
		"fields": cfg.Fields, "catalog": cfg.Catalog, "dem": cfg.DEM, "sowing": cfg.Sowing, "out": cfg.Out,
		"id-field": cfg.IDField, "season": cfg.Season.Label, "agri-year-start": cfg.AgriYearStart.String(),
		"from": cfg.From.Format(time.DateOnly), "as-of": cfg.AsOf.Format(time.DateOnly),
		"satellite-codes": cfg.Codes.String(), "shard": cfg.Shard.String(),
		"batch-size": fmt.Sprint(cfg.BatchSize), "cache": cfg.Cache, "workers": fmt.Sprint(cfg.Workers), "io-concurrency": fmt.Sprint(cfg.IOConcurrency),
		"cell-ha": fmt.Sprint(cfg.Grid.CellHa), "edge-buffer-m": fmt.Sprint(cfg.Grid.EdgeBufferM),
		"tillage": fmt.Sprintf("%+v", cfg.Tillage), "coverage": fmt.Sprintf("%+v", cfg.Coverage.Effective()),
	}
	if cfg.Crops != "" { // only when set: manifests of runs without it stay the same
		m.Parameters["crops"] = cfg.Crops
	}
	if cfg.BatchCellScenes != 0 { // likewise
		m.Parameters["batch-cell-scenes"] = fmt.Sprint(cfg.BatchCellScenes)
	}
	if len(cfg.Collections) > 0 {
		m.Parameters["collections"] = strings.Join(cfg.Collections, ",")
	}
	if len(cfg.AllowMissingQA) > 0 {
		m.Parameters["allow-missing-qa"] = strings.Join(cfg.AllowMissingQA, ",")
	}
	m.Counts, m.Timings, m.Skipped = map[string]int64{}, map[string]export.Timing{}, map[string]int64{}
	return m
}

// write writes the manifest to loc through export.WriteManifest.
func (m *runManifest) write(ctx context.Context, loc string) error {
	b, err := export.MarshalManifest(m.Manifest)
	if err != nil {
		return err
	}
	return storage.WriteFile(ctx, loc, b)
}

func (m *runManifest) addFailure(id, stage, reason string) {
	m.Failures = append(m.Failures, export.Failure{FieldID: id, Stage: stage, Status: export.StatusFailed, Reason: reason})
	m.Status.Failed++
}

func (m *runManifest) addSkipped(reason, detail string) {
	m.Skipped[reason]++
	if len(m.Warnings) < 1000 {
		m.Warnings = append(m.Warnings, detail)
	}
}

// merge adds one batch's summary to the manifest.
func (m *runManifest) merge(b batchSummary) {
	m.Status.OK += b.OK
	m.Status.Partial += b.Partial
	m.Status.Incomplete += b.Incomplete
	m.Status.Failed += len(b.Failures) - b.Partial - b.Incomplete
	m.IO = addIOs(m.IO, b.IO)
	m.Failures = append(m.Failures, b.Failures...)
	for k, v := range b.Counts {
		m.Counts[k] += v
	}
	for k, v := range b.Skipped {
		m.Skipped[k] += v
	}
	for k, v := range b.Timings {
		m.Record(k, time.Duration(v*float64(time.Second)))
	}
	m.Warnings = append(m.Warnings, b.Warnings...)
}

func readManifest(ctx context.Context, loc string) (*runManifest, error) {
	b, err := storage.ReadFile(ctx, loc)
	if err != nil {
		return nil, err
	}
	m, err := export.ReadManifest(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", loc, err)
	}
	return &runManifest{m}, nil
}

func manifestName(s Shard) string {
	if s.Count <= 1 {
		return "run.json"
	}
	return "run/" + s.Part() + ".json"
}

// previous reads the manifest a previous run left and returns its summary
// when it is complete with the same parameters (unless the run is forced).
func (r *run) previous(ctx context.Context) (Summary, bool) {
	prev, err := readManifest(ctx, r.manifestLoc)
	if err != nil {
		return Summary{}, false
	}
	r.prev = prev
	if r.cfg.Force || prev.ParamsHash != r.in.params || !prev.Complete || prev.Status.Incomplete > 0 {
		return Summary{}, false
	}
	r.logf("already complete (%s): nothing to do; --force recomputes", r.manifestLoc)
	return Summary{Total: prev.Status.Total, OK: prev.Status.OK, Partial: prev.Status.Partial, Failed: prev.Status.Failed, Skipped: prev.Status.Total,
		Payloads: int(prev.Counts["sinm_payloads"]), Manifest: r.manifestLoc, RunID: prev.RunID, Failures: firstFailures(prev.Failures)}, true
}

// firstFailures returns up to MaxSummaryFailures failures, failed before
// partial, in id order.
func firstFailures(all []export.Failure) []export.Failure {
	var out []export.Failure
	for _, status := range []string{export.StatusFailed, export.StatusIncomplete, export.StatusPartial} {
		for _, f := range all {
			if f.Status == status && len(out) < MaxSummaryFailures {
				out = append(out, f)
			}
		}
	}
	return out
}

// recordMinimum writes into run.json's io the least this run's remote
// reads could have fetched, by collection, beside what they fetched.
func (r *run) recordMinimum() {
	for c, ms := range r.min.ByCollection() {
		if r.m.IO == nil {
			r.m.IO = map[string]export.IO{}
		}
		x := r.m.IO[c]
		x.Add(export.IO{MinBytes: ms.Bytes, MinRequests: ms.Requests, MinTiles: ms.Tiles})
		r.m.IO[c] = x
	}
}

// recordSizes writes the input files' sizes (startSizes) into run.json's
// inputs, once they are read.
func (r *run) recordSizes() {
	if r.sizes == nil {
		return
	}
	size, _ := r.sizes.get()
	for i := range r.m.Inputs {
		r.m.Inputs[i].Bytes = size[r.m.Inputs[i].Path]
	}
}
