package pipeline

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/manejo/manejo/export"
	"github.com/manejo/manejo/grid"
	"github.com/manejo/manejo/series"
	"github.com/manejo/manejo/sinm"
	"github.com/manejo/manejo/storage"
	"golang.org/x/sync/errgroup"
)

// batchSummary is the _SUCCESS marker of a committed batch: enough to
// rebuild the manifest without recomputing the batch.
type batchSummary struct {
	ParamsHash string   `json:"params_hash"`
	FieldIDs   []string `json:"field_ids"`
	OK         int      `json:"ok"`
	Partial    int      `json:"partial"`
	// Incomplete talhões lack scenes that failed transiently: a batch
	// holding one is never resumed, so a re-run reads them again.
	Incomplete int                  `json:"incomplete,omitempty"`
	IO         map[string]export.IO `json:"io,omitempty"`
	Failures   []export.Failure     `json:"failures"`
	Counts     map[string]int64     `json:"counts"`
	Skipped    map[string]int64     `json:"skipped"`
	Timings    map[string]float64   `json:"timings"`
	Warnings   []string             `json:"warnings"`
	// Payloads are the SINM payloads the batch staged, with their hashes
	// and the run that computed them; they are published at the end.
	Payloads []export.Output `json:"payloads"`
}

// stage runs batches and publishes their outputs.
type stage struct {
	in    *inputs
	runID string
	// spill holds what the read pass read (nil without one); items finds
	// the catalog's items by id for it.
	spill *spill
	items map[string]*series.Item
	// min records the tiles the run's remote reads need (run.json io).
	min *series.Minimum
}

func newStage(in *inputs, runID string) *stage { return &stage{in: in, runID: runID} }

// datasets are the Parquet datasets of a run, in publishing order.
var datasets = []string{"cells", "observations", "events", "seasons", "cell_cover", "cycles", "indicators"}

func (s *stage) stagingDir(b int) string {
	return storage.Join(s.in.cfg.Out, "_staging", s.in.cfg.Shard.Part(), fmt.Sprintf("batch-%05d", b))
}

// batch computes (or resumes) one batch of talhões and commits it to the
// staging folder.
func (s *stage) batch(ctx context.Context, b int, fields []grid.Field) (batchSummary, bool, error) {
	dir := s.stagingDir(b)
	ids := make([]string, len(fields))
	for i, f := range fields {
		ids[i] = f.ID
	}
	marker := storage.Join(dir, "_SUCCESS")
	if prev, ok := s.committed(ctx, marker, ids); ok {
		return prev, true, nil
	}

	sum := batchSummary{ParamsHash: s.in.params, FieldIDs: ids, Counts: map[string]int64{}, Skipped: map[string]int64{}, Timings: map[string]float64{}, Warnings: []string{}, Failures: []export.Failure{}, Payloads: []export.Output{}}
	t0 := time.Now()
	grids, failed, err := BuildGrids(ctx, fields, s.in.cfg.Grid)
	if err != nil {
		return sum, false, fmt.Errorf("grid batch %d: %w", b, err)
	}
	sum.Failures = append(sum.Failures, failed...)
	sum.Timings["grid"] = time.Since(t0).Seconds()

	// The DEM windows are read while the scenes are sampled.
	reads := s.startSlopes(ctx, grids)
	defer reads.wait()
	t0 = time.Now()
	obs, st, err := s.sample(ctx, grids, &sum)
	if err != nil {
		if ctx.Err() != nil {
			return sum, false, fmt.Errorf("sample batch %d: %w", b, err)
		}
		// A batch that cannot be sampled fails its talhões, not the run.
		for _, g := range grids {
			sum.Failures = append(sum.Failures, export.Failure{FieldID: g.Field.ID, Stage: "series", Status: export.StatusFailed, Reason: err.Error()})
		}
		grids = nil
	}
	sum.Timings["series"] = time.Since(t0).Seconds()
	// The scenes are closed: GDAL's decoded blocks are freed but stay
	// resident in the C heap unless handed back, under the analysis's Go
	// heap (issue 15 memory).
	storage.ReleaseMemory()
	sum.addSeriesStats(st)
	grids = dropRefused(grids, st.Refused, &sum)
	grids = dropIncomplete(grids, st.Incomplete, &sum)

	t0 = time.Now()
	outs := s.analyseAll(ctx, grids, obs, st.Gaps, reads)
	sum.Timings["analyse"] = time.Since(t0).Seconds()

	t0 = time.Now()
	if err := s.commit(ctx, dir, outs, &sum); err != nil {
		return sum, false, err
	}
	sum.Timings["write"] = time.Since(t0).Seconds()
	raw, _ := json.MarshalIndent(sum, "", " ")
	if err := storage.WriteFile(ctx, marker, raw); err != nil {
		return sum, false, err
	}
	return sum, false, nil
}

