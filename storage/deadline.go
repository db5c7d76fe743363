package storage

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// ErrDeadline reports a call abandoned at its deadline (Bounded).
var ErrDeadline = errors.New("storage: deadline exceeded")

// CallTimeout bounds one whole read of an operator's input that GDAL or the
// file system may block in: reading the talhões file, opening the DEM,
// reading one talhão's DEM window. Each HTTP request has its own, shorter
// deadlines (GDALConfig, RequestTimeout); this one also ends a read that no
// HTTP timeout covers (a FIFO, a hung network file system, a server that
// trickles bytes).
const CallTimeout = 10 * time.Minute

// Bounded runs f under a deadline of d (no deadline when d ≤ 0) and ctx,
// and returns its result, or — when the deadline passes or ctx is done
// first — an error wrapping ErrDeadline (or ctx's error) without waiting for
// f. GDAL and file reads are blocking calls that cannot be interrupted from
// Go, so f runs in its own goroutine: abandoned, it ends on its own (its
// context is cancelled), and release, when not nil, is then given what it
// returned without error (a dataset to close). what names the call in the
// error.
func Bounded[T any](ctx context.Context, d time.Duration, what string, f func(context.Context) (T, error), release func(T)) (T, error) {
	if d <= 0 {
		return f(ctx)
	}
	cctx, cancel := context.WithTimeout(ctx, d)
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	var (
		mu   sync.Mutex
		gone bool
	)
	go func() {
		v, err := f(cctx)
		mu.Lock()
		defer mu.Unlock()
		if gone {
			if release != nil && err == nil {
				release(v)
			}
			return
		}
		done <- result{v, err}
	}()
	select {
	case r := <-done:
		cancel()
		return r.v, r.err
	case <-cctx.Done():
	}
	mu.Lock()
	select {
	case r := <-done:
		mu.Unlock()
		cancel()
		return r.v, r.err
	default:
	}
	gone = true
	mu.Unlock()
	cancel()
	var zero T
	if err := ctx.Err(); err != nil {
		return zero, fmt.Errorf("%s: %w", what, err)
	}
	return zero, fmt.Errorf("%s: %w after %s (the call is left to end on its own)", what, ErrDeadline, d)
}
