package client

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
)

// ErrRedirect is a token or API request answered with a redirect to
// another origin (scheme, host or port). It is never followed: the token
// form carries the client secret, an API request the payload (CPF, CNPJ)
// and the key in its path (issue 27 D1, D4). It stops a run, like refused
// credentials: every further request would be sent the same way.
var ErrRedirect = errors.New("sinm: redirect to another host refused")

// maxRedirects is how many same-origin redirects one request may follow.
const maxRedirects = 10

// guard returns a copy of hc (nil: http.DefaultClient) whose redirect
// policy is sameOrigin, whatever policy hc had.
func guard(hc *http.Client) *http.Client {
	if hc == nil {
		hc = http.DefaultClient
	}
	g := *hc
	g.CheckRedirect = sameOrigin
	return &g
}

// sameOrigin follows a redirect only to the scheme, host and port of the
// first request (at most maxRedirects of them); any other is ErrRedirect,
// naming the two origins and nothing of the path.
func sameOrigin(req *http.Request, via []*http.Request) error {
	from := via[0].URL
	if req.URL.Scheme != from.Scheme || req.URL.Host != from.Host {
		return fmt.Errorf("%w: %s://%s answered a redirect to %s://%s", ErrRedirect, from.Scheme, from.Host, req.URL.Scheme, req.URL.Host)
	}
	if len(via) >= maxRedirects {
		return fmt.Errorf("sinm: stopped after %d redirects", maxRedirects)
	}
	return nil
}

// do sends req through guard(hc). A refused redirect is returned as the
// ErrRedirect alone, without the *url.Error around it, whose text holds
// the redirect's whole target.
func do(hc *http.Client, req *http.Request) (*http.Response, error) {
	resp, err := guard(hc).Do(req)
	var ue *url.Error
	if errors.As(err, &ue) && errors.Is(ue.Err, ErrRedirect) {
		return nil, ue.Err
	}
	return resp, err
}
