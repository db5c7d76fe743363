package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/manejo/manejo/coverage"
	"github.com/manejo/manejo/export"
	"github.com/manejo/manejo/grid"
	"github.com/manejo/manejo/series"
	"github.com/manejo/manejo/sinm"
	"github.com/manejo/manejo/slope"
	"github.com/manejo/manejo/stacapi"
	"github.com/manejo/manejo/storage"
)

// inputs holds what every batch shares.
type inputs struct {
	cfg    Config
	cat    *series.Catalog
	access *stacapi.Access // signs the catalog again before each batch; nil when nothing needs it
	// searchErr, when set, is the failed STAC API search: every batch's
	// talhões are incomplete (searchIncomplete).
	searchErr error
	dem       *slope.DEM
	// demStuck is set when a DEM read passed storage.CallTimeout: the
	// abandoned read may still hold the dataset, so later talhões skip the
	// DEM and the DEM is not closed (Close would wait for that read).
	demStuck atomic.Bool
	declared coverage.Declarations
	history  map[string]coverage.History // declared crop histories by talhão (--crops); nil without
	// budget is the run's retry budget, shared by its batches' samples.
	budget *series.RetryBudget
	finger map[string]string // input location → sha256 or description
	roles  map[string]string // input location → role (fields, catalog, ...)
	params string            // hash of the parameters that shape the results
	// slopes are the mean slopes an observation table gave, by talhão
	// (AnalyseTable); nil for a run, whose slope comes from the DEM.
	slopes map[string]float64
	// points is set when the grids' cells are an observation table's
	// points, without polygons (AnalyseTable).
	points bool
}

// open reads the talhões, the declared sowings, the catalog and the DEM,
// and returns the talhões of this shard sorted by id. r.in is set even on
// error once the DEM is open, so the caller can close it.
func (r *run) open(ctx context.Context) ([]grid.Field, error) {
	cfg, m := r.cfg, r.m
	in := &inputs{cfg: cfg, budget: series.NewRetryBudget(cfg.RetryBudget), finger: map[string]string{}, roles: map[string]string{
		cfg.Fields: "fields", cfg.Catalog: "catalog", cfg.DEM: "dem", cfg.Sowing: "sowing", cfg.Crops: "crops"}}
	// The DEM, the sowing file, a static catalog and the inputs' sizes need
	// nothing from the talhões: they are read while the talhões are.
	dem, sowing, crops := r.startDEM(ctx), r.startSowing(ctx), r.startCrops(ctx)
	static, sizes := r.startCatalog(ctx), r.startSizes(ctx)
	demTaken := false
	defer func() {
		if !demTaken {
			discardDEM(dem)
		}
	}()
	t0 := time.Now()
	fields, readErrs, err := readFields(ctx, cfg, in.finger)
	if err != nil {
		return nil, err
	}
	m.Record("read_fields", time.Since(t0))
	owned := r.owned(fields, readErrs, r.shardTiles(static))
	r.logf("%d talhões in %s, %d in this shard, %d unreadable", len(fields)+len(readErrs), cfg.Fields, len(owned), len(m.Failures))
	known := make([]string, 0, len(fields)+len(readErrs)) // every talhão of the input, for the sowing file's ids
	for _, f := range fields {
		known = append(known, f.ID)
	}
	for _, e := range readErrs {
		known = append(known, fieldIDOf(e))
	}
	if err := r.readSowing(in, known, sowing); err != nil {
		return nil, err
	}
	if err := r.readCrops(in, known, crops); err != nil {
		return nil, err
	}
	if err := r.loadCatalog(ctx, in, owned, static); err != nil {
		return nil, err
	}
	demTaken = true
	err = r.openDEM(ctx, in, owned, dem)
	r.in = in
	if err == nil {
		err = checkCodes(cfg, in.cat)
	}
	if err == nil {
		err = checkHrefs(cfg, in.cat)
	}
	if err != nil {
		return nil, err
	}
	in.params = paramsHash(cfg, in.finger)
	r.sizes = sizes // waited for by finish, which writes them
	for k, v := range in.finger {
		m.Inputs = append(m.Inputs, export.Input{Role: in.roles[k], Path: k, SHA256: v})
	}
	sort.Slice(m.Inputs, func(i, j int) bool { return m.Inputs[i].Path < m.Inputs[j].Path })
	m.ParamsHash = in.params
	return owned, nil
}