// committed returns the summary of a batch a previous run committed with
// the same parameters and talhões (unless the run is forced).
func (s *stage) committed(ctx context.Context, marker string, ids []string) (batchSummary, bool) {
	if s.in.cfg.Force {
		return batchSummary{}, false
	}
	raw, err := storage.ReadFile(ctx, marker)
	if err != nil {
		return batchSummary{}, false
	}
	var prev batchSummary
	if json.Unmarshal(raw, &prev) == nil && prev.ParamsHash == s.in.params && slices.Equal(prev.FieldIDs, ids) &&
		int64(len(prev.Payloads)) == prev.Counts["sinm_payloads"] && prev.Incomplete == 0 {
		return prev, true
	}
	return batchSummary{}, false
}

// sample reads the observations of a batch's cells. series.Sample retries
// what fails transiently (GDAL retries each request, Sample each scene)
// within its budget; the scenes still failing then make their talhões
// incomplete (dropIncomplete), never silently shorter series.
func (s *stage) sample(ctx context.Context, grids []grid.Grid, sum *batchSummary) ([]series.Obs, series.Stats, error) {
	cfg := s.in.cfg
	if st, ok := s.in.searchIncomplete(grids); ok {
		return nil, st, nil
	}
	if err := s.in.resign(ctx); err != nil {
		return nil, series.Stats{}, err
	}
	cb, err := s.beginCache(ctx, grids)
	if err != nil {
		return nil, series.Stats{}, err
	}
	so := series.Options{From: cfg.From, To: cfg.AsOf, Workers: cfg.Workers, Profiles: cfg.SeriesProfiles, MaxCellScenes: cfg.MaxCellScenes,
		IOConcurrency: cfg.IOConcurrency, SceneAttempts: cfg.SceneAttempts, SceneRetryDelay: cfg.SceneRetryDelay, Minimum: s.min, Budget: s.in.budget}
	if cb != nil {
		so = cb.Options(so)
	}
	feed := func() {}
	if s.spill != nil {
		so, feed = s.spill.options(so, grids, s.itemsByID())
	}
	obs, st, err := series.Sample(ctx, s.in.cat, grids, so)
	if cb != nil && err == nil {
		feed() // the read pass's scenes, read in this run: to the cache
		// Only scenes read in full are cached: an incomplete scene is
		// read again by the next run.
		cb.Sampled()
		cb.Save(ctx, time.Now())
		sum.addCacheStats(cb.Stats)
	}
	return obs, st, err
}

// itemsByID finds the catalog's items by id.
func (s *stage) itemsByID() map[string]*series.Item {
	if s.items == nil {
		s.items = map[string]*series.Item{}
		for _, it := range s.in.cat.Items {
			s.items[it.ID] = it
		}
	}
	return s.items
}

