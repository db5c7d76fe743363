package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"
	"time"

	"github.com/manejo/manejo/export"
	"github.com/manejo/manejo/grid"
	"github.com/manejo/manejo/series"
	"github.com/manejo/manejo/slope"
	"github.com/manejo/manejo/stacapi"
	"github.com/manejo/manejo/storage"
	"github.com/paulmach/orb"
)

// ErrCatalogSearch is Run's error when a STAC API search could not be
// completed (the API kept failing after the retries): the run stops rather
// than compute indicators from a partial series (IN 6.5: all images).
var ErrCatalogSearch = errors.New("the STAC API search is incomplete")

// frozenName is the output file holding the items a search kept.
func frozenName(s Shard) string {
	if s.Count <= 1 {
		return "catalog/items.json"
	}
	return path.Join("catalog", "items-"+s.Part()+".json")
}

// openCatalog loads the run's catalog (findCatalog) by the footprints of
// this shard's talhões and the run's dates; a search is recorded in
// run.json and its items frozen for the output. A search that still fails
// after its retries sets in.searchErr and gives an empty catalog.
func (r *run) openCatalog(ctx context.Context, in *inputs, owned []grid.Field, static *later[loadedCatalog]) (*series.Catalog, []error, string, error) {
	cfg := r.cfg
	cat, problems, finger, res, err := findCatalog(ctx, catalogQuery{src: cfg.Catalog, allow: cfg.AllowHrefPrefix,
		collections: cfg.Collections, fields: owned, from: cfg.From, to: cfg.AsOf, client: r.stacClient(), access: r.access(), static: static})
	if res != nil {
		r.m.CatalogSearch = searchRecord(res, cfg.Collections)
	}
	if errors.Is(err, stacapi.ErrRetriesExhausted) && ctx.Err() == nil {
		// The API kept failing transiently: every talhão of the shard is
		// incomplete (inputs.searchIncomplete), none computed from a
		// partial series, and a re-run searches again.
		if r.m.CatalogSearch == nil {
			r.m.CatalogSearch = &export.CatalogSearch{API: cfg.Catalog, Collections: cfg.Collections, Matched: -1}
		}
		r.m.CatalogSearch.Error = err.Error()
		in.searchErr = err
		r.logf("%v: every talhão of this shard is incomplete", err)
		empty, nerr := series.NewCatalog(nil, cfg.Catalog, cfg.AllowHrefPrefix)
		return empty, nil, "search failed", nerr
	}
	if err != nil || res == nil {
		if res != nil {
			res.Close()
		}
		return cat, problems, finger, err
	}
	defer res.Close()
	if r.frozen, err = freeze(res); err != nil {
		return nil, nil, "", err
	}
	r.m.CatalogSearch.Frozen = frozenName(cfg.Shard)
	return cat, problems, finger, nil
}

// catalogQuery is what findCatalog needs.
type catalogQuery struct {
	src                string
	allow, collections []string
	fields             []grid.Field
	from, to           time.Time
	client             *stacapi.Client
	access             *stacapi.Access
	// static, when set, is the static catalog src already being read
	// (startCatalog); findCatalog takes it instead of reading src again.
	static *later[loadedCatalog]
}

