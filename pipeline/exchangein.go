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
// pass's. A scene its owner could not read, and every scene of a shard
// whose hand-over cannot be read whole, are not in the spill: the
// batches read them as they read what a read pass lacks, within this
// run's retry budget, and a scene still failing then makes its talhões
// incomplete (dropIncomplete), never a shorter series. A transient fault
// of a read phase therefore costs bytes, not talhões, and an engine's
// retry of the finish recovers what still failed.
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
	sp, err := newSpill(r.logf)
	if err != nil {
		return err
	}
	st.spill = sp
	givenUp := map[string]bool{}
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
			r.unreadableShard(plan, k, err, ex, givenUp)
		}
		for id := range mk.GivenUp {
			givenUp[id] = true
		}
		ex.Total = addIOs(ex.Total, mk.IO)
	}
	ex.GivenUp = len(givenUp)
	r.recordExchange(ex, markers[cfg.Shard.Index])
	r.m.Record("exchange_in", time.Since(t0))
	r.logf("exchange: took %d scene records (%.1f MB) from %d read phases in %s; %d scenes not handed over, read by the batches",
		ex.HandedInRecords, float64(ex.HandedInBytes)/1e6, len(markers), time.Since(t0).Round(time.Millisecond), len(givenUp))
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

// unreadableShard records that shard k's hand-over to this shard could
// not be read whole (err): the scenes it owns are left to the batches.
func (r *run) unreadableShard(plan *exchangePlan, k int, err error, ex *export.Exchange, givenUp map[string]bool) {
	from := Shard{k, r.cfg.Shard.Count}
	for id, o := range plan.owner {
		if o == k {
			givenUp[id] = true
		}
	}
	ex.Unreadable = append(ex.Unreadable, from.String())
	why := fmt.Sprintf("the hand-over of shard %s's read phase could not be read whole (%v): the batches read its scenes themselves", from, err)
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