// dropIncomplete records the talhões that lack scenes still failing
// transiently (IN 2/2025 item 6.5 asks for all images available for the
// talhão) as incomplete, naming the scenes, and returns the others: an
// incomplete talhão gets no rows and no payload.
func dropIncomplete(grids []grid.Grid, inc map[string][]string, sum *batchSummary) []grid.Grid {
	if len(inc) == 0 {
		return grids
	}
	kept := grids[:0:0]
	for _, g := range grids {
		scenes, ok := inc[g.Field.ID]
		if !ok {
			kept = append(kept, g)
			continue
		}
		sum.Incomplete++
		sum.Failures = append(sum.Failures, export.Failure{FieldID: g.Field.ID, Stage: "series", Status: export.StatusIncomplete,
			Reason: fmt.Sprintf("%d scene(s) still failed transiently after the retry budget, so the series lacks available images (IN 6.5); run again to retry them: %s", len(scenes), strings.Join(scenes, ", "))})
	}
	return kept
}

// addSeriesStats records what sampling skipped, reported and read.
func (sum *batchSummary) addSeriesStats(st series.Stats) {
	for k, v := range st.Skipped {
		sum.Skipped[string(k)] += int64(v)
	}
	for _, p := range st.Problems {
		if len(sum.Warnings) < 200 {
			sum.Warnings = append(sum.Warnings, p.Error())
		}
	}
	sum.Counts["scenes_selected"] += int64(st.Scenes)
	sum.Counts["scenes_read"] += int64(st.ScenesRead)
	sum.Counts["gdal_reads"] += st.Reads
	sum.Counts["gdal_read_bytes"] += st.ReadBytes
	sum.IO = addIO(sum.IO, st.IO)
}

// addIO adds a Sample's I/O by collection to dst (made when nil and
// there is something to add) and returns it.
func addIO(dst map[string]export.IO, src map[string]*series.IOStats) map[string]export.IO {
	for c, v := range src {
		if dst == nil {
			dst = map[string]export.IO{}
		}
		x := dst[c]
		x.Add(export.IO{Scenes: v.Scenes, Requests: v.Requests, Bytes: v.Bytes, Retries: v.Retries, ReadSeconds: v.ReadSeconds, ComputeSeconds: v.ComputeSeconds})
		dst[c] = x
	}
	return dst
}

// analyseAll analyses the talhões of a batch, Workers at a time.
func (s *stage) analyseAll(ctx context.Context, grids []grid.Grid, obs []series.Obs, gaps map[string]series.Gap, reads *slopeReads) []fieldOut {
	byField := map[string][]series.Obs{}
	for _, o := range obs {
		byField[o.FieldID] = append(byField[o.FieldID], o)
	}
	pfs := s.portfolios(grids, byField)
	outs := make([]fieldOut, len(grids))
	var eg errgroup.Group
	eg.SetLimit(s.in.cfg.Workers)
	for i, g := range grids {
		eg.Go(func() error {
			outs[i] = s.analyse(ctx, g, byField[g.Field.ID], gaps[g.Field.ID], reads, &pfs[i])
			return nil
		})
	}
	_ = eg.Wait() // analyse never returns an error: failures are in outs
	return outs
}

// commit writes one batch's rows to staging Parquet files and its SINM
// payloads to their final place.
func (s *stage) commit(ctx context.Context, dir string, outs []fieldOut, sum *batchSummary) error {
	var rows batchRows
	for _, o := range outs {
		if o.Failure != "" {
			sum.Failures = append(sum.Failures, export.Failure{FieldID: o.ID, Stage: "analyse", Status: export.StatusFailed, Reason: o.Failure})
			continue
		}
		if o.Incomplete != "" { // as dropIncomplete: no rows, no payload, the batch not reused
			sum.Incomplete++
			sum.Failures = append(sum.Failures, export.Failure{FieldID: o.ID, Stage: "slope", Status: export.StatusIncomplete, Reason: o.Incomplete})
			continue
		}
		rows.add(o)
		switch o.Indicator.Status {
		case export.StatusOK:
			sum.OK++
		default:
			sum.Partial++
			sum.Failures = append(sum.Failures, export.Failure{FieldID: o.ID, Status: export.StatusPartial, Reason: strings.Join(o.Indicator.Reasons, "; ")})
		}
		if o.Payload != nil {
			name := sinm.PayloadName(o.ID)
			if err := storage.WriteFile(ctx, storage.Join(dir, name), o.Payload); err != nil {
				return err
			}
			h := sha256.Sum256(o.Payload)
			sum.Payloads = append(sum.Payloads, export.Output{Path: name, Bytes: int64(len(o.Payload)), SHA256: hex.EncodeToString(h[:]), FieldID: o.ID, RunID: s.runID})
			sum.Counts["sinm_payloads"]++
		}
	}
	sort.Slice(sum.Failures, func(i, j int) bool { return sum.Failures[i].FieldID < sum.Failures[j].FieldID })
	rows.count(sum.Counts)
	return rows.write(ctx, dir, export.Options{Version: s.in.cfg.Version})
}

