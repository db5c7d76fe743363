package stacapi

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/manejo/manejo/storage"
)

// ErrSearch marks a search that could not be completed: the API kept
// failing after the retries, answered with an error, or paged in a cycle or
// past the page cap. A run stops on it rather than read an incomplete
// series (IN 6.5: all images).
var ErrSearch = errors.New("stacapi: search incomplete")

// ErrRetriesExhausted marks (besides ErrSearch) a request that kept failing
// transiently — 429, 5xx, transport errors — through every attempt: the
// API may answer later, unlike a 4xx, a cycle or a malformed answer.
var ErrRetriesExhausted = errors.New("stacapi: still failing after every retry")

// Retry policy of API requests: 429 and 5xx answers and transport errors
// are retried up to MaxAttempts times, waiting the answer's Retry-After
// (capped at MaxRetryAfter) or else an exponential backoff with jitter.
const (
	MaxAttempts   = 8
	BaseDelay     = 500 * time.Millisecond
	MaxDelay      = 30 * time.Second
	MaxRetryAfter = 2 * time.Minute
	// maxBody caps one API answer (a page of 250 full items is ~5 MB).
	maxBody = 256 << 20
)

// defaultHTTP is the client of API requests: connects within 10 s, headers
// within 60 s, a whole answer within 5 min.
var defaultHTTP = &http.Client{
	Timeout: 5 * time.Minute,
	Transport: &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: 60 * time.Second,
		IdleConnTimeout:       90 * time.Second,
		ForceAttemptHTTP2:     true,
	},
}

// request is one HTTP request of a search: method, URL, JSON body (POST)
// and extra headers.
type request struct {
	Method  string
	URL     string
	Body    []byte
	Headers map[string]string
}

// key identifies a request for cycle detection.
func (r request) key() string { return r.Method + " " + r.URL + " " + string(r.Body) }

// doer sends requests with the retry policy.
type doer struct {
	http *http.Client
	// headers are sent with every request to the API's own host (a
	// subscription key); never to another host.
	headers map[string]string
	host    string
	// stall is how long an answer may keep silent — no headers, or no
	// byte of its body — before the attempt fails (transiently):
	// storage.RequestTimeout unless a test shortens it.
	stall time.Duration
	// sleep waits d or until ctx ends; tests replace it to record waits.
	sleep func(ctx context.Context, d time.Duration) error
	// retries counts the retried attempts (for run.json).
	retries int
}

// do sends r until it succeeds (2xx), fails for good (another 4xx) or the
// attempts are spent, and returns the body (at most maxBody bytes).
func (d *doer) do(ctx context.Context, r request) ([]byte, error) {
	var body []byte
	err := d.stream(ctx, r, func(rd io.Reader) error {
		var err error
		body, err = io.ReadAll(rd)
		return err
	})
	return body, err
}

// stream is do handing the body of the 2xx answer to read as it comes:
// read is called again, from the start of a new answer, when a body read
// fails transiently (a stall, a cut connection); an error of read's own
// (malformed JSON) is final.
func (d *doer) stream(ctx context.Context, r request, read func(io.Reader) error) error {
	var last error
	for n := 1; n <= MaxAttempts; n++ {
		wait, err := d.once(ctx, r, read)
		if err == nil {
			return nil
		}
		last = err
		if wait < 0 {
			break
		}
		if n == MaxAttempts {
			return fmt.Errorf("%s %s: %v (%d attempts): %w: %w", r.Method, redact(r.URL), last, MaxAttempts, ErrRetriesExhausted, ErrSearch)
		}
		if wait == 0 {
			wait = backoff(n)
		}
		d.retries++
		if err := d.sleep(ctx, wait); err != nil {
			return fmt.Errorf("%s %s: %w (after %d attempts: %v)", r.Method, redact(r.URL), err, n, last)
		}
	}
	return fmt.Errorf("%s %s: %v: %w", r.Method, redact(r.URL), last, ErrSearch)
}

// errStalled cancels an attempt whose answer kept silent for the stall
// deadline; errOtherHost refuses a redirect to another host.
var (
	errStalled   = errors.New("answer stalled")
	errOtherHost = errors.New("redirect to another host refused")
)

