package series

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// runScene runs read (one scene's opens and reads) under a deadline of d
// and ctx, and returns its result, or — when ctx is cancelled or the
// deadline passes first — a skip of the scene without waiting for it.
//
// GDAL reads are blocking cgo calls: a server that accepts a connection and
// never answers, or a local read that never returns, cannot be interrupted
// from Go. So read runs in its own goroutine and the caller stops waiting;
// abandoned is then true, the goroutine keeps what it holds (the
// reader) until GDAL returns (its own HTTP deadlines, storage.GDALConfig),
// and its result is dropped. The skip is SkipCancelled when ctx was cancelled, else
// SkipUnreadable with a "scene read deadline exceeded" detail, which
// TransientReads counts as transient.
func runScene(ctx context.Context, d time.Duration, it *Item, read func(context.Context) sceneResult) (res sceneResult, abandoned bool) {
	sctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	done := make(chan sceneResult, 1)
	var mu sync.Mutex
	finished := false
	go func() {
		r := read(sctx)
		mu.Lock()
		finished = true
		mu.Unlock()
		done <- r
	}()
	select {
	case r := <-done:
		return r, false
	case <-sctx.Done():
	}
	mu.Lock()
	if finished {
		mu.Unlock()
		return <-done, false
	}
	mu.Unlock()
	if cause := context.Cause(sctx); errors.Is(cause, errBudgetSpent) {
		// The run's retry budget gave the scene up (RetryBudget.watch):
		// transient, its talhões incomplete; retryScene tries no more.
		return givenUp(it, cause), true
	}
	var ss sceneStats
	if errors.Is(ctx.Err(), context.Canceled) {
		ss.skip(it, "", SkipCancelled, 1, ctx.Err())
	} else {
		ss.skip(it, "", SkipUnreadable, 1, fmt.Errorf("scene read deadline exceeded after %s (%s)", d, sceneDeadlineMark))
	}
	return sceneResult{st: ss}, true
}

// sceneDeadlineMark is the text transientRead recognises in the detail of a
// scene abandoned at its deadline.
const sceneDeadlineMark = "Operation timed out"