// findCatalog loads a catalog: a STAC API root is searched by the
// footprints of the talhões and the dates (res is the search), anything
// else is read as a static catalog (res nil). It returns the catalog, its
// rejected or dropped items, and the fingerprint of the items taken before
// the access rules sign any href (a SAS token must not change it).
func findCatalog(ctx context.Context, q catalogQuery) (cat *series.Catalog, problems []error, finger string, res *stacapi.Result, err error) {
	var api *stacapi.API
	if stacapi.MaybeAPI(q.src) {
		if api, err = q.client.Detect(ctx, q.src); errors.Is(err, stacapi.ErrNotSTAC) {
			return nil, nil, "", nil, fmt.Errorf("%w: --catalog: %w", ErrConfig, err)
		} else if err != nil {
			return nil, nil, "", nil, fmt.Errorf("%w: %w", ErrCatalogSearch, err)
		}
	}
	if api == nil && len(q.collections) > 0 {
		// Only a search reads them: a static catalog would ignore them.
		return nil, nil, "", nil, fmt.Errorf("%w: --collections %s: %s is a static catalog, not a STAC API root", ErrConfig, strings.Join(q.collections, ","), q.src)
	}
	if api == nil {
		if q.static != nil {
			l, _ := q.static.get()
			cat, problems = l.cat, l.problems
		} else {
			cat, problems = LoadCatalog(ctx, q.src, q.allow)
		}
		if cat == nil {
			err := fmt.Errorf("load catalog %s: %w", q.src, errors.Join(problems...))
			if errors.Is(err, series.ErrBadRule) {
				err = fmt.Errorf("%w: %w", ErrConfig, err)
			}
			return nil, problems, "", nil, err
		}
		finger = catalogFingerprint(cat)
		return cat, problems, finger, nil, q.access.Apply(ctx, cat)
	}
	var fps []orb.Bound
	for _, f := range q.fields {
		fps = append(fps, f.Geometry.Bound())
	}
	sc := stacapi.Config{Collections: q.collections, Footprints: fps, From: q.from, To: q.to, AllowHrefPrefix: q.allow, Client: q.client}
	cat, res, err = stacapi.Find(ctx, api, sc)
	if errors.Is(err, series.ErrBadRule) {
		return nil, nil, "", res, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	if err != nil {
		return nil, nil, "", res, fmt.Errorf("%w: %w", ErrCatalogSearch, err)
	}
	if len(cat.Items) == 0 {
		return nil, res.Problems, "", res, fmt.Errorf("catalog %s: the search found no usable item for these talhões and dates", q.src)
	}
	problems = res.Problems
	for _, d := range res.Dropped {
		problems = append(problems, series.Problem{Item: d.ID, Reason: series.SkipDuplicateItem,
			Detail: fmt.Sprintf("%s: %s/%s kept", d.Reason, d.KeptCollection, d.KeptID)})
	}
	finger = catalogFingerprint(cat)
	return cat, problems, finger, res, q.access.Apply(ctx, cat)
}

// searchIncomplete makes every talhão of a batch incomplete when the
// shard's catalog search failed after its retries (in.searchErr): it
// returns the Stats that dropIncomplete turns into incomplete talhões.
func (in *inputs) searchIncomplete(grids []grid.Grid) (series.Stats, bool) {
	if in.searchErr == nil {
		return series.Stats{}, false
	}
	st := series.Stats{Incomplete: map[string][]string{}}
	for _, g := range grids {
		st.Incomplete[g.Field.ID] = []string{fmt.Sprintf("the STAC API search, which still failed after %d attempts (run.json catalog_search.error)", stacapi.MaxAttempts)}
	}
	return st, true
}

func (r *run) stacClient() *stacapi.Client {
	if r.cfg.STAC != nil {
		return r.cfg.STAC
	}
	return &stacapi.Client{}
}

func (r *run) access() *stacapi.Access {
	if r.cfg.Access == nil {
		r.cfg.Access = stacapi.AccessFromEnv()
	}
	return r.cfg.Access
}

// searchRecord is run.json's record of a search.
func searchRecord(res *stacapi.Result, collections []string) *export.CatalogSearch {
	return &export.CatalogSearch{API: res.API, SearchURL: res.Search, Method: res.Method, Collections: collections,
		Queries: res.Queries, Matched: res.Matched, Returned: res.Returned, Pages: res.Pages, Retries: res.Retries,
		Duplicates: res.Duplicates, SameAcquisition: res.SameAcquisition, Malformed: res.Malformed, Unrequested: res.Unrequested, Kept: res.Kept}
}

// frozenCatalog is a search's frozen ItemCollection, kept in an unlinked
// temporary file (it may be as large as the search's answer) until it is
// published.
type frozenCatalog struct {
	f    *os.File
	size int64
	sha  string // hex
}

// freeze writes the frozen catalog of a search to a temporary file.
func freeze(res *stacapi.Result) (*frozenCatalog, error) {
	f, err := os.CreateTemp("", "manejo-frozen-*.json")
	if err != nil {
		return nil, fmt.Errorf("freeze catalog: %w", err)
	}
	os.Remove(f.Name())
	h := sha256.New()
	if err := stacapi.Freeze(io.MultiWriter(f, h), res); err != nil {
		f.Close()
		return nil, err
	}
	size, err := f.Seek(0, io.SeekCurrent)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("freeze catalog: %w", err)
	}
	return &frozenCatalog{f: f, size: size, sha: hex.EncodeToString(h.Sum(nil))}, nil
}

// publish copies the frozen catalog to loc.
func (fc *frozenCatalog) publish(ctx context.Context, loc string) error {
	tmp, err := storage.CreateTemp(loc)
	if err != nil {
		return err
	}
	_, err = io.Copy(tmp, io.NewSectionReader(fc.f, 0, fc.size))
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("write %s: %w", loc, err)
	}
	return storage.PutFile(ctx, loc, tmp.Name())
}

// publishFrozen writes the frozen catalog of a search into the output, and
// returns its record for run.json (none for a static catalog).
func (r *run) publishFrozen(ctx context.Context) ([]export.Output, error) {
	if r.frozen == nil {
		return nil, nil
	}
	name := frozenName(r.cfg.Shard)
	if err := r.frozen.publish(ctx, storage.Join(r.cfg.Out, name)); err != nil {
		return nil, fmt.Errorf("write %s: %w", name, err)
	}
	return []export.Output{{Path: name, Bytes: r.frozen.size, SHA256: r.frozen.sha}}, nil
}

// FreezeConfig is `manejo catalog search`: an API, collections, a
// footprint (the talhões of Fields, or BBox) and dates, and where to write
// the items.
type FreezeConfig struct {
	API             string
	Collections     []string
	Fields, IDField string
	BBox            []float64
	From, To        time.Time
	Out             string
	AllowHrefPrefix []string
	Client          *stacapi.Client
}