// shardTiles is the image tiles of a static catalog (imageTiles), waited
// for when spatial shards are planned on blocks; nil otherwise (a STAC API
// is searched with the shard's talhões, so every tile a talhão lies in
// counts). A catalog that cannot be read gives nil here and fails the run
// in loadCatalog, before any talhão is computed.
func (r *run) shardTiles(static *later[loadedCatalog]) map[tileID]bool {
	if static == nil || r.cfg.Shard.Count <= 1 || r.cfg.ShardBy == ShardByHash || r.cfg.ShardBlockPx < 0 {
		return nil
	}
	lc, err := static.get()
	if err != nil {
		return nil
	}
	return imageTiles(lc.cat)
}

// owned records the unreadable talhões of this shard in the manifest and
// the talhões another shard owns in r.others, and
// returns the readable ones, sorted by id; tiles are the imagery's tiles
// spatial shards are planned on (nil: every tile).
func (r *run) owned(fields []grid.Field, readErrs []error, tiles map[tileID]bool) []grid.Field {
	r.others = map[string]bool{}
	for _, e := range readErrs {
		id := fieldIDOf(e)
		if id != "" && !r.cfg.Shard.Owns(id) {
			r.others[id] = true
			continue
		}
		if id == "" && r.cfg.Shard.Index != 0 {
			continue // unnamed bad features are reported by shard 0 only
		}
		r.m.addFailure(id, "read", e.Error())
	}
	var owned []grid.Field
	clash := caseClashes(fields)
	r.shardOf = r.cfg.assignment(fields, tiles)
	r.all = fields
	for _, f := range fields {
		if r.shardOf(f.ID) != r.cfg.Shard.Index {
			r.others[f.ID] = true
			continue
		}
		if other, ok := clash[f.ID]; ok {
			r.m.addFailure(f.ID, "read", fmt.Sprintf("its payload file name %s differs only in case from that of talhão %s (%s): case-insensitive disks would merge them; rename one", sinm.PayloadName(f.ID), other, sinm.PayloadName(other)))
			continue
		}
		owned = append(owned, f)
	}
	sort.Slice(owned, func(i, j int) bool { return owned[i].ID < owned[j].ID })
	return owned
}

// caseClashes maps each talhão whose payload file name equals another's
// but for case to that other talhão (both fail: which one a
// case-insensitive disk would keep is not ours to choose).
func caseClashes(fields []grid.Field) map[string]string {
	byFold := map[string]string{}
	clash := map[string]string{}
	for _, f := range fields {
		k := strings.ToLower(sinm.PayloadName(f.ID))
		if other, ok := byFold[k]; ok && other != f.ID {
			clash[f.ID], clash[other] = other, f.ID
			continue
		}
		byFold[k] = f.ID
	}
	return clash
}

// readSowing reads the declared sowing dates, when given: a file with no
// usable row is an error; bad rows, and declared ids that are not among the
// talhões (known), are warnings in run.json and on the progress output.
// raw is the file's read, started by startSowing.
func (r *run) readSowing(in *inputs, known []string, raw *later[[]byte]) error {
	src := r.cfg.Sowing
	if src == "" {
		return nil
	}
	b, err := raw.get()
	if err != nil {
		return fmt.Errorf("read sowing dates: %w", err)
	}
	in.finger[src] = sha(b)
	d, err := coverage.ReadSowingCSV(bytes.NewReader(b), r.cfg.AgriYearStart)
	if errors.Is(err, coverage.ErrNoSowing) {
		return fmt.Errorf("sowing dates %s: %w", src, err)
	}
	// Bad lines are reported; the good ones are used.
	for _, e := range []error{err, d.CheckIDs(known)} {
		if e != nil {
			r.m.Warnings = append(r.m.Warnings, fmt.Sprintf("%s: %v", src, e))
			r.logf("%s: %v", src, e)
		}
	}
	in.declared = d
	return nil
}

