package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/manejo/manejo/grid"
	"github.com/manejo/manejo/series"
	"github.com/manejo/manejo/storage"
)

// runReadPhase is Run with PhaseRead: under the lease of the shard's read
// phase (_exchange/part-i-of-n.lock, apart from the shard's own, which its
// finish phase holds), it reads the scenes the plan gives this shard for
// every talhão under them and hands the observations over. A retry after a
// complete read phase with the same inputs does nothing; one after a kill
// reads again (nothing is published before the marker).
func runReadPhase(ctx context.Context, cfg Config, start time.Time) (Summary, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	if err := checkFolder(ctx, cfg.Out); err != nil {
		return Summary{}, err
	}
	runID := newRunID(start)
	r := &run{cfg: cfg, start: start, m: newManifest(cfg, start, runID), min: series.NewMinimum()}
	loc := exchangeDir(cfg.Out, cfg.Shard) + ".lock"
	lk, err := acquireLeaseAt(ctx, loc, runID, leaseTimesOf(cfg.LeaseTTL), func(held leaseInfo) {
		r.logf("waiting for the lease %s: held by run %s (host %s)", loc, held.RunID, held.Host)
	}, cancel)
	if err != nil {
		return Summary{}, err
	}
	defer lk.release()
	err = r.readPhase(ctx)
	return Summary{RunID: runID, Manifest: storage.Join(exchangeDir(cfg.Out, cfg.Shard), "_SUCCESS")}, leaseCause(ctx, err)
}

// readPhase opens the inputs, plans the exchange and, unless a complete
// read phase of the same inputs and plan is there, reads and hands over.
func (r *run) readPhase(ctx context.Context) error {
	_, err := r.open(ctx)
	defer r.closeDEM()
	if err != nil {
		return err
	}
	cfg := r.cfg
	plan, err := r.plan()
	if err != nil {
		return err
	}
	key, dir := exchangeKey(cfg, r.in.finger), exchangeDir(cfg.Out, cfg.Shard)
	if mk, err := readMarker(ctx, storage.Join(dir, "_SUCCESS")); err == nil && !cfg.Force && mk.Key == key && mk.Plan == plan.digest() {
		r.logf("read phase already complete (%s, run %s): nothing to do; --force reads again", dir, mk.RunID)
		return nil
	}
	removeTemps(dir)
	k := cfg.Shard.Index
	var fields []grid.Field
	for _, f := range r.all {
		for _, it := range r.in.cat.Select(f, cfg.From, cfg.AsOf) {
			if plan.owns(k, it) {
				fields = append(fields, f)
				break
			}
		}
	}
	sp, err := newSpill(r.logf)
	if err != nil {
		return err
	}
	defer sp.close()
	hv := newHandover(sp, cfg.Shard.Count, r.shardOf, dir)
	defer hv.close()
	if err := r.readOwned(ctx, sp, hv, fields, func(it *series.Item) bool { return plan.owns(k, it) }); err != nil {
		return err
	}
	objs, err := hv.upload(ctx)
	if err != nil {
		return err
	}
	return r.writeMarker(ctx, dir, exchangeMarker{Key: key, Plan: plan.digest(), Handover: objs, Talhoes: len(fields)})
}

// readOwned reads the owned scenes of fields in the read pass's spatial
// groups, handing each scene read in full to hv.
func (r *run) readOwned(ctx context.Context, sp *spill, hv *handover, fields []grid.Field, owned func(*series.Item) bool) error {
	r.givenUp = map[string]string{}
	r.tr = newTracker(r.start, Progress{Shard: r.cfg.Shard, Phase: "read", ReadTotal: len(fields)})
	stop := r.tickProgress()
	defer stop()
	groups := spatialGroups(fields, r.cfg.ReadCells, r.cfg.Grid)
	r.logf("read phase: the scenes this shard owns, for %d talhões of all shards in %d spatial groups", len(fields), len(groups))
	for _, g := range groups {
		if err := r.readGroup(ctx, sp, g, hv.write, owned); err != nil {
			return err
		}
		if hv.err != nil {
			return hv.err
		}
		r.tr.mu.Lock()
		r.tr.p.ReadDone += len(g)
		r.tr.readFrac = nil
		r.tr.mu.Unlock()
	}
	return nil
}

// noteGivenUp records, in the read phase, the scenes a read still failed
// transiently (Stats.Incomplete), with the first problem reported, for
// the marker: the receiving shards' batches read them again (run.json
// exchange.given_up counts them). Elsewhere (r.givenUp nil) it does
// nothing: the batches retry.
func (r *run) noteGivenUp(st series.Stats) {
	if r.givenUp == nil || len(st.Incomplete) == 0 {
		return
	}
	why := "its reads still failed transiently after the retry budget"
	if len(st.Problems) > 0 {
		why += ": " + st.Problems[0].Error()
	}
	for _, items := range st.Incomplete {
		for _, id := range items {
			if r.givenUp[id] == "" {
				r.givenUp[id] = fmt.Sprintf("scene %s was not read by the read phase of shard %s (run %s): %s", id, r.cfg.Shard, r.m.RunID, why)
			}
		}
	}
}

// writeMarker completes mk with what the phase read and writes it to dir,
// last: its presence says the hand-over is whole.
func (r *run) writeMarker(ctx context.Context, dir string, mk exchangeMarker) error {
	r.recordMinimum()
	mk.RunID, mk.Shard, mk.GivenUp, mk.IO = r.m.RunID, r.cfg.Shard.String(), r.givenUp, r.m.IO
	mk.Scenes = int(r.m.Counts["read_pass_scenes"])
	mk.Seconds, mk.CompletedAt = time.Since(r.start).Seconds(), time.Now().UTC()
	raw, err := json.MarshalIndent(mk, "", " ")
	if err != nil {
		return err
	}
	if err := storage.WriteFile(ctx, storage.Join(dir, "_SUCCESS"), raw); err != nil {
		return err
	}
	var b strings.Builder
	for _, c := range sortedKeys(mk.IO) {
		v := mk.IO[c]
		fmt.Fprintf(&b, " %s %.1f MB (%.2f× its minimum %.1f MB)", c, float64(v.Bytes)/1e6, v.BytesOverMin, float64(v.MinBytes)/1e6)
	}
	r.logf("read phase done in %s: %d scenes for %d talhões, %d given up;%s", time.Since(r.start).Round(time.Millisecond), mk.Scenes, mk.Talhoes, len(mk.GivenUp), b.String())
	return nil
}

// readMarker reads a read phase's marker.
func readMarker(ctx context.Context, loc string) (exchangeMarker, error) {
	var mk exchangeMarker
	raw, err := storage.ReadFile(ctx, loc)
	if err != nil {
		return mk, err
	}
	if err := json.Unmarshal(raw, &mk); err != nil {
		return mk, fmt.Errorf("%s: %w", loc, err)
	}
	return mk, nil
}

// sortedKeys returns the keys of m in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// removeTemps removes the temporary files (".name.tmp-*") a killed read
// phase left in its local folder dir.
func removeTemps(dir string) {
	if storage.KindOf(dir) != storage.Local {
		return
	}
	names, _ := filepath.Glob(filepath.Join(dir, ".*.tmp-*"))
	for _, n := range names {
		_ = os.Remove(n)
	}
}
