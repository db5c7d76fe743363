package stacapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
)

// API is a STAC API root, as its landing page describes it.
type API struct {
	Root string // the URL the operator gave
	// Search is the item-search endpoint and Method how to call it: POST
	// when the landing page offers it, else GET.
	Search, Method string
	Title          string
}

type link struct {
	Rel     string            `json:"rel"`
	Href    string            `json:"href"`
	Method  string            `json:"method"`
	Body    json.RawMessage   `json:"body"`
	Headers map[string]string `json:"headers"`
	Merge   bool              `json:"merge"`
}

type landingPage struct {
	Type       string   `json:"type"`
	Title      string   `json:"title"`
	ConformsTo []string `json:"conformsTo"`
	Links      []link   `json:"links"`
}

// MaybeAPI reports whether src could be an API root: an https:// URL, or an
// http:// one on a loopback address (a local proxy or a test server).
// Static catalogs (local, s3://) are never APIs.
func MaybeAPI(src string) bool {
	u, err := url.Parse(src)
	if err != nil || u.Host == "" {
		return false
	}
	return u.Scheme == "https" || (u.Scheme == "http" && loopback(u.Hostname()))
}

func loopback(h string) bool {
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// ErrNotSTAC is Detect's error for a root that answers a web page: it is
// neither a STAC API nor a STAC document (a wrong --catalog URL, a portal's
// home page).
var ErrNotSTAC = errors.New("not a STAC API")

// Detect reads src and returns its API when it is a STAC API landing page
// (conformsTo item-search, or a rel="search" link), nil when it is a
// document of another kind (a static ItemCollection served over https),
// and an error wrapping ErrNotSTAC when it answers an HTML (or XML) page.
func (c *Client) Detect(ctx context.Context, src string) (*API, error) {
	if !MaybeAPI(src) {
		return nil, nil
	}
	d := c.doer(src)
	body, err := d.do(ctx, request{Method: "GET", URL: src})
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", redact(src), err)
	}
	if t := bytes.TrimLeft(body, " \t\r\n"); len(t) > 0 && t[0] == '<' {
		return nil, fmt.Errorf("%w: %s answered an HTML or XML page, not a STAC API landing page (JSON with conformsTo or a rel=search link) nor a STAC catalog: --catalog takes an API root such as https://earth-search.aws.element84.com/v1", ErrNotSTAC, redact(src))
	}
	var lp landingPage
	if err := json.Unmarshal(body, &lp); err != nil || lp.Type == "FeatureCollection" || lp.Type == "Feature" {
		return nil, nil
	}
	return landing(src, lp)
}

// landing picks the search endpoint of a landing page.
func landing(src string, lp landingPage) (*API, error) {
	search := false
	for _, c := range lp.ConformsTo {
		if strings.HasSuffix(c, "/item-search") {
			search = true
		}
	}
	api := &API{Root: src, Title: lp.Title}
	for _, l := range lp.Links {
		if l.Rel != "search" {
			continue
		}
		search = true
		m := strings.ToUpper(l.Method)
		if m == "" {
			m = "GET"
		}
		if api.Method == "" || m == "POST" {
			h, err := resolve(src, l.Href)
			if err != nil {
				return nil, fmt.Errorf("landing page %s: search link: %w", redact(src), err)
			}
			api.Search, api.Method = h, m
		}
	}
	if !search {
		return nil, nil
	}
	if api.Search == "" {
		// Conforms to item-search but lists no link: /search below the root.
		h, err := resolve(strings.TrimRight(src, "/")+"/", "search")
		if err != nil {
			return nil, err
		}
		api.Search, api.Method = h, "POST"
	}
	return api, nil
}

// resolve makes href absolute against base.
func resolve(base, href string) (string, error) {
	b, err := url.Parse(base)
	if err != nil {
		return "", err
	}
	h, err := url.Parse(href)
	if err != nil {
		return "", err
	}
	return b.ResolveReference(h).String(), nil
}