// batchRows are the rows of one batch, by dataset.
type batchRows struct {
	cells     []export.CellRow
	obs       []export.ObsRow
	events    []export.EventRow
	seasons   []export.SeasonRow
	cellCover []export.CellCoverRow
	cycles    []export.CycleRow
	inds      []export.IndicatorRow
}

func (r *batchRows) add(o fieldOut) {
	r.cells, r.obs, r.events = append(r.cells, o.Cells...), append(r.obs, o.Obs...), append(r.events, o.Events...)
	r.seasons, r.cellCover = append(r.seasons, o.Seasons...), append(r.cellCover, o.CellCover...)
	r.cycles, r.inds = append(r.cycles, o.Cycles...), append(r.inds, o.Indicator)
}

func (r *batchRows) count(c map[string]int64) {
	c["talhoes"] += int64(len(r.inds))
	c["cells"] += int64(len(r.cells))
	c["observations"] += int64(len(r.obs))
	c["events"] += int64(len(r.events))
	c["seasons"] += int64(len(r.seasons))
	c["cell_cover"] += int64(len(r.cellCover))
	c["cycles"] += int64(len(r.cycles))
}

// write writes one staging Parquet file per dataset into dir.
func (r *batchRows) write(ctx context.Context, dir string, o export.Options) error {
	for _, w := range []struct {
		name  string
		write func(*bytes.Buffer) error
	}{
		{"cells", func(b *bytes.Buffer) error { return export.Write(b, r.cells, o) }},
		{"observations", func(b *bytes.Buffer) error { return export.Write(b, r.obs, o) }},
		{"events", func(b *bytes.Buffer) error { return export.Write(b, r.events, o) }},
		{"seasons", func(b *bytes.Buffer) error { return export.Write(b, r.seasons, o) }},
		{"cell_cover", func(b *bytes.Buffer) error { return export.Write(b, r.cellCover, o) }},
		{"cycles", func(b *bytes.Buffer) error { return export.Write(b, r.cycles, o) }},
		{"indicators", func(b *bytes.Buffer) error { return export.Write(b, r.inds, o) }},
	} {
		var buf bytes.Buffer
		if err := w.write(&buf); err != nil {
			return fmt.Errorf("write %s of batch: %w", w.name, err)
		}
		if err := storage.WriteFile(ctx, storage.Join(dir, w.name+".parquet"), buf.Bytes()); err != nil {
			return err
		}
	}
	return nil
}

// publish merges the committed batches of the shard into one part file per
// dataset. Batches hold disjoint, increasing ranges of talhão ids, so
// concatenating them keeps the rows sorted by field, cell and date. Each
// part is streamed to a temporary file (one batch and one row group in
// memory at a time), hashed as it is written, and then published
// atomically. It returns the parts as outputs of run.json.
func (s *stage) publish(ctx context.Context, nb int, counts map[string]int64) ([]export.Output, error) {
	sh := s.in.cfg.Shard
	var outs []export.Output
	for _, name := range datasets {
		rel := export.PartName(name, sh.Index, max(sh.Count, 1))
		o, err := s.publishPart(ctx, nb, name, storage.Join(s.in.cfg.Out, rel))
		if err != nil {
			return nil, err
		}
		o.Path, o.Rows = rel, counts[name]
		if name == "indicators" {
			o.Rows = counts["talhoes"]
		}
		outs = append(outs, o)
	}
	return outs, nil
}

