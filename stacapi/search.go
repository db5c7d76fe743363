package stacapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/manejo/manejo/internal/clock"
	"github.com/manejo/manejo/internal/jsonstream"
	"github.com/manejo/manejo/series"
)

// Client searches STAC APIs. The zero value is ready to use.
type Client struct {
	// HTTP sends the requests; nil means a client with connect, header
	// and total deadlines.
	HTTP *http.Client
	// Headers are sent with every request to the API's own host (for
	// example a Planetary Computer subscription key), never elsewhere.
	Headers map[string]string
	// Limit is the page size asked for; 0 means DefaultLimit. CMR-STAC
	// caps pages at 100 whatever is asked, so a short page is never taken
	// as the last one.
	Limit int
	// MaxPages caps the pages of one search; 0 means DefaultMaxPages.
	MaxPages int
	// Sleep waits between attempts; nil means a timer (tests record the
	// waits through it).
	Sleep func(ctx context.Context, d time.Duration) error
	// stall is the stall deadline of answers (doer.stall); 0 means
	// storage.RequestTimeout (60 s). Tests shorten it.
	stall time.Duration
}

// Defaults of Client.
const (
	DefaultLimit    = 100
	DefaultMaxPages = 2000
)

func (c *Client) doer(api string) *doer {
	d := &doer{http: c.HTTP, headers: c.Headers, sleep: c.Sleep, stall: c.stall}
	if d.http == nil {
		d.http = defaultHTTP
	}
	if d.sleep == nil {
		d.sleep = clock.Sleep
	}
	if u, err := url.Parse(api); err == nil {
		d.host = u.Host
	}
	return d
}

// Query is one item search: collections, a footprint (BBox or Intersects,
// lon/lat) and calendar days From..To, inclusive (zero leaves a side open).
type Query struct {
	Collections []string
	BBox        []float64       // west, south, east, north
	Intersects  json.RawMessage // a GeoJSON geometry
	From, To    time.Time
}

// Datetime is the query's STAC datetime interval ("" when both sides are
// open): From's first second to To's last, UTC.
func (q Query) Datetime() string {
	if q.From.IsZero() && q.To.IsZero() {
		return ""
	}
	a, b := "..", ".."
	if !q.From.IsZero() {
		a = day(q.From).Format(time.RFC3339)
	}
	if !q.To.IsZero() {
		b = day(q.To).Add(24*time.Hour - time.Second).Format(time.RFC3339)
	}
	return a + "/" + b
}

func day(t time.Time) time.Time {
	t = t.UTC()
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
}

// body is the POST body of the query with page size limit; its keys are
// written in a fixed order so the recorded query is stable.
func (q Query) body(limit int) []byte {
	type post struct {
		Collections []string        `json:"collections,omitempty"`
		BBox        []float64       `json:"bbox,omitempty"`
		Intersects  json.RawMessage `json:"intersects,omitempty"`
		Datetime    string          `json:"datetime,omitempty"`
		Limit       int             `json:"limit"`
	}
	b, _ := json.Marshal(post{q.Collections, q.BBox, q.Intersects, q.Datetime(), limit})
	return b
}

// getURL is the GET search URL of the query.
func (q Query) getURL(search string, limit int) string {
	v := url.Values{}
	if len(q.Collections) > 0 {
		v.Set("collections", strings.Join(q.Collections, ","))
	}
	if len(q.BBox) == 4 {
		s := make([]string, 4)
		for i, f := range q.BBox {
			s[i] = strconv.FormatFloat(f, 'f', -1, 64)
		}
		v.Set("bbox", strings.Join(s, ","))
	}
	if len(q.Intersects) > 0 {
		v.Set("intersects", string(q.Intersects))
	}
	if dt := q.Datetime(); dt != "" {
		v.Set("datetime", dt)
	}
	v.Set("limit", strconv.Itoa(limit))
	sep := "?"
	if strings.Contains(search, "?") {
		sep = "&"
	}
	return search + sep + v.Encode()
}

// Result is what a search gave: the items kept, in the order the API
// returned them, and the figures run.json records. The items' documents
// are kept in a temporary file, not in memory (Doc reads one back, Freeze
// writes them all): memory follows the largest item and the parsed items,
// not the answer (issue 27 D11). Close releases the file.
type Result struct {
	API    string `json:"api"`
	Search string `json:"search_url"`
	Method string `json:"method"`
	// Queries are the first request of each search (the POST body, or
	// the GET URL's query).
	Queries []string `json:"queries"`
	// Matched is the sum of the APIs' numberMatched (context.matched), -1
	// when an API did not say.
	Matched  int64 `json:"matched"`
	Returned int   `json:"returned"` // features received, every page
	Pages    int   `json:"pages"`
	Retries  int   `json:"retries"`
	// Duplicates are second copies of a (collection, id); SameAcquisition
	// repeated acquisitions under another id (Dedupe); Malformed items
	// that could not be used; Unrequested items of a collection the
	// search did not ask for (dropped: an API must not widen a search).
	Duplicates      int `json:"duplicates"`
	SameAcquisition int `json:"same_acquisition"`
	Malformed       int `json:"malformed"`
	Unrequested     int `json:"unrequested"`
	Kept            int `json:"kept"`

	Items    []*series.Item `json:"-"`
	Dropped  []Dropped      `json:"-"`
	Problems []error        `json:"-"`

	docs  spill  // the documents of Items
	spans []span // spans[i] is Items[i]'s document in docs
	acqs  []acq  // acqs[i] is Items[i]'s acquisition (Dedupe)
}

