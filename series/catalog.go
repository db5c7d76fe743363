package series

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/manejo/manejo/grid"
	"github.com/manejo/manejo/storage"
	"github.com/manejo/manejo/zarc"
	"github.com/paulmach/orb"
)

// Sentinel errors of package series.
var (
	// ErrMalformedItem marks a STAC item that cannot be used (no id, no
	// datetime, no bbox or geometry, no assets...).
	ErrMalformedItem = errors.New("series: malformed STAC item")
	// errBadHref marks an asset href that is not a local file, s3:// or
	// https:// URL, or lies outside the allowed prefixes (SkipBadHref), and
	// an http:// catalog.
	errBadHref = errors.New("series: bad asset href")
	// errNoCatalog is returned when the catalog source holds no item at all.
	errNoCatalog = errors.New("series: no STAC items in catalog")
)

// CatalogOptions configure LoadCatalog. The zero value reads catalogs with
// storage.Open (local files, s3://, https://).
type CatalogOptions struct {
	// Open reads catalog documents; nil means storage.Open.
	Open func(ctx context.Context, url string) (io.ReadCloser, error)
	// AllowHrefPrefixes, when not empty, restricts asset hrefs (after
	// resolving relative ones and normalizing them: see href.go) to those
	// at or below one of the prefixes, by scheme, host and whole path
	// segments; others make the scene skipped with reason SkipBadHref.
	// Empty means the catalog's own place: the folder of a local catalog
	// (the folder itself for a folder of items), the bucket of an s3://
	// catalog, the host of an https:// one.
	AllowHrefPrefixes []string
}

// Catalog is a set of STAC items, sorted by datetime then id.
type Catalog struct {
	Items  []*Item
	Source string // where it was read from
	// allow are the normalized rules asset hrefs must match.
	allow []hrefRule
}

// Item is one STAC item (one scene) reduced to what sampling needs.
type Item struct {
	ID         string
	Collection string
	// Datetime is the item's datetime, or its start_datetime when datetime
	// is null (MODIS composites are dated by their first day).
	Datetime time.Time
	BBox     orb.Bound    // lon/lat
	Geometry orb.Geometry // lon/lat; nil when the item had none
	EPSG     int          // proj:epsg, 0 when absent

	// ProcessingBaseline is s2:processing_baseline ("" when absent).
	ProcessingBaseline string
	// BOAOffsetApplied is earthsearch:boa_offset_applied (nil when absent).
	BOAOffsetApplied *bool

	Assets map[string]Asset
	Source string // the document it came from, for messages
}

// Asset is one file of an item.
type Asset struct {
	Href string // resolved: absolute path, s3:// or https:// URL
	// Band is the 1-based band of the file holding this asset: the
	// "manejo:band" field of the asset, 1 when absent.
	Band int
	// Scale, Offset and Nodata come from raster:bands[Band-1]; nil when
	// absent.
	Scale, Offset, Nodata *float64
	// GDALConfig holds KEY=VALUE GDAL options for this asset's opens and
	// reads only (an Earthdata bearer header, requester pays), set by the
	// archive access rules of package stacapi. It may hold a credential:
	// never print or write it.
	GDALConfig []string
	// AccessErr, set by the access rules of package stacapi, is why the
	// asset could not be made readable (a SAS token its endpoint refused
	// or kept failing to give): its scene is not read but skipped, as
	// SkipAccess, or as SkipTransient — its talhões incomplete — when the
	// failure may pass. nil for an asset the rules had nothing to do for.
	AccessErr *AccessError
}

// AccessError is why an archive's access rule could not be applied to an
// asset (Asset.AccessErr). Detail never holds a token or key.
type AccessError struct {
	Detail    string
	Transient bool // the endpoint kept failing with 429/5xx or transport errors
}

func (e *AccessError) Error() string { return e.Detail }

// Problem is an item, asset or file that could not be used, and why.
type Problem struct {
	Item   string     `json:"item"`            // item id ("" when the item has no id)
	Asset  string     `json:"asset,omitempty"` // asset key, "" for item-level problems
	Reason SkipReason `json:"reason"`          // short reason, also the key in Stats.Skipped
	Detail string     `json:"detail,omitempty"`
}

func (p Problem) Error() string {
	s := "item " + p.Item
	if p.Asset != "" {
		s += " asset " + p.Asset
	}
	s += ": " + string(p.Reason)
	if p.Detail != "" {
		s += ": " + p.Detail
	}
	return s
}