// loadCatalog loads the STAC catalog (static: the one startCatalog began
// reading, nil for an API); rejected items are counted as skipped.
func (r *run) loadCatalog(ctx context.Context, in *inputs, owned []grid.Field, static *later[loadedCatalog]) error {
	t0 := time.Now()
	src := r.cfg.Catalog
	cat, problems, finger, err := r.openCatalog(ctx, in, owned, static)
	if err != nil {
		return err
	}
	in.cat, in.access = cat, r.access()
	for _, p := range problems {
		r.m.addSkipped("catalog", p.Error())
	}
	in.finger[src] = finger
	r.m.Record("load_catalog", time.Since(t0))
	r.logf("catalog %s: %d items, %d rejected", src, len(cat.Items), len(problems))
	return nil
}

// openDEM opens the elevation model, when given. A DEM that cannot be
// opened, has no CRS or is coarser than IN 6.3 allows is a configuration
// error: every talhão would lack its slope. pre is the DEM startDEM began
// opening (nil for a STAC collection, opened here from the talhões' tiles).
func (r *run) openDEM(ctx context.Context, in *inputs, owned []grid.Field, pre *later[*slope.DEM]) error {
	src := r.cfg.DEM
	if src == "" {
		return nil
	}
	in.finger[src] = demFinger(src) // a stac: DEM's: its tiles, below
	var dem *slope.DEM
	var err error
	if pre != nil {
		dem, err = pre.get()
	} else {
		dem, err = storage.Bounded(ctx, r.cfg.callDeadline(), "open "+src, func(c context.Context) (*slope.DEM, error) {
			return r.openSTACDEM(c, strings.TrimPrefix(src, "stac:"), owned)
		}, func(d *slope.DEM) { d.Close() })
	}
	if err != nil {
		switch {
		case ctx.Err() != nil || errors.Is(err, ErrCatalogSearch):
			return err
		case !openTransient(err):
			return fmt.Errorf("%w: --dem: %v", ErrConfig, err)
		case r.usesDEM():
			// No configuration error (exit 2, never retried): the run
			// could not finish (exit 1), and an engine retries it.
			return fmt.Errorf("--dem failed transiently, run again: %w", err)
		}
		// The read phase reads no slope: a DEM down for a moment must
		// not end it; the finish opens it again.
		r.logf("--dem failed transiently; the read phase reads no slope, the finish phase opens it: %v", err)
		return nil
	}
	if !r.usesDEM() {
		// Checked (absent, no CRS, too coarse fail here, in seconds,
		// not after a whole read phase), then closed: only its
		// fingerprint goes on, into the exchange key the finish finds.
		dem.Close()
		return nil
	}
	in.dem = dem
	if r.m.DEMSearch != nil {
		in.finger[src] = sha([]byte(strings.Join(r.m.DEMSearch.Tiles, "\n")))
	}
	return nil
}

// usesDEM says whether the run reads slopes: every phase but the read
// phase of the block exchange, which hands observations over and reads no
// slope. That phase still opens the DEM to refuse a wrong one at once
// (review s9 #3), but a transient failure there does not end it (review
// s8 #12).
func (r *run) usesDEM() bool { return r.cfg.Phase != PhaseRead }

// demFinger is the fingerprint of a DEM file or mosaic src: its GDAL path
// (its content is not hashed; a stac: DEM's is its tiles, set by openDEM).
func demFinger(src string) string { return "gdal:" + storage.GDALPath(src) }

// openTransient says whether the DEM's open failed transiently: after
// GDAL's retries (a 503, a time-out), or in words that say so. A DEM that
// did not open within its deadline stays a configuration error, as one
// absent, corrupt or without CRS is (TestInputDeadlines).
func openTransient(err error) bool {
	return errors.Is(err, slope.ErrRetried) || !errors.Is(err, storage.ErrDeadline) && series.TransientMessage(err.Error())
}

