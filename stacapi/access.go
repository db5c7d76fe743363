package stacapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/manejo/manejo/series"
)

// Access applies the read rules of the public archives to items' assets
// (docs/stac-api.md):
//
//   - Planetary Computer: https hrefs on *.blob.core.windows.net get a SAS
//     token from the token endpoint (GET {PCTokenURL}/token/{account}/
//     {container}), cached per account and container and fetched again
//     RefreshBefore its msft:expiry; the subscription key, when set, is sent
//     to the token endpoint only.
//   - NASA Earthdata: assets on EarthdataHosts get the bearer token as a
//     per-asset GDAL option (GDAL_HTTP_HEADERS), so GDAL sends it to those
//     hosts and no other; it is never logged nor written.
//   - Earth Search Landsat: s3://usgs-landsat/ assets are read with
//     AWS_REQUEST_PAYER=requester and AWS_REGION=us-west-2, those paths
//     only.
//
// Signed hrefs still pass the catalog's href rules (series/href.go).
type Access struct {
	// PCTokenURL is the base of the SAS token endpoint; "" means
	// MANEJO_PC_SAS_URL, else DefaultPCTokenURL.
	PCTokenURL string
	// PCSubscriptionKey is sent as Ocp-Apim-Subscription-Key to the token
	// endpoint; "" means PC_SDK_SUBSCRIPTION_KEY.
	PCSubscriptionKey string
	// EarthdataToken is the Earthdata Login bearer token; "" means
	// EARTHDATA_TOKEN. Without one, Earthdata hosts are read with GDAL's
	// own .netrc and cookie handling.
	EarthdataToken string
	// EarthdataHosts are the hosts (host or host:port, or ".suffix") the
	// token is sent to; nil means DefaultEarthdataHosts.
	EarthdataHosts []string
	HTTP           *http.Client
	Now            func() time.Time
	// sleep waits between attempts at the token endpoint; nil means a
	// timer (tests skip the waits).
	sleep func(ctx context.Context, d time.Duration) error

	mu     sync.Mutex
	tokens map[string]sasToken // account/container → token
	issued map[string]bool     // every token handed out: a query manejo added
	// Fetched counts token endpoint requests (for tests and run.json).
	Fetched int
}

// Defaults of Access.
const (
	DefaultPCTokenURL = "https://planetarycomputer.microsoft.com/api/sas/v1"
	// RefreshBefore: a cached SAS token this close to its expiry is
	// fetched again, so that a scene's reads finish before it lapses.
	RefreshBefore = 15 * time.Minute
)

// DefaultEarthdataHosts are NASA's Earthdata data and login hosts.
var DefaultEarthdataHosts = []string{".earthdata.nasa.gov", ".earthdatacloud.nasa.gov"}

type sasToken struct {
	token  string
	expiry time.Time
}

// AccessFromEnv is an Access configured from the environment.
func AccessFromEnv() *Access { return &Access{} }

func (a *Access) now() time.Time {
	if a.Now != nil {
		return a.Now()
	}
	return time.Now()
}

// Apply sets the access rules on the assets of the catalog's items: PC
// hrefs signed, Earthdata and requester-pays GDAL options attached. An
// asset the catalog's href rules refuse is left as it is — never signed,
// no token asked for its account — and skipped as bad-href when read. A
// token that cannot be had marks its assets only (series.Asset.AccessErr):
// those scenes are skipped with the reason, or counted transient when the
// endpoint kept failing with 429/5xx or transport errors; the rest of the
// catalog is read. Calling it again (before each batch) signs hrefs it
// signed before with the current token, so a long run never reads with a
// lapsed one, and asks again for tokens that failed. The error is ctx's.
func (a *Access) Apply(ctx context.Context, cat *series.Catalog) error {
	hosts := a.EarthdataHosts
	if hosts == nil {
		hosts = DefaultEarthdataHosts
	}
	tok := a.EarthdataToken
	if tok == "" {
		tok = os.Getenv("EARTHDATA_TOKEN")
	}
	failed := map[string]*series.AccessError{} // account/container → why, for this call
	for _, it := range cat.Items {
		for k, as := range it.Assets {
			if _, err := cat.GDALPath(as.Href); err != nil {
				continue // refused by the href rules
			}
			cfg, href, aerr := a.asset(ctx, as.Href, hosts, tok, failed)
			if err := ctx.Err(); err != nil {
				return err
			}
			as.Href, as.AccessErr = href, aerr
			as.GDALConfig = append(as.GDALConfig[:0:0], cfg...)
			it.Assets[k] = as
		}
	}
	return nil
}

