package pipeline

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/manejo/manejo/export"
	"github.com/manejo/manejo/grid"
	"github.com/manejo/manejo/internal/clock"
	"github.com/manejo/manejo/series"
	"github.com/manejo/manejo/storage"
)

// ErrHandoverMissing is the finish phase's error when a read phase of the
// same inputs and plan has not finished within Config.ExchangeWait: the
// shards are named; nothing is computed (exit 1, the engine retries).
var ErrHandoverMissing = errors.New("exchange: read phase not finished")

// takeHandover is the finish phase's read: it waits for every shard's
// read phase, and loads what they handed this shard for its talhões not
// committed yet into the spill, which the batches draw on as on the read
// pass's. Scenes their owner could not read, and every scene of a shard
// whose hand-over cannot be read whole, are given up (st.givenUp): their
// talhões end incomplete, never with fewer scenes.
func (r *run) takeHandover(ctx context.Context, st *stage, batches [][]grid.Field) error {
	pending := st.pending(ctx, batches)
	if len(pending) == 0 {
		return nil
	}
	cfg := r.cfg
	plan, err := r.plan()
	if err != nil {
		return err
	}
	markers, err := r.waitMarkers(ctx, exchangeKey(cfg, r.in.finger), plan.digest())
	if err != nil {
		return err
	}
	t0 := time.Now()
	sp, err := newSpill()
	if err != nil {
		return err
	}
	st.spill, st.givenUp = sp, map[string]string{}
	own := make(map[string]bool, len(pending))
	for _, f := range pending {
		own[f.ID] = true
	}
	ex := &export.Exchange{Shards: cfg.Shard.Count, ReadRunID: markers[cfg.Shard.Index].RunID, Total: map[string]export.IO{}}
	for k, mk := range markers {
		if err := r.loadHandover(ctx, st, k, mk, own, ex); err != nil {
			if ctx.Err() != nil {
				return err
			}
			r.giveUpShard(st, plan, k, err, ex)
		}
		for id, why := range mk.GivenUp {
			st.givenUp[id] = why
		}
		ex.Total = addIOs(ex.Total, mk.IO)
	}
	ex.GivenUp = len(st.givenUp)
	r.recordExchange(ex, markers[cfg.Shard.Index])
	r.m.Record("exchange_in", time.Since(t0))
	r.logf("exchange: took %d scene records (%.1f MB) from %d read phases in %s; %d scenes given up",
		ex.HandedInRecords, float64(ex.HandedInBytes)/1e6, len(markers), time.Since(t0).Round(time.Millisecond), len(st.givenUp))
	return nil
}

// waitMarkers waits up to Config.ExchangeWait for the marker of every
// shard's read phase with this key and plan, and returns them by shard.
func (r *run) waitMarkers(ctx context.Context, key, plan string) ([]exchangeMarker, error) {
	cfg := r.cfg
	n := cfg.Shard.Count
	got, have := make([]exchangeMarker, n), make([]bool, n)
	wait := cfg.ExchangeWait
	deadline := time.Now().Add(wait)
	poll := min(5*time.Second, max(wait/20, 20*time.Millisecond))
	for logged := false; ; logged = true {
		var missing []string
		for k := range n {
			if have[k] {
				continue
			}
			mk, err := readMarker(ctx, storage.Join(exchangeDir(cfg.Out, Shard{k, n}), "_SUCCESS"))
			if err == nil && mk.Key == key && mk.Plan == plan {
				got[k], have[k] = mk, true
				continue
			}
			missing = append(missing, Shard{k, n}.String())
		}
		if len(missing) == 0 {
			return got, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%w: the read phase of shard(s) %s has not finished after waiting %s (no %s/_exchange/part-…/_SUCCESS for these inputs and this plan; one left by other inputs or parameters does not count): run `manejo run --phase read` for those shards, then this finish phase again",
				ErrHandoverMissing, strings.Join(missing, ", "), wait, cfg.Out)
		}
		if !logged {
			r.logf("exchange: waiting up to %s for the read phase of shard(s) %s", wait, strings.Join(missing, ", "))
		}
		if err := clock.Sleep(ctx, poll); err != nil {
			return nil, err
		}
	}
}

