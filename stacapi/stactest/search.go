package stactest

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// match keeps the items the request selects: collections, bbox or the
// bound of intersects (items are matched by their bbox), datetime.
func (s *Server) match(q search) ([]entry, error) {
	box := q.BBox
	if len(q.Intersects) > 0 {
		var g struct {
			Coordinates json.RawMessage `json:"coordinates"`
		}
		if err := json.Unmarshal(q.Intersects, &g); err != nil {
			return nil, fmt.Errorf("intersects: %v", err)
		}
		box = bound(g.Coordinates)
	}
	from, to, err := interval(q.Datetime)
	if err != nil {
		return nil, err
	}
	var out []entry
	for _, e := range s.items {
		if len(q.Collections) > 0 && !slices.Contains(q.Collections, e.coll) {
			continue
		}
		if len(box) == 4 && (e.maxX < box[0] || e.minX > box[2] || e.maxY < box[1] || e.minY > box[3]) {
			continue
		}
		if e.dt.Before(from) || e.dt.After(to) {
			continue
		}
		out = append(out, e)
	}
	return out, nil
}

// bound is the bbox of GeoJSON coordinates of any depth.
func bound(raw json.RawMessage) []float64 {
	b := []float64{math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)}
	var walk func(v any)
	walk = func(v any) {
		a, ok := v.([]any)
		if !ok {
			return
		}
		if len(a) >= 2 {
			x, okx := a[0].(float64)
			y, oky := a[1].(float64)
			if okx && oky {
				b[0], b[1], b[2], b[3] = math.Min(b[0], x), math.Min(b[1], y), math.Max(b[2], x), math.Max(b[3], y)
				return
			}
		}
		for _, c := range a {
			walk(c)
		}
	}
	var v any
	_ = json.Unmarshal(raw, &v)
	walk(v)
	return b
}

// interval parses a STAC datetime: an instant, or a/b with ".." or ""
// open ends.
func interval(dt string) (time.Time, time.Time, error) {
	lo, hi := time.Time{}, time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)
	if dt == "" {
		return lo, hi, nil
	}
	a, b, ok := strings.Cut(dt, "/")
	if !ok {
		b = a
	}
	var err error
	if a != ".." && a != "" {
		if lo, err = time.Parse(time.RFC3339, a); err != nil {
			return lo, hi, fmt.Errorf("datetime %q", dt)
		}
	}
	if b != ".." && b != "" {
		if hi, err = time.Parse(time.RFC3339, b); err != nil {
			return lo, hi, fmt.Errorf("datetime %q", dt)
		}
	}
	return lo, hi, nil
}

// search answers one page: items from the token's offset, at most
// PageSize, with a next link carrying the request and the next token
// (POST body for a POST, a GET href for a GET).
func (s *Server) search(w http.ResponseWriter, r *http.Request, q search) {
	off := 0
	if c := r.URL.Query().Get("cursor"); c != "" {
		q.Token = c
	}
	if q.Token != "" {
		n, err := strconv.Atoi(strings.TrimPrefix(q.Token, "next:"))
		if err != nil || n < 0 {
			http.Error(w, `{"code":"BadRequest","description":"token"}`, http.StatusBadRequest)
			return
		}
		off = n
	}
	size := s.PageSize
	if q.Limit > 0 && q.Limit < size {
		size = q.Limit
	}
	pageNo := off/size + 1
	if s.throttle(w, r, q, pageNo) {
		return
	}
	all, err := s.match(q)
	if err != nil {
		http.Error(w, `{"code":"BadRequest","description":"`+err.Error()+`"}`, http.StatusBadRequest)
		return
	}
	end := min(off+size, len(all))
	var feats []json.RawMessage
	if s.Duplicate && pageNo == 2 && off > 0 && off <= len(all) {
		feats = append(feats, all[off-1].doc) // the last item of page 1 again
	}
	for _, e := range all[min(off, len(all)):end] {
		feats = append(feats, e.doc)
	}
	if off == 0 {
		feats = append(feats, s.Inject...)
	}
	links := []any{}
	if end < len(all) {
		links = append(links, s.next(r, q, end))
	}
	w.Header().Set("Content-Type", "application/geo+json")
	_ = json.NewEncoder(w).Encode(map[string]any{"type": "FeatureCollection", "features": feats,
		"numberMatched": len(all), "numberReturned": len(feats), "links": links})
}

// throttle answers 429 to the first request of a throttled page.
func (s *Server) throttle(w http.ResponseWriter, r *http.Request, q search, page int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, _ := json.Marshal(q)
	s.Requests = append(s.Requests, r.Method+" "+string(b))
	if !s.Throttle[page] {
		return false
	}
	if len(s.Throttled) > len(s.Retried) {
		s.Retried = append(s.Retried, time.Now())
		delete(s.Throttle, page)
		return false
	}
	s.Throttled = append(s.Throttled, time.Now())
	w.Header().Set("Retry-After", strconv.Itoa(s.RetryAfter))
	http.Error(w, `{"code":"TooManyRequests"}`, http.StatusTooManyRequests)
	return true
}

// next is the rel="next" link of a page ending at offset end.
func (s *Server) next(r *http.Request, q search, end int) map[string]any {
	if s.CursorGET {
		v := url.Values{}
		if len(q.Collections) > 0 {
			v.Set("collections", strings.Join(q.Collections, ","))
		}
		if len(q.BBox) == 4 {
			v.Set("bbox", fmt.Sprintf("%g,%g,%g,%g", q.BBox[0], q.BBox[1], q.BBox[2], q.BBox[3]))
		}
		if len(q.Intersects) > 0 {
			v.Set("intersects", string(q.Intersects))
		}
		if q.Datetime != "" {
			v.Set("datetime", q.Datetime)
		}
		if q.Limit > 0 {
			v.Set("limit", strconv.Itoa(q.Limit))
		}
		v.Set("cursor", strconv.Itoa(end))
		return map[string]any{"rel": "next", "href": s.URL + "/search?" + v.Encode(), "type": "application/geo+json"}
	}
	q.Token = "next:" + strconv.Itoa(end)
	if r.Method == http.MethodGet {
		v := r.URL.Query()
		v.Set("token", q.Token)
		return map[string]any{"rel": "next", "href": s.URL + "/search?" + v.Encode(), "method": "GET", "type": "application/geo+json"}
	}
	return map[string]any{"rel": "next", "href": s.URL + "/search", "method": "POST", "body": q, "merge": false, "type": "application/geo+json"}
}
