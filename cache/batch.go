package cache

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/manejo/manejo/grid"
	"github.com/manejo/manejo/series"
	"golang.org/x/sync/errgroup"
)

// Entry states of a talhão when a batch begins (Stats.Entries).
const (
	StateHit     = "hit"     // a partition sampled as this run samples
	StateNew     = "new"     // no partition: the talhão is read whole
	StateStale   = "stale"   // polygon, grid or manejo version changed: read whole
	StateCorrupt = "corrupt" // unreadable, altered or foreign: read whole, rebuilt
	StateError   = "error"   // the store failed: read whole, written again
)

// ioWorkers bounds the partitions read or written at once.
const ioWorkers = 8

// Stats is what the cache did for one batch (the last sampling attempt for
// the pair and scene counts).
type Stats struct {
	Entries map[string]int // talhões by entry state
	// PairsServed and PairsRead count talhão × scene pairs taken from the
	// cache and read; ObsServed the observations taken from the cache.
	PairsServed, PairsRead, ObsServed int
	// ScenesServed counts the selected scenes no talhão had to read;
	// ReadsSaved and BytesSaved are the GDAL calls and pixel bytes those
	// scenes cost when they were read (series.SceneRead).
	ScenesServed           int
	ReadsSaved, BytesSaved int64
	// Written counts partitions written and WrittenBytes their size.
	Written      int
	WrittenBytes int64
	// Warnings name the partitions found corrupt or not written.
	Warnings []string
}

// Batch is the cache's part in sampling one batch of talhões: which
// (talhão, scene) pairs it can serve (Known, Cached), what the scenes read
// gave (Record), and writing the partitions back (Save).
type Batch struct {
	c        *Cache
	version  string
	profiles map[string]*series.Profile
	fields   map[string]*field
	order    []string
	Stats    Stats

	mu     sync.Mutex
	fps    map[*series.Item]string
	pkeys  map[string]string
	scenes map[*series.Item]*sceneUse // this attempt
}

// field is one talhão's cached state.
type field struct {
	id, grid, state string
	items           map[string]Item
	obs             map[string][]series.Obs // by item id
	dirty           bool
}

type sceneUse struct {
	read  bool
	reads int64
	bytes int64
}

// Begin loads the partitions of the grids' talhões (up to ioWorkers at
// once) and keeps those sampled as this run samples: the same polygon,
// grid options and cells (GridKey, with gridOpts) and manejo version.
// profiles are the run's profile overrides (series.Options.Profiles). A
// partition that cannot be trusted is reported in Stats.Warnings and its
// talhão read whole; the run goes on. The error is non-nil only when ctx
// is cancelled.
func (c *Cache) Begin(ctx context.Context, grids []grid.Grid, gridOpts grid.Options, version string, profiles map[string]*series.Profile) (*Batch, error) {
	b := &Batch{c: c, version: version, profiles: series.Profiles(), fields: map[string]*field{},
		fps: map[*series.Item]string{}, pkeys: map[string]string{}, Stats: Stats{Entries: map[string]int{}}}
	for k, p := range profiles {
		b.profiles[k] = p
	}
	loaded := make([]*field, len(grids))
	var eg errgroup.Group
	eg.SetLimit(ioWorkers)
	for i, g := range grids {
		eg.Go(func() error {
			loaded[i] = b.load(ctx, g, GridKey(g, gridOpts))
			return nil
		})
	}
	_ = eg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for _, f := range loaded {
		b.fields[f.id] = f
		b.order = append(b.order, f.id)
		b.Stats.Entries[f.state]++
	}
	return b, nil
}

// load reads one talhão's partition and decides its state.
func (b *Batch) load(ctx context.Context, g grid.Grid, key string) *field {
	f := &field{id: g.Field.ID, grid: key, state: StateNew, items: map[string]Item{}, obs: map[string][]series.Obs{}}
	e, err := b.c.Load(ctx, f.id)
	switch {
	case errors.Is(err, ErrCorrupt):
		f.state = StateCorrupt
		b.warn(fmt.Sprintf("%v; the talhão is read whole and its partition rebuilt", err))
		return f
	case err != nil:
		f.state = StateError
		b.warn(fmt.Sprintf("cache: read the partition of talhão %s: %v; the talhão is read whole", f.id, err))
		return f
	case e == nil:
		return f
	case e.Meta.Grid != key || e.Meta.Version != b.version:
		f.state = StateStale
		return f
	}
	f.state = StateHit
	for _, it := range e.Meta.Items {
		f.items[it.ID] = it
	}
	for _, o := range e.Obs {
		f.obs[o.ItemID] = append(f.obs[o.ItemID], o)
	}
	return f
}

func (b *Batch) warn(s string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.Stats.Warnings = append(b.Stats.Warnings, s)
}