// checkCodes requires a satellite code for every collection of the catalog
// that a sensor profile reads, and for the DEM, when given: without one,
// every payload would fail. A collection no profile reads (sentinel-1-grd
// in a frozen search) gives no observation, so it needs no code; its
// scenes are skipped as no-profile.
func checkCodes(cfg Config, cat *series.Catalog) error {
	profiles := series.Profiles()
	maps.Copy(profiles, cfg.SeriesProfiles)
	need := map[string]bool{}
	for _, it := range cat.Items {
		if profiles[it.Collection] != nil {
			need[it.Collection] = true
		}
	}
	if cfg.DEM != "" {
		need["dem"] = true
	}
	var missing []string
	for k := range need {
		if _, ok := cfg.Codes[k]; !ok {
			missing = append(missing, k)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	sort.Strings(missing)
	return fmt.Errorf("%w: --satellite-codes has no code for %s (configured: %s); add them, e.g. --satellite-codes '%s=S0n'",
		ErrConfig, strings.Join(missing, ", "), cfg.Codes.String(), missing[0])
}

// checkHrefs refuses a run whose href rules refuse all, or nearly all,
// of the assets it would read (series.HrefCheck.Misconfigured): that is a
// forgotten --allow-href-prefix or a catalog copied away from its archive,
// not an archive without clear scenes, and reading on would end every
// talhão partial with the cause buried in run.json's skipped scenes.
func checkHrefs(cfg Config, cat *series.Catalog) error {
	profiles := series.Profiles()
	maps.Copy(profiles, cfg.SeriesProfiles)
	h := cat.CheckHrefs(profiles)
	if !h.Misconfigured() {
		return nil
	}
	rule := "the allowed " + strings.Join(h.Allowed, ", ")
	if len(cfg.AllowHrefPrefix) == 0 {
		rule += " (the catalog's own place: no --allow-href-prefix was given)"
	}
	if len(h.Places) == 0 {
		return fmt.Errorf("%w: %d of %d assets have hrefs that are not local files, s3:// or https:// URLs (%s): see docs/security.md",
			ErrConfig, h.Refused, h.Assets, rule)
	}
	places := h.Places[:min(len(h.Places), 3)]
	return fmt.Errorf("%w: %d of %d assets are under %s, outside %s: add --allow-href-prefix %s",
		ErrConfig, h.Refused, h.Assets, strings.Join(places, ", "), rule, strings.Join(places, " --allow-href-prefix "))
}

// sizeOf returns the size in bytes of the file at loc, 0 when it is not a
// single readable file (a directory of items, an API).
func sizeOf(ctx context.Context, loc string) int64 {
	if loc == "" || storage.KindOf(loc) == storage.HTTP {
		return 0
	}
	loc = filepath.ToSlash(loc)
	dir, base := ".", loc
	if i := strings.LastIndex(loc, "/"); i >= 0 {
		dir, base = loc[:i+1], loc[i+1:]
	}
	fsys, err := storage.FS(ctx, dir)
	if err != nil {
		return 0
	}
	st, err := fs.Stat(fsys, base)
	if err != nil || st.IsDir() {
		return 0
	}
	return st.Size()
}

// readFields reads the talhões and fingerprints the source, within
// storage.CallTimeout (a FIFO or a hung file system given as --fields
// would block the read forever).
func readFields(ctx context.Context, cfg Config, finger map[string]string) ([]grid.Field, []error, error) {
	src := cfg.Fields
	type read struct {
		fields []grid.Field
		errs   []error
		hash   string
	}
	res, err := storage.Bounded(ctx, cfg.callDeadline(), "read talhões "+src, func(c context.Context) (read, error) {
		r := read{hash: "remote"}
		if storage.KindOf(src) == storage.Local {
			h, err := hashFile(c, src) // streamed: the file is never whole in memory (issue 19 defect 12)
			if err != nil {
				return r, fmt.Errorf("read talhões: %w", err)
			}
			r.hash = h
		}
		var err error
		r.fields, r.errs, err = ReadFields(c, src, cfg.IDField)
		return r, err
	}, nil)
	if err != nil {
		return nil, nil, err
	}
	finger[src] = res.hash
	return res.fields, res.errs, nil
}

// fieldIDOf returns the talhão id named by a grid read error, if any.
func fieldIDOf(err error) string {
	var fe *grid.FieldError
	if errors.As(err, &fe) {
		return fe.ID
	}
	return ""
}