// asset is the GDAL options and the (signed) href of one asset, or why it
// could not be signed.
func (a *Access) asset(ctx context.Context, href string, hosts []string, tok string, failed map[string]*series.AccessError) ([]string, string, *series.AccessError) {
	if strings.HasPrefix(href, "s3://usgs-landsat/") {
		return []string{"AWS_REQUEST_PAYER=requester", "AWS_REGION=us-west-2"}, href, nil
	}
	u, err := url.Parse(href)
	if err != nil || u.Scheme != "https" {
		return nil, href, nil
	}
	host := strings.ToLower(u.Host)
	switch {
	case strings.HasSuffix(u.Hostname(), ".blob.core.windows.net"):
		if u.RawQuery != "" {
			if !a.ours(u.RawQuery) {
				return nil, href, nil // signed by the catalog's author
			}
			href = strings.TrimSuffix(href, "?"+u.RawQuery) // signed here before: sign again
		}
		t, err := a.sas(ctx, u, failed)
		if err != nil {
			return nil, href, err
		}
		return nil, href + "?" + t, nil
	case tok != "" && hostIn(host, hosts):
		return []string{"GDAL_HTTP_HEADERS=Authorization: Bearer " + tok}, href, nil
	}
	return nil, href, nil
}

// hostIn reports whether host matches one of hosts: equal, or below a
// ".suffix" entry.
func hostIn(host string, hosts []string) bool {
	for _, h := range hosts {
		h = strings.ToLower(h)
		if host == h || strings.HasPrefix(h, ".") && strings.HasSuffix(host, h) {
			return true
		}
	}
	return false
}

// sas returns a valid SAS token for the blob's account and container, or
// why there is none (remembered in failed for the rest of the call, so a
// failing endpoint is asked once per container, not once per asset).
func (a *Access) sas(ctx context.Context, u *url.URL, failed map[string]*series.AccessError) (string, *series.AccessError) {
	account := strings.TrimSuffix(u.Hostname(), ".blob.core.windows.net")
	container, _, _ := strings.Cut(strings.TrimPrefix(u.Path, "/"), "/")
	if account == "" || container == "" {
		return "", &series.AccessError{Detail: fmt.Sprintf("blob href %s has no account or container", redact(u.String()))}
	}
	key := account + "/" + container
	if e := failed[key]; e != nil {
		return "", e
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if t, ok := a.tokens[key]; ok && a.now().Add(RefreshBefore).Before(t.expiry) {
		return t.token, nil
	}
	t, e := a.fetchSAS(ctx, key)
	if e != nil {
		failed[key] = e
		return "", e
	}
	if a.tokens == nil {
		a.tokens, a.issued = map[string]sasToken{}, map[string]bool{}
	}
	a.tokens[key] = t
	a.issued[t.token] = true
	return t.token, nil
}

// ours reports whether a query is a token this Access handed out.
func (a *Access) ours(q string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.issued[q]
}

func (a *Access) fetchSAS(ctx context.Context, key string) (sasToken, *series.AccessError) {
	base := a.PCTokenURL
	if base == "" {
		base = os.Getenv("MANEJO_PC_SAS_URL")
	}
	if base == "" {
		base = DefaultPCTokenURL
	}
	sub := a.PCSubscriptionKey
	if sub == "" {
		sub = os.Getenv("PC_SDK_SUBSCRIPTION_KEY")
	}
	u := strings.TrimRight(base, "/") + "/token/" + key
	d := (&Client{HTTP: a.HTTP, Sleep: a.sleep}).doer(u)
	var h map[string]string
	if sub != "" {
		h = map[string]string{"Ocp-Apim-Subscription-Key": sub}
	}
	a.Fetched++
	body, err := d.do(ctx, request{Method: "GET", URL: u, Headers: h})
	if err != nil {
		// An endpoint may echo the key it was sent: never pass it on.
		msg := err.Error()
		if sub != "" {
			msg = strings.ReplaceAll(msg, sub, "(subscription key)")
		}
		return sasToken{}, &series.AccessError{Detail: fmt.Sprintf("SAS token for %s: %s", key, msg), Transient: errors.Is(err, ErrRetriesExhausted)}
	}
	var r struct {
		Expiry time.Time `json:"msft:expiry"`
		Token  string    `json:"token"`
	}
	if err := json.Unmarshal(body, &r); err != nil || r.Token == "" {
		return sasToken{}, &series.AccessError{Detail: fmt.Sprintf("SAS token for %s: answer without msft:expiry and token", key)}
	}
	return sasToken{token: strings.TrimPrefix(r.Token, "?"), expiry: r.Expiry}, nil
}
