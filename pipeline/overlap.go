package pipeline

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/manejo/manejo/grid"
	"github.com/manejo/manejo/series"
	"github.com/manejo/manejo/slope"
	"github.com/manejo/manejo/stacapi"
	"github.com/manejo/manejo/storage"
)

// slopeReads are the slopes of one batch's talhões, read from the DEM in
// the background while the batch's scenes are sampled (startSlopes): on a
// remote DEM their round trips then overlap the scenes' instead of
// following them (issue 15). The values are those assessSlope would read
// itself; only the moment of the read changes.
type slopeReads struct {
	done chan struct{}
	res  map[string]slopeRead // by talhão id; written only before done closes
}

type slopeRead struct {
	sr  slope.Result
	err error
}

// startSlopes starts reading the slope of each grid's talhão, one after the
// other (slope.DEM serializes its reads on its one GDAL dataset anyway). It
// returns nil when there is nothing to read: no DEM, or slopes given by an
// observation table. The caller must wait for it (wait) before the batch
// ends, so no read outlives the batch or races the DEM's Close.
func (s *stage) startSlopes(ctx context.Context, grids []grid.Grid) *slopeReads {
	if s.in.dem == nil || s.in.slopes != nil || len(grids) == 0 {
		return nil
	}
	p := &slopeReads{done: make(chan struct{}), res: make(map[string]slopeRead, len(grids))}
	go func() {
		defer close(p.done)
		for _, g := range grids {
			if s.in.demStuck.Load() || ctx.Err() != nil {
				return // assessSlope reports the stuck DEM or reads no further
			}
			sr, err := s.readSlope(ctx, g.Field)
			p.res[g.Field.ID] = slopeRead{sr, err}
		}
	}()
	return p
}

// wait blocks until every read started by startSlopes has ended.
func (p *slopeReads) wait() {
	if p != nil {
		<-p.done
	}
}

// get returns the slope read for talhão id, once the reads have ended;
// false when it was not read (no prefetch, or the DEM got stuck first).
func (p *slopeReads) get(id string) (slopeRead, bool) {
	if p == nil {
		return slopeRead{}, false
	}
	p.wait()
	r, ok := p.res[id]
	return r, ok
}

// readSlope reads talhão f's slope from the DEM within
// storage.CallTimeout; a read that passes it marks the DEM stuck.
func (s *stage) readSlope(ctx context.Context, f grid.Field) (slope.Result, error) {
	sr, err := storage.Bounded(ctx, s.in.cfg.callDeadline(), "read the DEM window", func(c context.Context) (slope.Result, error) { return s.in.dem.Field(c, f) }, nil)
	if errors.Is(err, storage.ErrDeadline) {
		s.in.demStuck.Store(true)
	}
	return sr, err
}

// demTransient says whether a slope error is a transient failure of the
// DEM, which a later run may get past: a read past its deadline (the DEM
// stuck), one that failed after GDAL's retries (slope.ErrRetried), or one
// whose words name a transient cause (series.TransientMessage: a 503,
// throttling, a time-out, a reset). A DEM that is read and yields no slope
// (outside its extent, all void, a corrupt tile) is not.
func demTransient(err error) bool {
	return errors.Is(err, storage.ErrDeadline) || errors.Is(err, slope.ErrRetried) || series.TransientMessage(err.Error())
}

// later is a value being computed in the background (goLater): the run
// starts the reads that need nothing from each other at once, so on a
// remote store their round trips overlap instead of adding up (issue 15).
type later[T any] struct {
	done chan struct{}
	v    T
	err  error
}

// goLater starts f in the background.
func goLater[T any](f func() (T, error)) *later[T] {
	l := &later[T]{done: make(chan struct{})}
	go func() {
		defer close(l.done)
		l.v, l.err = f()
	}()
	return l
}

// get waits for the value.
func (l *later[T]) get() (T, error) {
	<-l.done
	return l.v, l.err
}

// sizesOf is sizeOf of every location, read at once.
func sizesOf(ctx context.Context, locs []string) map[string]int64 {
	got := make([]*later[int64], len(locs))
	for i, loc := range locs {
		got[i] = goLater(func() (int64, error) { return sizeOf(ctx, loc), nil })
	}
	out := make(map[string]int64, len(locs))
	for i, loc := range locs {
		out[loc], _ = got[i].get()
	}
	return out
}

// startDEM starts opening the DEM (within storage.CallTimeout); nil when
// there is none or it is a STAC collection, whose tiles depend on the
// talhões (openDEM opens those).
func (r *run) startDEM(ctx context.Context) *later[*slope.DEM] {
	src := r.cfg.DEM
	if src == "" || strings.HasPrefix(src, "stac:") {
		return nil
	}
	return goLater(func() (*slope.DEM, error) {
		return storage.Bounded(ctx, r.cfg.callDeadline(), "open "+src, func(c context.Context) (*slope.DEM, error) {
			return slope.Open(c, src)
		}, func(d *slope.DEM) { d.Close() })
	})
}

// discardDEM closes a DEM startDEM opened that the run will not use (it
// failed before openDEM).
func discardDEM(l *later[*slope.DEM]) {
	if l == nil {
		return
	}
	if d, err := l.get(); err == nil {
		d.Close()
	}
}

// startSowing starts reading the sowing file; nil when there is none.
func (r *run) startSowing(ctx context.Context) *later[[]byte] {
	if r.cfg.Sowing == "" {
		return nil
	}
	return goLater(func() ([]byte, error) { return storage.ReadFile(ctx, r.cfg.Sowing) })
}

// loadedCatalog is what LoadCatalog returned.
type loadedCatalog struct {
	cat      *series.Catalog
	problems []error
}

// startCatalog starts reading the run's catalog when it is static (a
// file, an Item directory, NDJSON: nothing in it depends on the talhões),
// so it is read while the talhões are; nil for what may be a STAC API
// root, whose search needs the talhões' footprints.
func (r *run) startCatalog(ctx context.Context) *later[loadedCatalog] {
	src := r.cfg.Catalog
	if stacapi.MaybeAPI(src) {
		return nil
	}
	return goLater(func() (loadedCatalog, error) {
		cat, problems := LoadCatalog(ctx, src, r.cfg.AllowHrefPrefix)
		return loadedCatalog{cat, problems}, nil
	})
}

// startSizes starts reading the size of each input file of the run
// (sizesOf), for run.json's inputs: nothing waits for them before the
// manifest is written, so on a remote store their round trips overlap the
// run's reads instead of delaying the first scene.
func (r *run) startSizes(ctx context.Context) *later[map[string]int64] {
	var locs []string
	for _, loc := range []string{r.cfg.Fields, r.cfg.Catalog, r.cfg.DEM, r.cfg.Sowing, r.cfg.Crops} {
		if loc != "" && !slices.Contains(locs, loc) {
			locs = append(locs, loc)
		}
	}
	return goLater(func() (map[string]int64, error) { return sizesOf(ctx, locs), nil })
}