// loadHandover fetches what shard k's read phase handed this shard,
// checks it whole against its marker, and writes the records of own
// talhões into the spill.
func (r *run) loadHandover(ctx context.Context, st *stage, k int, mk exchangeMarker, own map[string]bool, ex *export.Exchange) error {
	o, ok := mk.Handover[r.cfg.Shard.Part()]
	if !ok {
		return fmt.Errorf("its marker lists no hand-over for shard %s", r.cfg.Shard)
	}
	path, err := fetchHandover(ctx, st.spill, exchangeDir(r.cfg.Out, Shard{k, r.cfg.Shard.Count}), o)
	if err != nil {
		return err
	}
	defer os.Remove(path)
	items := st.itemsByID()
	err = readHandover(path, func(id string, rec spilled) error {
		it := items[rec.itemID]
		if !own[id] || it == nil {
			return nil
		}
		st.spill.write(series.SceneRead{FieldID: id, Item: it, Obs: rec.obs, Reads: rec.reads, ReadBytes: rec.bytes})
		ex.HandedInRecords++
		return nil
	})
	ex.HandedInBytes += o.Bytes
	return err
}

// giveUpShard gives up every scene shard k owns: its hand-over to this
// shard could not be read whole (err).
func (r *run) giveUpShard(st *stage, plan *exchangePlan, k int, err error, ex *export.Exchange) {
	from := Shard{k, r.cfg.Shard.Count}
	why := fmt.Sprintf("the hand-over of shard %s's read phase could not be read whole (%v); run its read phase again (--phase read --force), then this finish phase", from, err)
	for id, o := range plan.owner {
		if o == k {
			st.givenUp[id] = why
		}
	}
	ex.Unreadable = append(ex.Unreadable, from.String())
	r.m.Warnings = append(r.m.Warnings, "exchange: "+why)
	r.logf("exchange: %s", why)
}

// recordExchange writes the exchange into run.json: the totals, what this
// shard's read phase (mine) handed the others, and its reads into io.
func (r *run) recordExchange(ex *export.Exchange, mine exchangeMarker) {
	for part, o := range mine.Handover {
		if part != r.cfg.Shard.Part() {
			ex.HandedOutBytes += o.Bytes
		}
	}
	r.m.IO = addIOs(r.m.IO, mine.IO)
	r.m.Exchange = ex
}

// addIOs adds src to dst by collection (dst made when nil) and returns it.
func addIOs(dst, src map[string]export.IO) map[string]export.IO {
	for c, v := range src {
		if dst == nil {
			dst = map[string]export.IO{}
		}
		x := dst[c]
		x.Add(v)
		dst[c] = x
	}
	return dst
}

// givenUpKnown adds the scenes given up to known: the batch does not read
// them (dropGivenUp makes their talhões incomplete).
func (s *stage) givenUpKnown(known func(string, *series.Item) bool) func(string, *series.Item) bool {
	if len(s.givenUp) == 0 {
		return known
	}
	return func(id string, it *series.Item) bool {
		return s.givenUp[it.ID] != "" || (known != nil && known(id, it))
	}
}

// dropGivenUp records the talhões that need a scene the exchange gave up
// as incomplete (IN 6.5: all available images), with the reason, and
// returns the others.
func (s *stage) dropGivenUp(grids []grid.Grid, sum *batchSummary) []grid.Grid {
	if len(s.givenUp) == 0 {
		return grids
	}
	cfg := s.in.cfg
	kept := grids[:0:0]
	for _, g := range grids {
		var ids []string
		why := ""
		for _, it := range s.in.cat.Select(g.Field, cfg.From, cfg.AsOf) {
			if w := s.givenUp[it.ID]; w != "" {
				ids, why = append(ids, it.ID), w
			}
		}
		if len(ids) == 0 {
			kept = append(kept, g)
			continue
		}
		sum.Incomplete++
		sum.Failures = append(sum.Failures, export.Failure{FieldID: g.Field.ID, Stage: "series", Status: export.StatusIncomplete,
			Reason: fmt.Sprintf("%d scene(s) were not handed over by the shard that reads them, so the series lacks available images (IN 6.5): %s; e.g. %s", len(ids), strings.Join(ids, ", "), why)})
	}
	return kept
}