// fingerprint memoises ItemFingerprint.
func (b *Batch) fingerprint(it *series.Item) string {
	fp, ok := b.fps[it]
	if !ok {
		fp = ItemFingerprint(it)
		b.fps[it] = fp
	}
	return fp
}

// profileKey is the ProfileKey of the profile a collection is read with,
// "" when it has none (such scenes are skipped, never cached).
func (b *Batch) profileKey(collection string) string {
	k, ok := b.pkeys[collection]
	if !ok {
		k = ProfileKey(b.profiles[collection])
		b.pkeys[collection] = k
	}
	return k
}

// Options returns o set to sample with the cache: Known, Cached and
// OnScene are this batch's. Call it for every sampling attempt: scenes an
// earlier attempt read in full are served to the next one.
func (b *Batch) Options(o series.Options) series.Options {
	b.Stats.PairsServed, b.Stats.PairsRead, b.Stats.ObsServed = 0, 0, 0
	b.scenes = map[*series.Item]*sceneUse{}
	o.Known, o.OnScene = b.known, b.record
	o.Cached = o.Cached[:0:0]
	for _, id := range b.order {
		for _, obs := range b.fields[id].obs {
			o.Cached = append(o.Cached, obs...)
		}
	}
	return o
}

// known says whether the cache holds the talhão's observations of the item
// as read now: same fingerprint, same profile rules.
func (b *Batch) known(fieldID string, it *series.Item) bool {
	f := b.fields[fieldID]
	su := b.scenes[it]
	if su == nil {
		su = &sceneUse{}
		b.scenes[it] = su
	}
	var ok bool
	var ci Item
	if f != nil {
		ci, ok = f.items[it.ID]
		ok = ok && ci.Fingerprint == b.fingerprint(it) && ci.Profile != "" && ci.Profile == b.profileKey(it.Collection)
	}
	if !ok {
		su.read = true
		b.Stats.PairsRead++
		return false
	}
	b.Stats.PairsServed++
	b.Stats.ObsServed += ci.Obs
	su.reads, su.bytes = max(su.reads, ci.Reads), max(su.bytes, ci.ReadBytes)
	return true
}

// record keeps what a scene read in full gave a talhão.
func (b *Batch) record(s series.SceneRead) {
	f := b.fields[s.FieldID]
	if f == nil {
		return
	}
	it := s.Item
	f.items[it.ID] = Item{ID: it.ID, Collection: it.Collection, Date: it.Datetime.UTC().Format(time.DateOnly),
		Fingerprint: b.fingerprint(it), Profile: b.profileKey(it.Collection), Obs: len(s.Obs), Reads: s.Reads, ReadBytes: s.ReadBytes}
	f.obs[it.ID] = append([]series.Obs(nil), s.Obs...)
	f.dirty = true
}

// Sampled closes the accounting of the last sampling attempt: the scenes
// no talhão read, and what reading them had cost.
func (b *Batch) Sampled() {
	b.Stats.ScenesServed, b.Stats.ReadsSaved, b.Stats.BytesSaved = 0, 0, 0
	for _, su := range b.scenes {
		if !su.read {
			b.Stats.ScenesServed++
			b.Stats.ReadsSaved += su.reads
			b.Stats.BytesSaved += su.bytes
		}
	}
}

// Save writes the partitions of the talhões that read scenes, or whose
// partition was stale, corrupt or unreadable, up to ioWorkers at once. A
// partition that cannot be written is a warning: the run's outputs do not
// depend on it, the next run reads those scenes again.
func (b *Batch) Save(ctx context.Context, now time.Time) {
	var eg errgroup.Group
	eg.SetLimit(ioWorkers)
	for _, id := range b.order {
		f := b.fields[id]
		if !f.dirty && f.state != StateStale && f.state != StateCorrupt && f.state != StateError {
			continue
		}
		eg.Go(func() error {
			n, err := b.c.Store(ctx, f.entry(b.version, now))
			b.mu.Lock()
			defer b.mu.Unlock()
			if err != nil {
				b.Stats.Warnings = append(b.Stats.Warnings, fmt.Sprintf("cache: talhão %s not saved: %v", id, err))
				return nil
			}
			b.Stats.Written++
			b.Stats.WrittenBytes += int64(n)
			return nil
		})
	}
	_ = eg.Wait()
}

// entry is the partition of a talhão: items by id, observations by item
// and cell.
func (f *field) entry(version string, now time.Time) *Entry {
	e := &Entry{Meta: Meta{Version: version, FieldID: f.id, Grid: f.grid, WrittenAt: now.UTC()}}
	ids := make([]string, 0, len(f.items))
	for id := range f.items {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		e.Meta.Items = append(e.Meta.Items, f.items[id])
		obs := f.obs[id]
		sort.SliceStable(obs, func(i, j int) bool { return obs[i].CellID < obs[j].CellID })
		e.Obs = append(e.Obs, obs...)
	}
	return e
}
