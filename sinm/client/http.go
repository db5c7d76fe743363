package client

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/manejo/manejo/internal/clock"
)

// ErrForbidden is a 403: the token lacks the role Role. It stops a run.
var ErrForbidden = errors.New("sinm: 403 forbidden: the client lacks the role " + Role)

// Client talks to one SINM API. The zero values of the optional fields are
// usable.
type Client struct {
	BaseURL string  // e.g. https://www.zarcnm-h.cnptia.embrapa.br
	Tokens  *Tokens // nil only for a dry run
	HTTP    *http.Client

	MaxAttempts int           // per request, including the first; 0: 6
	Backoff     time.Duration // first wait; doubles each retry; 0: 1 s
	MaxWait     time.Duration // cap on one wait (Retry-After included); 0: 2 min
	Rate        float64       // requests per second, all workers together; 0: no limit

	// Sleep waits d or until ctx ends; nil sleeps for real. Tests record.
	Sleep func(ctx context.Context, d time.Duration) error
	// Logf reports retries; every line has passed clean: no secret,
	// token, full key or CPF/CNPJ-like digits, at most MaxMessageBytes.
	Logf func(format string, args ...any)

	retries atomic.Int64
	mu      sync.Mutex
	next    time.Time // rate limiter: earliest start of the next request
}

// Retries returns how many requests were retried (429, 5xx, resets, 401).
func (c *Client) Retries() int { return int(c.retries.Load()) }

// Response is a final SINM answer.
type Response struct {
	Code int
	Body []byte
}

// request sends method path with body (JSON, may be nil), retrying 429, 5xx
// and transport errors with exponential backoff or Retry-After, and a 401
// once after a fresh token. key is only used to clean messages: every
// returned error and log line has passed Client.clean. A 403 is
// ErrForbidden, refused credentials ErrCredentials, a redirect to another
// host ErrRedirect (none retried); other codes are returned as they are.
func (c *Client) request(ctx context.Context, method, path string, body []byte, key string) (Response, error) {
	attempts := cmp.Or(c.MaxAttempts, 6)
	wait := cmp.Or(c.Backoff, time.Second)
	refreshed := false
	var last string
	for try := 1; ; try++ {
		resp, err := c.once(ctx, method, path, body)
		if ctx.Err() != nil {
			return Response{}, ctx.Err()
		}
		d := wait
		switch {
		case stops(err):
			return Response{}, c.cleanErr(err, key)
		case err != nil:
			last = err.Error()
		case resp.Code == http.StatusUnauthorized && !refreshed:
			refreshed = true
			c.retries.Add(1)
			c.logf(key, "%s %s: 401, fetching a new token", method, path)
			try--
			continue
		case resp.Code == http.StatusForbidden:
			err := fmt.Errorf("%w (%s)", ErrForbidden, strings.Join(parseProblem(resp.Code, resp.Body, key), "; "))
			return Response{Code: resp.Code, Body: resp.Body}, c.cleanErr(err, key)
		case resp.Code == http.StatusTooManyRequests || resp.Code >= 500:
			last = fmt.Sprintf("HTTP %d", resp.Code)
			if ra, ok := retryAfter(resp.header); ok {
				d = ra
			}
		default:
			return Response{Code: resp.Code, Body: resp.Body}, nil
		}
		if try >= attempts {
			err := fmt.Errorf("%s %s: gave up after %d attempts: %s", method, path, try, last)
			return Response{Code: resp.Code, Body: resp.Body}, c.cleanErr(err, key)
		}
		d = min(d, cmp.Or(c.MaxWait, 2*time.Minute))
		c.retries.Add(1)
		c.logf(key, "%s %s: %s, retry %d in %s", method, path, last, try, d)
		if err := c.sleep(ctx, d); err != nil {
			return Response{}, err
		}
		wait *= 2
	}
}

type rawResponse struct {
	Code   int
	Body   []byte
	header http.Header
}

// once sends one attempt with a bearer token; a 401 invalidates the token.
func (c *Client) once(ctx context.Context, method, path string, body []byte) (rawResponse, error) {
	if err := c.pace(ctx); err != nil {
		return rawResponse{}, err
	}
	if c.Tokens == nil {
		return rawResponse{}, errors.New("sinm: no token source")
	}
	tok, err := c.Tokens.Token(ctx)
	if err != nil {
		return rawResponse{}, err
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(c.BaseURL, "/")+path, rd)
	if err != nil {
		return rawResponse{}, err
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := do(c.HTTP, req)
	if err != nil {
		return rawResponse{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return rawResponse{}, err
	}
	if resp.StatusCode == http.StatusUnauthorized {
		c.Tokens.Invalidate(tok)
	}
	return rawResponse{Code: resp.StatusCode, Body: b, header: resp.Header}, nil
}

// pace blocks until the rate limit lets the next request start.
func (c *Client) pace(ctx context.Context) error {
	if c.Rate <= 0 {
		return nil
	}
	gap := time.Duration(float64(time.Second) / c.Rate)
	c.mu.Lock()
	now := time.Now()
	start := now
	if c.next.After(now) {
		start = c.next
	}
	c.next = start.Add(gap)
	c.mu.Unlock()
	if d := start.Sub(now); d > 0 {
		return clock.Sleep(ctx, d)
	}
	return nil
}

func (c *Client) sleep(ctx context.Context, d time.Duration) error {
	if c.Sleep != nil {
		return c.Sleep(ctx, d)
	}
	return clock.Sleep(ctx, d)
}

// logf hands Logf one line, cleaned (Client.clean) with key.
func (c *Client) logf(key, format string, args ...any) {
	if c.Logf != nil {
		c.Logf("%s", c.clean(fmt.Sprintf(format, args...), key))
	}
}

// retryAfter reads a Retry-After header: seconds or an HTTP date.
func retryAfter(h http.Header) (time.Duration, bool) {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if s, err := strconv.Atoi(v); err == nil && s >= 0 {
		return time.Duration(s) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(time.Until(t), 0), true
	}
	return 0, false
}