// LoadCatalog reads a STAC ItemCollection JSON, a directory of Item JSON
// files (local only) or newline-delimited Items, from a local path, s3:// or
// https:// (http:// is refused). Relative asset hrefs are resolved against
// the document that holds them. Malformed items are returned as errors
// (each a Problem wrapping ErrMalformedItem and naming the item) and
// skipped; the rest is loaded. The catalog is nil only when nothing could be
// read at all.
func LoadCatalog(ctx context.Context, src string, o CatalogOptions) (*Catalog, []error) {
	open := o.Open
	if open == nil {
		open = storage.Open
	}
	docs, isDir, err := catalogDocs(src)
	if err != nil {
		return nil, []error{err}
	}
	allow, err := hrefRules(src, isDir, o.AllowHrefPrefixes)
	if err != nil {
		return nil, []error{err}
	}
	cat := &Catalog{Source: src, allow: allow}
	var errs []error
	for _, d := range docs {
		if err := ctx.Err(); err != nil {
			return nil, append(errs, err)
		}
		items, ierrs := readDocument(func() (io.ReadCloser, error) { return open(ctx, d) }, d)
		cat.Items = append(cat.Items, items...)
		errs = append(errs, ierrs...)
	}
	if len(cat.Items) == 0 {
		return nil, append(errs, fmt.Errorf("load %s: %w", src, errNoCatalog))
	}
	// Duplicate ids keep the first occurrence.
	seen := map[string]bool{}
	kept := cat.Items[:0]
	for _, it := range cat.Items {
		k := it.Collection + "\x00" + it.ID
		if seen[k] {
			errs = append(errs, Problem{Item: it.ID, Reason: SkipDuplicateItem, Detail: "second copy in " + it.Source + " ignored"})
			continue
		}
		seen[k] = true
		kept = append(kept, it)
	}
	cat.Items = kept
	sortItems(cat.Items)
	return cat, errs
}

// NewCatalog is a catalog of items found elsewhere (a STAC API search),
// sorted like LoadCatalog's. Asset hrefs must lie under allow, or, when it
// is empty, on the host of source (the API's root URL).
func NewCatalog(items []*Item, source string, allow []string) (*Catalog, error) {
	rules, err := hrefRules(source, false, allow)
	if err != nil {
		return nil, err
	}
	cat := &Catalog{Items: append([]*Item(nil), items...), Source: source, allow: rules}
	sortItems(cat.Items)
	return cat, nil
}

// sortItems orders items by datetime, then id.
func sortItems(items []*Item) {
	sort.SliceStable(items, func(i, j int) bool {
		a, b := items[i], items[j]
		if !a.Datetime.Equal(b.Datetime) {
			return a.Datetime.Before(b.Datetime)
		}
		return a.ID < b.ID
	})
}

// catalogDocs lists the documents of a catalog: the files of a local
// folder (.json, .geojson, .ndjson), else src itself (http:// refused).
func catalogDocs(src string) (docs []string, isDir bool, err error) {
	if !isURL(src) {
		st, err := os.Stat(src)
		if err != nil {
			return nil, false, fmt.Errorf("open catalog %s: %w", src, err)
		}
		if isDir = st.IsDir(); isDir {
			ents, err := os.ReadDir(src)
			if err != nil {
				return nil, false, fmt.Errorf("list catalog %s: %w", src, err)
			}
			for _, e := range ents {
				n := e.Name()
				if !e.IsDir() && (strings.HasSuffix(n, ".json") || strings.HasSuffix(n, ".geojson") || strings.HasSuffix(n, ".ndjson")) {
					docs = append(docs, filepath.Join(src, n))
				}
			}
		} else {
			docs = []string{src}
		}
	} else {
		if strings.HasPrefix(src, "http://") {
			return nil, false, fmt.Errorf("open catalog %s: %w: use https://", src, errBadHref)
		}
		docs = []string{src}
	}
	return docs, isDir, nil
}

// hrefRules are the rules of the given prefixes, or the catalog's own
// place when none is given.
func hrefRules(src string, isDir bool, prefixes []string) ([]hrefRule, error) {
	rules, err := parseRules(prefixes)
	if err != nil || len(rules) > 0 {
		return rules, err
	}
	r, err := catalogRule(src, isDir)
	if err != nil {
		return nil, fmt.Errorf("catalog %s cannot be the href rule (%v): name where its assets are with --allow-href-prefix: %w", src, err, ErrBadRule)
	}
	return []hrefRule{r}, nil
}

// parseDocument parses one catalog document held in memory (see
// readDocument).
func parseDocument(data []byte, base string) ([]*Item, []error) {
	return readDocument(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }, base)
}

func withIndex(err error, i int, base string) error {
	return fmt.Errorf("%s feature %d: %w", base, i, err)
}

type rawAsset struct {
	Href        string `json:"href"`
	Band        int    `json:"manejo:band"`
	RasterBands []struct {
		Scale  *float64 `json:"scale"`
		Offset *float64 `json:"offset"`
		Nodata any      `json:"nodata"`
	} `json:"raster:bands"`
}