// add keeps an item and its document.
func (res *Result) add(it *series.Item, doc []byte) error {
	sp, err := res.docs.add(doc)
	if err != nil {
		return err
	}
	res.Items, res.spans, res.acqs = append(res.Items, it), append(res.spans, sp), append(res.acqs, acquisition(doc))
	return nil
}

// Doc is the document of Items[i], as the API gave it (whitespace outside
// strings squeezed).
func (res *Result) Doc(i int) (json.RawMessage, error) { return res.docs.read(res.spans[i]) }

// Close releases the temporary file of the documents.
func (res *Result) Close() error { return res.docs.close() }

// mark is where a page's items start in a Result: a page read again after
// a failed attempt drops what the failed attempt added.
type mark struct {
	items, problems, returned, malformed, unrequested int
	docs                                              int64
}

func (res *Result) mark() mark {
	return mark{len(res.Items), len(res.Problems), res.Returned, res.Malformed, res.Unrequested, res.docs.size}
}

func (res *Result) rollback(m mark) {
	res.Items, res.spans, res.acqs = res.Items[:m.items], res.spans[:m.items], res.acqs[:m.items]
	res.Problems, res.Returned, res.Malformed, res.Unrequested = res.Problems[:m.problems], m.returned, m.malformed, m.unrequested
	res.docs.size = m.docs
}

// Search runs q against api, following every page, and adds the items to
// res (nil starts a new Result). Items of collections q did not ask for are
// dropped and counted (Unrequested). Items are deduplicated by Dedupe once
// all searches are in. A page that cannot be read after the retries, a
// cycle or the page cap fails the search with ErrSearch.
func (c *Client) Search(ctx context.Context, api *API, q Query, res *Result) (*Result, error) {
	if res == nil {
		res = &Result{API: api.Root, Search: api.Search, Method: api.Method}
	}
	limit, maxPages := c.Limit, c.MaxPages
	if limit <= 0 {
		limit = DefaultLimit
	}
	if maxPages <= 0 {
		maxPages = DefaultMaxPages
	}
	d := c.doer(api.Search)
	defer func() { res.Retries += d.retries }()
	req := request{Method: api.Method, URL: api.Search}
	if api.Method == "POST" {
		req.Body = q.body(limit)
		res.Queries = append(res.Queries, string(req.Body))
	} else {
		req.URL = q.getURL(api.Search, limit)
		res.Queries = append(res.Queries, req.URL[strings.Index(req.URL, "?")+1:])
	}
	want := map[string]bool{}
	for _, c := range q.Collections {
		want[c] = true
	}
	seen := map[string]bool{}
	matched := int64(-1)
	for n := 0; ; n++ {
		if n >= maxPages {
			return res, fmt.Errorf("search %s: more than %d pages: %w", redact(api.Search), maxPages, ErrSearch)
		}
		if seen[req.key()] {
			return res, fmt.Errorf("search %s: page %d repeats an earlier request (a paging cycle): %w", redact(api.Search), n+1, ErrSearch)
		}
		seen[req.key()] = true
		var p pageInfo
		m := res.mark()
		err := d.stream(ctx, req, func(rd io.Reader) error {
			res.rollback(m)
			var err error
			p, err = readPage(rd, api.Root, n+1, want, res)
			return err
		})
		if err != nil {
			if !errors.Is(err, ErrSearch) {
				err = fmt.Errorf("%w: %w", err, ErrSearch)
			}
			return res, fmt.Errorf("search %s page %d: %w", redact(api.Search), n+1, err)
		}
		res.Pages++
		if n == 0 {
			matched = p.matched()
		}
		if p.features == 0 {
			break
		}
		next, ok, err := nextRequest(req, p.Links, d.host)
		if err != nil {
			return res, fmt.Errorf("search %s page %d: %v: %w", redact(api.Search), n+1, err, ErrSearch)
		}
		if !ok {
			break
		}
		req = next
	}
	if matched < 0 || res.Matched < 0 {
		res.Matched = -1
	} else {
		res.Matched += matched
	}
	return res, nil
}

// pageInfo is what a page of a search says besides its features.
type pageInfo struct {
	Links         []link                   `json:"links"`
	NumberMatched *int64                   `json:"numberMatched"`
	Context       struct{ Matched *int64 } `json:"context"`
	features      int
}