// publishPart writes and publishes one dataset's part file at loc.
func (s *stage) publishPart(ctx context.Context, nb int, name, loc string) (export.Output, error) {
	o := export.Options{Version: s.in.cfg.Version, RowGroupRows: PartRowGroupRows}
	f, err := storage.CreateTemp(loc)
	if err != nil {
		return export.Output{}, err
	}
	h := &hashCounter{h: sha256.New()}
	bw := bufio.NewWriterSize(io.MultiWriter(f, h), 1<<20)
	switch name {
	case "cells":
		err = mergeBatches[export.CellRow](ctx, s, nb, name, bw, o)
	case "observations":
		err = mergeBatches[export.ObsRow](ctx, s, nb, name, bw, o)
	case "events":
		err = mergeBatches[export.EventRow](ctx, s, nb, name, bw, o)
	case "seasons":
		err = mergeBatches[export.SeasonRow](ctx, s, nb, name, bw, o)
	case "cell_cover":
		err = mergeBatches[export.CellCoverRow](ctx, s, nb, name, bw, o)
	case "cycles":
		err = mergeBatches[export.CycleRow](ctx, s, nb, name, bw, o)
	case "indicators":
		err = mergeBatches[export.IndicatorRow](ctx, s, nb, name, bw, o)
	}
	if err == nil {
		err = bw.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return export.Output{}, fmt.Errorf("publish %s: %w", name, err)
	}
	if err := storage.PutFile(ctx, loc, f.Name()); err != nil {
		return export.Output{}, err
	}
	return export.Output{Bytes: h.n, SHA256: hex.EncodeToString(h.h.Sum(nil))}, nil
}

// hashCounter hashes and counts what is written through it.
type hashCounter struct {
	h hash.Hash
	n int64
}

func (c *hashCounter) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	return c.h.Write(p)
}

// publishPayloads moves the staged payloads of the nb batches to sinm/
// (a rename on a local disk; a copy on S3). A payload whose staging copy
// is gone was moved by an earlier, interrupted publish: it is kept when
// its final file exists.
func (s *stage) publishPayloads(ctx context.Context, batches [][]export.Output) error {
	out := s.in.cfg.Out
	for b, ps := range batches {
		for _, p := range ps {
			src, dst := storage.Join(s.stagingDir(b), p.Path), storage.Join(out, p.Path)
			if err := movePayload(ctx, src, dst); err != nil {
				return fmt.Errorf("publish payload of talhão %s: %w", p.FieldID, err)
			}
		}
	}
	return nil
}

func movePayload(ctx context.Context, src, dst string) error {
	if storage.KindOf(dst) == storage.Local {
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		err := os.Rename(src, dst)
		if errors.Is(err, fs.ErrNotExist) {
			if _, serr := os.Stat(dst); serr == nil {
				return nil
			}
		}
		return err
	}
	b, err := storage.ReadFile(ctx, src)
	if err != nil {
		if ok, _ := storage.Exists(ctx, dst); ok {
			return nil
		}
		return err
	}
	return storage.WriteFile(ctx, dst, b)
}

// mergeBatches writes the rows of the nb staging files of a dataset to out,
// in batch order, through export.Writer.Copy: a chunk of rows in memory at
// a time, not a batch's rows. A local staging file is read in place; a
// remote one is fetched whole (one batch's compressed file).
func mergeBatches[T export.Row](ctx context.Context, s *stage, nb int, name string, out io.Writer, o export.Options) error {
	w := export.NewWriter[T](out, o)
	for b := 0; b < nb; b++ {
		loc := storage.Join(s.stagingDir(b), name+".parquet")
		if err := copyBatch(ctx, w, loc); err != nil {
			return fmt.Errorf("batch %d: %w", b, err)
		}
	}
	return w.Close()
}