type rawItem struct {
	Type       string              `json:"type"`
	ID         string              `json:"id"`
	Collection string              `json:"collection"`
	BBox       []float64           `json:"bbox"`
	Geometry   json.RawMessage     `json:"geometry"`
	Properties map[string]any      `json:"properties"`
	Assets     map[string]rawAsset `json:"assets"`
}

// ParseItem reduces one STAC Item document to an Item, resolving relative
// hrefs against base (the URL or path it came from). An unusable item is a
// Problem wrapping ErrMalformedItem. It is the constructor other packages
// (a STAC API client) build items with.
func ParseItem(data []byte, base string) (*Item, error) { return parseItem(data, base) }

func parseItem(data []byte, base string) (*Item, error) {
	var r rawItem
	if err := json.Unmarshal(data, &r); err != nil {
		// Try to name the item even when the rest is broken.
		var idOnly struct {
			ID string `json:"id"`
		}
		_ = json.Unmarshal(data, &idOnly)
		return nil, malformed(idOnly.ID, "decode json: "+err.Error())
	}
	it, err := r.item(base)
	if err != nil {
		return nil, malformed(r.ID, err.Error())
	}
	return it, nil
}

// malformed is the error of an unusable item: a Problem wrapping
// ErrMalformedItem.
func malformed(id, detail string) error {
	return fmt.Errorf("%w: %w", Problem{Item: id, Reason: SkipMalformedItem, Detail: detail}, ErrMalformedItem)
}

// item checks a decoded item and reduces it to what sampling needs.
func (r *rawItem) item(base string) (*Item, error) {
	if r.ID == "" {
		return nil, errors.New("no id")
	}
	if r.Type != "" && r.Type != "Feature" {
		return nil, fmt.Errorf("type %q is not Feature", r.Type)
	}
	it := &Item{ID: r.ID, Collection: r.Collection, Source: base, Assets: map[string]Asset{}}
	p := r.Properties
	if p == nil {
		return nil, errors.New("no properties")
	}
	if it.Collection == "" {
		if c, ok := p["collection"].(string); ok {
			it.Collection = c
		}
	}
	var err error
	if it.Datetime, err = itemDatetime(p); err != nil {
		return nil, err
	}
	if it.Geometry, it.BBox, err = r.footprint(); err != nil {
		return nil, err
	}
	if e, ok := p["proj:epsg"].(float64); ok {
		it.EPSG = int(e)
	}
	if s, ok := p["s2:processing_baseline"].(string); ok {
		it.ProcessingBaseline = s
	}
	if b, ok := p["earthsearch:boa_offset_applied"].(bool); ok {
		it.BOAOffsetApplied = &b
	}
	if len(r.Assets) == 0 {
		return nil, errors.New("no assets")
	}
	for k, a := range r.Assets {
		it.Assets[k] = a.asset(base)
	}
	return it, nil
}

// itemDatetime is the item's datetime, or its start_datetime when datetime
// is null.
func itemDatetime(p map[string]any) (time.Time, error) {
	dt, _ := p["datetime"].(string)
	if dt == "" {
		dt, _ = p["start_datetime"].(string)
	}
	if dt == "" {
		return time.Time{}, errors.New("no datetime (nor start_datetime)")
	}
	t, err := parseTime(dt)
	if err != nil {
		return time.Time{}, fmt.Errorf("datetime %q: %v", dt, err)
	}
	return t, nil
}

// footprint is the item's geometry (nil when it has none) and its lon/lat
// bounding box: the bbox field, else the geometry's bound.
func (r *rawItem) footprint() (orb.Geometry, orb.Bound, error) {
	var g orb.Geometry
	if len(r.Geometry) > 0 && string(r.Geometry) != "null" {
		var err error
		if g, err = parsePolygonal(r.Geometry); err != nil {
			return nil, orb.Bound{}, fmt.Errorf("geometry: %v", err)
		}
	}
	var b orb.Bound
	switch {
	case len(r.BBox) == 4:
		b = orb.Bound{Min: orb.Point{r.BBox[0], r.BBox[1]}, Max: orb.Point{r.BBox[2], r.BBox[3]}}
	case len(r.BBox) == 6:
		b = orb.Bound{Min: orb.Point{r.BBox[0], r.BBox[1]}, Max: orb.Point{r.BBox[3], r.BBox[4]}}
	case g != nil:
		b = g.Bound()
	default:
		return nil, orb.Bound{}, errors.New("no bbox and no geometry")
	}
	for _, v := range r.BBox {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, orb.Bound{}, fmt.Errorf("bbox %v not finite", r.BBox)
		}
	}
	if b.Min[0] > b.Max[0] || b.Min[1] > b.Max[1] {
		// Antimeridian-crossing boxes are not expected over Brazil.
		return nil, orb.Bound{}, fmt.Errorf("bbox %v has min > max", r.BBox)
	}
	return g, b, nil
}