// FreezeCatalog searches a STAC API and writes the items kept, as an
// ItemCollection, to cfg.Out, without running the pipeline; --catalog
// reads that file back as a static catalog.
func FreezeCatalog(ctx context.Context, cfg FreezeConfig) (*stacapi.Result, error) {
	c := cfg.Client
	if c == nil {
		c = &stacapi.Client{}
	}
	api, err := c.Detect(ctx, cfg.API)
	if err != nil {
		return nil, err
	}
	if api == nil {
		return nil, fmt.Errorf("%s is not a STAC API root (no item-search conformance nor rel=search link)", cfg.API)
	}
	sc := stacapi.Config{Collections: cfg.Collections, BBox: cfg.BBox, From: cfg.From, To: cfg.To, Client: c}
	if cfg.Fields != "" {
		fields, bad, err := ReadFields(ctx, cfg.Fields, cfg.IDField)
		if err != nil {
			return nil, err
		}
		if len(bad) > 0 {
			return nil, fmt.Errorf("talhões %s: %w", cfg.Fields, errors.Join(bad...))
		}
		for _, f := range fields {
			sc.Footprints = append(sc.Footprints, f.Geometry.Bound())
		}
	}
	res, err := stacapi.Collect(ctx, api, sc)
	if res != nil {
		defer res.Close()
	}
	if err != nil {
		return res, err
	}
	fc, err := freeze(res)
	if err != nil {
		return res, err
	}
	defer fc.f.Close()
	return res, fc.publish(ctx, cfg.Out)
}

// DEMAssets are the asset keys tried, in order, for a DEM tile:
// Planetary Computer nasadem "elevation", Earth Search cop-dem-glo-30 and
// Planetary Computer cop-dem-glo-30 "data".
var DEMAssets = []string{"data", "elevation", "dem"}

// openSTACDEM opens --dem stac:<collection>: the collection's tiles that
// cover this shard's talhões, found in the --catalog API, signed where
// needed, admitted by the href rules, read as one virtual mosaic.
func (r *run) openSTACDEM(ctx context.Context, coll string, owned []grid.Field) (*slope.DEM, error) {
	cfg := r.cfg
	var api *stacapi.API
	var err error
	if stacapi.MaybeAPI(cfg.Catalog) {
		api, err = r.stacClient().Detect(ctx, cfg.Catalog)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: DEM stac:%s: %w", ErrCatalogSearch, coll, err)
	}
	if api == nil {
		return nil, fmt.Errorf("DEM stac:%s needs --catalog to be a STAC API root", coll)
	}
	var fps []orb.Bound
	for _, f := range owned {
		fps = append(fps, f.Geometry.Bound())
	}
	cat, res, err := stacapi.Find(ctx, api, stacapi.Config{Collections: []string{coll}, Footprints: fps,
		AllowHrefPrefix: cfg.AllowHrefPrefix, Client: r.stacClient(), Access: r.access()})
	if res != nil {
		r.m.DEMSearch = searchRecord(res, []string{coll})
		res.Close()
	}
	if err != nil {
		return nil, fmt.Errorf("%w: DEM stac:%s: %v", ErrCatalogSearch, coll, err)
	}
	var tiles []string
	for _, it := range cat.Items {
		var href string
		for _, k := range DEMAssets {
			if a, ok := it.Assets[k]; ok {
				if a.AccessErr != nil { // an unsigned tile would read as missing
					return nil, fmt.Errorf("%w: DEM stac:%s: item %s: %v", ErrCatalogSearch, coll, it.ID, a.AccessErr)
				}
				href = a.Href
				break
			}
		}
		if href == "" {
			return nil, fmt.Errorf("DEM stac:%s: item %s has none of the assets %v", coll, it.ID, DEMAssets)
		}
		p, err := cat.GDALPath(href)
		if err != nil {
			return nil, fmt.Errorf("DEM stac:%s: item %s: %w", coll, it.ID, err)
		}
		tiles = append(tiles, p)
		r.m.DEMSearch.Tiles = append(r.m.DEMSearch.Tiles, it.Collection+"/"+it.ID)
	}
	if len(tiles) == 0 {
		return nil, fmt.Errorf("DEM stac:%s: no tile covers these talhões", coll)
	}
	return slope.OpenMosaic(ctx, "stac:"+coll, tiles)
}

// allowMissingQA makes the profiles of the AllowMissingQA collections read
// scenes without their QA asset (copies: the built-in profiles and the
// caller's stay as they were).
func (c *Config) allowMissingQA() error {
	profiles, err := series.AllowMissingQA(c.SeriesProfiles, c.AllowMissingQA)
	if err != nil {
		return fmt.Errorf("%w: --allow-missing-qa %w", ErrConfig, err)
	}
	c.SeriesProfiles = profiles
	return nil
}

// resign applies the access rules to the catalog again before a batch is
// read: SAS-signed hrefs get the current token (fetched anew when the old
// one nears its expiry), so a run longer than a token's life never reads
// with a lapsed one.
func (in *inputs) resign(ctx context.Context) error {
	if in.access == nil || in.cat == nil {
		return nil
	}
	if err := in.access.Apply(ctx, in.cat); err != nil {
		return fmt.Errorf("%w: signing the catalog's hrefs: %v", ErrCatalogSearch, err)
	}
	return nil
}