func copyBatch[T export.Row](ctx context.Context, w *export.Writer[T], loc string) error {
	if storage.KindOf(loc) == storage.Local {
		f, err := os.Open(loc)
		if err != nil {
			return err
		}
		defer f.Close()
		st, err := f.Stat()
		if err != nil {
			return err
		}
		return w.Copy(f, st.Size())
	}
	raw, err := storage.ReadFile(ctx, loc)
	if err != nil {
		return err
	}
	return w.Copy(bytes.NewReader(raw), int64(len(raw)))
}

// cleanup removes the staging files of a published shard. Failures to
// remove are harmless (a later run ignores stale staging with another hash).
func (s *stage) cleanup(ctx context.Context, nb int) {
	if storage.KindOf(s.in.cfg.Out) == storage.Local {
		staging := storage.Join(s.in.cfg.Out, "_staging")
		_ = os.RemoveAll(storage.Join(staging, s.in.cfg.Shard.Part()))
		_ = os.Remove(staging) // only when no other shard is still staging
		return
	}
	for b := 0; b < nb; b++ {
		files, err := storage.List(ctx, s.stagingDir(b))
		if err != nil {
			continue
		}
		for _, f := range files {
			_ = storage.Remove(ctx, f)
		}
	}
}

// payload builds the SINM JSON of one talhão.
func (s *stage) payload(g grid.Grid, out fieldOut) ([]byte, error) {
	p, err := sinm.BuildPayload(sinm.PayloadInput{
		Field: g.Field, Indicator: out.Indicator, Cells: out.Cells, Observations: out.Obs,
		Events: out.Events, Seasons: out.Seasons, Cycles: out.Cycles,
		CNPJEmpresaSensoriamento: s.in.cfg.OperatorCNPJ, UndeclaredPracticesAsZero: s.in.cfg.UndeclaredPracticesAsZero,
	}, s.in.cfg.Codes)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := sinm.WritePayload(&buf, p); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// removeStaleTemps deletes the temporary files (".name.tmp-*", see
// storage.WriteFile) that a killed process of this shard left under a local
// output folder, so a rerun leaves exactly the files of a clean run. Only
// the temporary files of names this shard writes are removed (its parts,
// manifest, lock, payloads and staging); other shards' and a user's files
// are left alone.
func removeStaleTemps(out string, sh Shard, owned []grid.Field) {
	targets := map[string]bool{manifestName(sh): true, lockName(sh): true, keysName(sh): true}
	for _, name := range datasets {
		targets[export.PartName(name, sh.Index, max(sh.Count, 1))] = true
	}
	for _, f := range owned {
		targets[sinm.PayloadName(f.ID)] = true
	}
	dirs := map[string]bool{}
	for t := range targets {
		dirs[path.Dir(t)] = true
	}
	for d := range dirs {
		entries, _ := os.ReadDir(filepath.Join(out, filepath.FromSlash(d)))
		for _, e := range entries {
			name := e.Name()
			i := strings.LastIndex(name, ".tmp-")
			if e.IsDir() || !strings.HasPrefix(name, ".") || i < 0 || !targets[path.Join(d, name[1:i])] {
				continue
			}
			_ = os.Remove(filepath.Join(out, filepath.FromSlash(d), name))
		}
	}
	staging := filepath.Join(out, "_staging", sh.Part())
	_ = filepath.WalkDir(staging, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasPrefix(d.Name(), ".") && strings.Contains(d.Name(), ".tmp-") {
			_ = os.Remove(p)
		}
		return nil
	})
}

// PartRowGroupRows caps the rows per row group of the published part files.
// The Parquet writer holds one row group in memory, so this bounds the
// memory of publishing (about 128 Ki observation rows, like DuckDB's 122,880
// row groups) whatever the size of the shard.
const PartRowGroupRows = 128 << 10