// asset resolves the asset's href against base and reads its band's
// raster:bands scale, offset and nodata.
func (a rawAsset) asset(base string) Asset {
	as := Asset{Href: resolveHref(a.Href, base), Band: a.Band}
	if as.Band <= 0 {
		as.Band = 1
	}
	if len(a.RasterBands) >= as.Band {
		rb := a.RasterBands[as.Band-1]
		as.Scale, as.Offset = rb.Scale, rb.Offset
		switch v := rb.Nodata.(type) {
		case float64:
			as.Nodata = &v
		case string: // "nan", "inf", "-inf" per the raster extension
			if f, err := parseNodataString(v); err == nil {
				as.Nodata = &f
			}
		}
	}
	return as
}

func parseNodataString(s string) (float64, error) {
	switch strings.ToLower(s) {
	case "nan":
		return math.NaN(), nil
	case "inf":
		return math.Inf(1), nil
	case "-inf":
		return math.Inf(-1), nil
	}
	return 0, fmt.Errorf("nodata %q", s)
}

func parseTime(s string) (time.Time, error) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05Z07:00", "2006-01-02T15:04:05", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("not RFC 3339")
}

func isURL(s string) bool {
	i := strings.Index(s, "://")
	return i > 0 && !strings.ContainsAny(s[:i], "/\\")
}

// resolveHref makes href absolute against base (a file path or URL). Hrefs
// with a scheme (file: included) are returned unchanged; normalizeHref
// parses them when they are opened.
func resolveHref(href, base string) string {
	if href == "" {
		return ""
	}
	if isURL(href) || strings.HasPrefix(href, "/") || strings.HasPrefix(strings.ToLower(href), "file:") {
		return href
	}
	if isURL(base) {
		u, err := url.Parse(base)
		if err != nil {
			return href
		}
		r, err := url.Parse(href)
		if err != nil {
			return href
		}
		res := u.ResolveReference(r)
		if u.Scheme == "s3" {
			// url.ResolveReference keeps s3's host (the bucket).
			return "s3://" + res.Host + path.Clean("/"+res.Path)
		}
		return res.String()
	}
	abs, err := filepath.Abs(filepath.Join(filepath.Dir(base), href))
	if err != nil {
		return filepath.Join(filepath.Dir(base), href)
	}
	return abs
}

// Select returns the items that intersect the talhão (bbox, then geometry
// when the item has one) with a date in [from, to] (zero times leave that
// side open; dates compare by calendar day, UTC), sorted by datetime.
func (c *Catalog) Select(f grid.Field, from, to time.Time) []*Item {
	fb := f.Geometry.Bound()
	var out []*Item
	for _, it := range c.Items {
		d := zarc.Day(it.Datetime)
		if !from.IsZero() && d.Before(zarc.Day(from)) {
			continue
		}
		if !to.IsZero() && d.After(zarc.Day(to)) {
			continue
		}
		if !it.BBox.Intersects(fb) {
			continue
		}
		if it.Geometry != nil && !geomIntersects(it.Geometry, f.Geometry) {
			continue
		}
		out = append(out, it)
	}
	return out
}

// parsePolygonal decodes a GeoJSON Polygon or MultiPolygon.
func parsePolygonal(data []byte) (orb.Geometry, error) {
	var g struct {
		Type        string          `json:"type"`
		Coordinates json.RawMessage `json:"coordinates"`
	}
	if err := json.Unmarshal(data, &g); err != nil {
		return nil, err
	}
	ring := func(rs [][][]float64) (orb.Polygon, error) {
		var p orb.Polygon
		for _, r := range rs {
			var rr orb.Ring
			for _, c := range r {
				if len(c) < 2 {
					return nil, fmt.Errorf("position with %d coordinates", len(c))
				}
				rr = append(rr, orb.Point{c[0], c[1]})
			}
			p = append(p, rr)
		}
		if len(p) == 0 || len(p[0]) < 4 {
			return nil, fmt.Errorf("polygon without a closed outer ring")
		}
		return p, nil
	}
	switch g.Type {
	case "Polygon":
		var c [][][]float64
		if err := json.Unmarshal(g.Coordinates, &c); err != nil {
			return nil, err
		}
		return ring(c)
	case "MultiPolygon":
		var c [][][][]float64
		if err := json.Unmarshal(g.Coordinates, &c); err != nil {
			return nil, err
		}
		var mp orb.MultiPolygon
		for _, pc := range c {
			p, err := ring(pc)
			if err != nil {
				return nil, err
			}
			mp = append(mp, p)
		}
		return mp, nil
	}
	return nil, fmt.Errorf("type %q is not Polygon or MultiPolygon", g.Type)
}
