// Package stactest is a small STAC API server on loopback for tests: a
// landing page, item search by POST and GET (collections, bbox,
// intersects, datetime, limit) over a fixed set of items, paged with
// token next links, with faults to inject: an item repeated across a page
// boundary, and throttled pages (429 with Retry-After).
package stactest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Server serves Items as a STAC API. Set the fields before the first
// request.
type Server struct {
	URL string // the API root, http://127.0.0.1:port/api
	// PageSize caps the items of a page, whatever the request's limit.
	PageSize int
	// Duplicate repeats the last item of the first page at the head of the
	// second (pgstac without a unique sort tiebreaker does this).
	Duplicate bool
	// Throttle lists 1-based page numbers whose first request is answered
	// 429 with Retry-After: RetryAfter seconds.
	Throttle   map[int]bool
	RetryAfter int
	// GETOnly makes the landing page offer GET search only.
	GETOnly bool
	// CursorGET answers every page, a POST's too, with a GET next link
	// carrying the query and a cursor= parameter, as NASA CMR-STAC does.
	CursorGET bool
	// Files, when set, is a folder served below the API root (GET and
	// HEAD with ranges, as http.FileServer does): a local mirror whose
	// items name their assets relative to the root.
	Files string
	// Inject are features added to the first page of every search,
	// whatever it asks (a broken or hostile API).
	Inject []json.RawMessage

	items []entry
	mu    sync.Mutex
	// Requests logs each search request: method and body or query.
	Requests  []string
	Throttled []time.Time // when each 429 was sent
	Retried   []time.Time // when each throttled page was asked again
}

type entry struct {
	doc        json.RawMessage
	id, coll   string
	dt         time.Time
	minX, minY float64
	maxX, maxY float64
}

// New starts a server over items (STAC Item documents) on loopback; it is
// closed with the test.
func New(tb testing.TB, items []json.RawMessage) *Server {
	tb.Helper()
	s := &Server{PageSize: 10, RetryAfter: 1}
	for _, d := range items {
		var f struct {
			ID         string    `json:"id"`
			Collection string    `json:"collection"`
			BBox       []float64 `json:"bbox"`
			Properties struct {
				Datetime      *time.Time `json:"datetime"`
				StartDatetime *time.Time `json:"start_datetime"`
			} `json:"properties"`
		}
		if err := json.Unmarshal(d, &f); err != nil || len(f.BBox) != 4 {
			tb.Fatalf("stactest: item %s: %v (bbox %v)", f.ID, err, f.BBox)
		}
		dt := f.Properties.Datetime
		if dt == nil { // a composite dated by its interval (MODIS)
			dt = f.Properties.StartDatetime
		}
		if dt == nil {
			tb.Fatalf("stactest: item %s has neither datetime nor start_datetime", f.ID)
		}
		s.items = append(s.items, entry{d, f.ID, f.Collection, dt.UTC(), f.BBox[0], f.BBox[1], f.BBox[2], f.BBox[3]})
	}
	sort.SliceStable(s.items, func(i, j int) bool {
		if !s.items[i].dt.Equal(s.items[j].dt) {
			return s.items[i].dt.Before(s.items[j].dt)
		}
		return s.items[i].id < s.items[j].id
	})
	srv := httptest.NewServer(s)
	tb.Cleanup(srv.Close)
	s.URL = srv.URL + "/api"
	return s
}

// search is a decoded search request.
type search struct {
	Collections []string        `json:"collections,omitempty"`
	BBox        []float64       `json:"bbox,omitempty"`
	Intersects  json.RawMessage `json:"intersects,omitempty"`
	Datetime    string          `json:"datetime,omitempty"`
	Limit       int             `json:"limit,omitempty"`
	Token       string          `json:"token,omitempty"`
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/api", "/api/":
		s.landing(w)
	case "/api/search":
		var q search
		switch r.Method {
		case http.MethodPost:
			if err := json.NewDecoder(r.Body).Decode(&q); err != nil {
				http.Error(w, `{"code":"BadRequest","description":"body"}`, http.StatusBadRequest)
				return
			}
		case http.MethodGet:
			var err error
			if q, err = fromQuery(r); err != nil {
				http.Error(w, `{"code":"BadRequest","description":"`+err.Error()+`"}`, http.StatusBadRequest)
				return
			}
		default:
			http.Error(w, "method", http.StatusMethodNotAllowed)
			return
		}
		s.search(w, r, q)
	default:
		if s.Files != "" && strings.HasPrefix(r.URL.Path, "/api/") {
			http.StripPrefix("/api/", http.FileServer(http.Dir(s.Files))).ServeHTTP(w, r)
			return
		}
		http.NotFound(w, r)
	}
}

func (s *Server) landing(w http.ResponseWriter) {
	links := []map[string]string{{"rel": "self", "href": s.URL}, {"rel": "search", "href": s.URL + "/search", "method": "GET"}}
	if !s.GETOnly {
		links = append(links, map[string]string{"rel": "search", "href": s.URL + "/search", "method": "POST"})
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"type": "Catalog", "id": "stactest", "title": "stactest", "stac_version": "1.0.0",
		"conformsTo": []string{"https://api.stacspec.org/v1.0.0/core", "https://api.stacspec.org/v1.0.0/item-search"}, "links": links})
}

func fromQuery(r *http.Request) (search, error) {
	v := r.URL.Query()
	q := search{Datetime: v.Get("datetime"), Token: v.Get("token")}
	if c := v.Get("collections"); c != "" {
		q.Collections = strings.Split(c, ",")
	}
	if b := v.Get("bbox"); b != "" {
		for _, p := range strings.Split(b, ",") {
			f, err := strconv.ParseFloat(p, 64)
			if err != nil {
				return q, fmt.Errorf("bbox")
			}
			q.BBox = append(q.BBox, f)
		}
	}
	if i := v.Get("intersects"); i != "" {
		q.Intersects = json.RawMessage(i)
	}
	q.Limit, _ = strconv.Atoi(v.Get("limit"))
	return q, nil
}