// once sends r once and hands a 2xx body to read. wait is -1 when the
// failure is final, the Retry-After delay when the answer gave one, else 0
// (use backoff). The answer must start, and its body keep coming, within
// the stall deadline.
func (d *doer) once(ctx context.Context, r request, read func(io.Reader) error) (wait time.Duration, err error) {
	stall := d.stall
	if stall <= 0 {
		stall = storage.RequestTimeout
	}
	rctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	timer := time.AfterFunc(stall, func() { cancel(errStalled) })
	defer timer.Stop()
	req, err := d.newRequest(rctx, r)
	if err != nil {
		return -1, err
	}
	hc := *d.http
	hc.CheckRedirect = d.redirect
	resp, err := hc.Do(req)
	if err != nil {
		return d.failed(ctx, rctx, stall, "transport", err)
	}
	defer resp.Body.Close()
	timer.Reset(stall) // the headers came: the body has its own deadline
	body := &stallReader{r: io.LimitReader(resp.Body, maxBody+1), timer: timer, stall: stall}
	if resp.StatusCode < 200 || resp.StatusCode >= 300 {
		b, _ := io.ReadAll(io.LimitReader(body, 4096))
		err = fmt.Errorf("HTTP %d: %s", resp.StatusCode, snippet(b))
		if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusRequestTimeout || resp.StatusCode >= 500 {
			return retryAfter(resp.Header.Get("Retry-After"), time.Now()), err
		}
		return -1, err
	}
	err = read(body)
	switch {
	case body.err != nil:
		return d.failed(ctx, rctx, stall, "read answer", body.err)
	case body.n > maxBody:
		return -1, fmt.Errorf("answer over %d bytes", maxBody)
	case err != nil:
		return -1, err
	}
	return 0, nil
}

// newRequest is the HTTP request of r: the API's headers go to its own
// host only.
func (d *doer) newRequest(ctx context.Context, r request) (*http.Request, error) {
	var rd io.Reader
	if r.Body != nil {
		rd = bytes.NewReader(r.Body)
	}
	req, err := http.NewRequestWithContext(ctx, r.Method, r.URL, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/geo+json, application/json")
	if r.Body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if strings.EqualFold(req.URL.Host, d.host) {
		for k, v := range d.headers {
			req.Header.Set(k, v)
		}
	}
	for k, v := range r.Headers {
		req.Header.Set(k, v)
	}
	return req, nil
}

// failed is once's verdict on a transport or body-read error: final when
// ctx ended or a redirect left the host, else transient (a stall says so).
func (d *doer) failed(ctx, rctx context.Context, stall time.Duration, what string, err error) (time.Duration, error) {
	switch {
	case ctx.Err() != nil:
		return -1, ctx.Err()
	case errors.Is(err, errOtherHost):
		return -1, scrub(err)
	case errors.Is(context.Cause(rctx), errStalled):
		return 0, fmt.Errorf("%s: %w: nothing received for %s", what, errStalled, stall)
	}
	return 0, fmt.Errorf("%s: %v", what, scrub(err))
}

// stallReader counts the bytes read, keeps the first read error, and
// pushes the stall deadline back each time bytes arrive.
type stallReader struct {
	r     io.Reader
	timer *time.Timer
	stall time.Duration
	n     int64
	err   error
}

func (s *stallReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	s.n += int64(n)
	if n > 0 {
		s.timer.Reset(s.stall)
	}
	if err != nil && err != io.EOF && s.err == nil {
		s.err = err
	}
	return n, err
}

// redirect follows at most 10 redirects on the API's own host, and refuses
// one to another host (or from https to http): the request would carry
// the API's headers and a POST its body there, and the other host's answer
// would be taken as the API's (next links to another host are refused
// alike).
func (d *doer) redirect(req *http.Request, via []*http.Request) error {
	if len(via) >= 10 {
		return errors.New("stopped after 10 redirects")
	}
	from := via[0].URL
	if !strings.EqualFold(req.URL.Host, from.Host) || (from.Scheme == "https" && req.URL.Scheme != "https") {
		return fmt.Errorf("%w: %s://%s to %s://%s", errOtherHost, from.Scheme, from.Host, req.URL.Scheme, req.URL.Host)
	}
	return nil
}

// retryAfter parses a Retry-After header (seconds or an HTTP date), capped
// at MaxRetryAfter; 0 when absent or unparseable.
func retryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	var d time.Duration
	if s, err := strconv.Atoi(v); err == nil {
		d = time.Duration(s) * time.Second
	} else if t, err := http.ParseTime(v); err == nil {
		d = t.Sub(now)
	}
	if d <= 0 {
		return 0
	}
	return min(d, MaxRetryAfter)
}

// backoff is the wait before attempt n+1: full jitter over an exponential
// ceiling.
func backoff(n int) time.Duration {
	c := BaseDelay << min(n-1, 16)
	if c > MaxDelay || c <= 0 {
		c = MaxDelay
	}
	return c/2 + rand.N(c/2+1)
}

// snippet is the start of an error body, on one line.
func snippet(b []byte) string {
	s := strings.Join(strings.Fields(string(b)), " ")
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// redact drops the query of a URL that may carry a token (signed or
// subscription-keyed) before it is printed.
func redact(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return "(unparseable URL)"
	}
	for _, k := range []string{"sig", "token", "subscription-key", "access_token", "se", "sv", "skoid"} {
		if p.Query().Has(k) {
			p.RawQuery = "(redacted)"
			break
		}
	}
	p.User = nil
	return p.String()
}

// scrub keeps a transport error's message but not the URL it quotes.
func scrub(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return fmt.Errorf("%s %s: %v", ue.Op, redact(ue.URL), ue.Err)
	}
	return err
}