func (p pageInfo) matched() int64 {
	if p.NumberMatched != nil {
		return *p.NumberMatched
	}
	if p.Context.Matched != nil {
		return *p.Context.Matched
	}
	return -1
}

// readPage reads one page of a search (an ItemCollection) as a stream,
// feature by feature (each at most series.MaxItemBytes), adding the
// items of the wanted collections (any, when want is empty) to res: a page
// is never held whole. Relative hrefs are resolved against each item's
// self link, else root (itemBase).
func readPage(r io.Reader, root string, page int, want map[string]bool, res *Result) (pageInfo, error) {
	var p pageInfo
	d := jsonstream.NewDecoder(r, series.MaxItemBytes)
	if err := d.Expect('{'); err != nil {
		return p, fmt.Errorf("not an ItemCollection: %v", err)
	}
	for d.More() {
		tok, err := d.Token()
		if err != nil {
			return p, fmt.Errorf("not an ItemCollection: %v", err)
		}
		key, _ := tok.(string)
		if key == "features" {
			if err := readFeatures(d, root, page, want, res, &p); err != nil {
				return p, err
			}
			continue
		}
		raw, err := d.Value("member " + key)
		if err != nil {
			return p, fmt.Errorf("not an ItemCollection: %v", err)
		}
		var v any
		switch key {
		case "links":
			v = &p.Links
		case "numberMatched":
			v = &p.NumberMatched
		case "context":
			v = &p.Context
		default:
			continue
		}
		if err := json.Unmarshal(raw, v); err != nil {
			return p, fmt.Errorf("not an ItemCollection: %s: %v", key, err)
		}
	}
	if err := d.Expect('}'); err != nil {
		return p, fmt.Errorf("not an ItemCollection: %v", err)
	}
	return p, nil
}

// readFeatures reads the features array of a page (or null).
func readFeatures(d *jsonstream.Decoder, root string, page int, want map[string]bool, res *Result, p *pageInfo) error {
	tok, err := d.Token()
	if err != nil || tok == nil {
		return err
	}
	if tok != json.Delim('[') {
		return fmt.Errorf("not an ItemCollection: features is %v, not an array", tok)
	}
	for i := 0; d.More(); i++ {
		raw, err := d.Value(fmt.Sprintf("feature %d", i))
		if err != nil {
			return fmt.Errorf("feature %d: %w", i, err)
		}
		p.features++
		res.Returned++
		it, err := series.ParseItem(raw, itemBase(raw, root))
		switch {
		case err != nil:
			res.Malformed++
			res.Problems = append(res.Problems, fmt.Errorf("search page %d feature %d: %w", page, i, err))
		case len(want) > 0 && !want[it.Collection]:
			res.Unrequested++
			res.Problems = append(res.Problems, series.Problem{Item: it.ID, Reason: series.SkipUnrequested,
				Detail: fmt.Sprintf("search page %d feature %d: collection %q was not asked for: dropped", page, i, it.Collection)})
		default:
			if err := res.add(it, absoluteDoc(raw, it)); err != nil {
				return err
			}
		}
	}
	return d.Expect(']')
}

// nextRequest is the request of the rel="next" link, as STAC API item
// search defines it: method (default GET), href, body (replacing the last
// body, or merged into it when merge is true) and headers. A next link to
// another host than the API's is refused (the API's headers would follow).
func nextRequest(prev request, links []link, host string) (request, bool, error) {
	for _, l := range links {
		if l.Rel != "next" {
			continue
		}
		href, err := resolve(prev.URL, l.Href)
		if err != nil {
			return request{}, false, fmt.Errorf("next link: %v", err)
		}
		u, _ := url.Parse(href)
		if !strings.EqualFold(u.Host, host) {
			return request{}, false, fmt.Errorf("next link leaves the API's host %s for %s", host, u.Host)
		}
		m := strings.ToUpper(l.Method)
		if m == "" {
			m = "GET"
		}
		r := request{Method: m, URL: href, Headers: l.Headers}
		if m == "POST" {
			r.Body, err = nextBody(prev.Body, l)
			if err != nil {
				return request{}, false, err
			}
		}
		return r, true, nil
	}
	return request{}, false, nil
}

// nextBody is the body of a POST next link.
func nextBody(prev []byte, l link) ([]byte, error) {
	if len(l.Body) == 0 || string(l.Body) == "null" {
		return prev, nil
	}
	if !l.Merge || len(prev) == 0 {
		return l.Body, nil
	}
	var a, b map[string]json.RawMessage
	if err := json.Unmarshal(prev, &a); err != nil {
		return nil, fmt.Errorf("merge next body: %v", err)
	}
	if err := json.Unmarshal(l.Body, &b); err != nil {
		return nil, fmt.Errorf("next link body: %v", err)
	}
	for k, v := range b {
		a[k] = v
	}
	return json.Marshal(a)
}
