package stacapi

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/manejo/manejo/series"
	"github.com/paulmach/orb"
)

// Config is one search of an API for a run or for `manejo catalog search`.
type Config struct {
	// Collections to search; empty means the API's defaults
	// (DefaultCollections).
	Collections []string
	// Footprints are the talhões' lon/lat bounds; nearby ones are searched
	// together (one bbox per group, see Groups). BBox, when set, is used
	// instead.
	Footprints []orb.Bound
	BBox       []float64
	From, To   time.Time
	// AllowHrefPrefix are the href rules of the catalog (series.NewCatalog).
	AllowHrefPrefix []string
	Client          *Client
	Access          *Access
}

// GroupPad is how close (degrees) two talhões' bounds must come to be
// searched with one bbox: about 5 km, less than a Sentinel-2 tile.
const GroupPad = 0.05

// DefaultCollections are the collections searched when none is named,
// by API host.
var DefaultCollections = map[string][]string{
	"earth-search.aws.element84.com":  {"sentinel-2-l2a"},
	"planetarycomputer.microsoft.com": {"sentinel-2-l2a"},
	"cmr.earthdata.nasa.gov":          {"HLSS30_2.0", "HLSL30_2.0"},
}

// ErrNoCollections is returned when no collection is named and the API has
// no default.
var ErrNoCollections = errors.New("stacapi: name the collections to search (--collections)")

// Find searches api for cfg (Collect), applies the access rules and
// returns the catalog with the search's figures. A search that fails after
// the retries returns an error wrapping ErrSearch.
func Find(ctx context.Context, api *API, cfg Config) (*series.Catalog, *Result, error) {
	// The href rules first: a rule that cannot be used is a configuration
	// error to name before any page is fetched (series.ErrBadRule).
	if _, err := series.NewCatalog(nil, api.Root, cfg.AllowHrefPrefix); err != nil {
		return nil, nil, err
	}
	res, err := Collect(ctx, api, cfg)
	if err != nil {
		return nil, res, err
	}
	cat, err := series.NewCatalog(res.Items, api.Root, cfg.AllowHrefPrefix)
	if err != nil {
		return nil, res, err
	}
	if cfg.Access != nil {
		if err := cfg.Access.Apply(ctx, cat); err != nil {
			return nil, res, err
		}
	}
	return cat, res, nil
}

// Collect runs the searches of cfg (one per footprint group) and drops
// duplicates: the items as the API gave them, unsigned.
func Collect(ctx context.Context, api *API, cfg Config) (*Result, error) {
	cols := cfg.Collections
	if len(cols) == 0 {
		u, _ := url.Parse(api.Root)
		if cols = DefaultCollections[strings.ToLower(u.Hostname())]; len(cols) == 0 {
			return nil, ErrNoCollections
		}
	}
	c := cfg.Client
	if c == nil {
		c = &Client{}
	}
	boxes := [][]float64{cfg.BBox}
	if len(cfg.BBox) != 4 {
		boxes = boxes[:0]
		for _, b := range Groups(cfg.Footprints, GroupPad) {
			boxes = append(boxes, []float64{b.Min[0], b.Min[1], b.Max[0], b.Max[1]})
		}
		if len(cfg.Footprints) == 0 {
			boxes = append(boxes, nil) // no footprint: the whole collection
		}
	}
	res := &Result{API: api.Root, Search: api.Search, Method: api.Method}
	for _, b := range boxes {
		q := Query{Collections: cols, BBox: b, From: cfg.From, To: cfg.To}
		if _, err := c.Search(ctx, api, q, res); err != nil {
			return res, err
		}
	}
	res.Dedupe()
	return res, nil
}

// Groups merges bounds that come within pad degrees of each other into
// their common bound, until no two groups meet; the groups are returned
// west to east, south to north, each rounded outwards to 1e-5 degrees.
func Groups(bounds []orb.Bound, pad float64) []orb.Bound {
	gs := append([]orb.Bound(nil), bounds...)
	for merged := true; merged; {
		merged = false
		for i := 0; i < len(gs) && !merged; i++ {
			for j := i + 1; j < len(gs); j++ {
				if gs[i].Pad(pad / 2).Intersects(gs[j].Pad(pad / 2)) {
					gs[i] = gs[i].Union(gs[j])
					gs = append(gs[:j], gs[j+1:]...)
					merged = true
					break
				}
			}
		}
	}
	for i, g := range gs {
		gs[i] = orb.Bound{Min: orb.Point{floor5(g.Min[0]), floor5(g.Min[1])}, Max: orb.Point{ceil5(g.Max[0]), ceil5(g.Max[1])}}
	}
	sort.Slice(gs, func(i, j int) bool {
		if gs[i].Min[0] != gs[j].Min[0] {
			return gs[i].Min[0] < gs[j].Min[0]
		}
		return gs[i].Min[1] < gs[j].Min[1]
	})
	return gs
}

func floor5(v float64) float64 { return math.Floor(v*1e5) / 1e5 }
func ceil5(v float64) float64  { return math.Ceil(v*1e5) / 1e5 }

// Freeze writes to w the ItemCollection of the items a search kept, as
// the API gave them (unsigned: SAS tokens expire; access rules are applied
// again when it is read), sorted by datetime then id, with a
// "manejo:search" member recording the API and queries; the layout is
// json.MarshalIndent's with a one-space indent. Documents are read back
// one at a time. Read back as --catalog, it gives the same items, hence
// the same outputs.
func Freeze(w io.Writer, res *Result) error {
	order := make([]int, len(res.Items))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(i, j int) bool {
		a, b := res.Items[order[i]], res.Items[order[j]]
		if !a.Datetime.Equal(b.Datetime) {
			return a.Datetime.Before(b.Datetime)
		}
		if a.ID != b.ID {
			return a.ID < b.ID
		}
		return a.Collection < b.Collection
	})
	head, err := json.MarshalIndent(struct {
		Type   string  `json:"type"`
		Search *Result `json:"manejo:search"`
	}{"FeatureCollection", res}, "", " ")
	if err != nil {
		return fmt.Errorf("freeze catalog: %w", err)
	}
	bw := bufio.NewWriter(w)
	bw.Write(head[:len(head)-2]) // without the closing "\n}"
	if len(order) == 0 {
		bw.WriteString(",\n \"features\": []\n}\n")
		return bw.Flush()
	}
	bw.WriteString(",\n \"features\": [\n")
	var c, h, ind bytes.Buffer
	for k, i := range order {
		doc, err := res.Doc(i)
		if err != nil {
			return fmt.Errorf("freeze catalog: %w", err)
		}
		c.Reset()
		h.Reset()
		ind.Reset()
		if err := json.Compact(&c, doc); err != nil {
			return fmt.Errorf("freeze catalog: item %s: %w", res.Items[i].ID, err)
		}
		json.HTMLEscape(&h, c.Bytes()) // as json.Marshal writes a RawMessage
		if err := json.Indent(&ind, h.Bytes(), "  ", " "); err != nil {
			return fmt.Errorf("freeze catalog: item %s: %w", res.Items[i].ID, err)
		}
		bw.WriteString("  ")
		bw.Write(ind.Bytes())
		if k < len(order)-1 {
			bw.WriteString(",")
		}
		bw.WriteString("\n")
	}
	bw.WriteString(" ]\n}\n")
	return bw.Flush()
}
