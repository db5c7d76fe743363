package series

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/manejo/manejo/storage"
)

// DefaultRetryBudget is the default RetryBudget: reads that keep failing
// transiently are retried for 3 minutes from their first failure.
const DefaultRetryBudget = 3 * time.Minute

// RetryBudget bounds the time a run spends retrying reads that keep
// failing transiently (issue 26 item 4). Each scene has a clock, started
// by its first transient failure (a failed attempt, or GDAL announcing a
// retry of one of its requests) and stopped when it is read in full; each
// object store (S3 bucket, HTTP host) has one too, started by a failure of
// any of its scenes and stopped by any of them read in full. A failing
// scene whose own clock, or its store's, has run for the budget is given
// up for the rest of the run: the attempt in flight is abandoned, no other
// is made, and later batches that need it do not read it. Its talhões are
// incomplete (no rows, no payload), to be read again by the next run. So
// one object answering 503 forever costs the run the budget once, not
// each batch's attempts, and a store that is down costs it about the
// budget, not the budget per scene.
//
// It keeps the count of a scene's attempts too: Options.SceneAttempts
// bounds the failed attempts of a scene in the whole run, since its last
// read in full — not per Sample. A scene that spent them in the read pass
// does not get as many again in each batch that needs it (issue 26): a
// later Sample makes one probe attempt of it, counted like the others,
// once the backoff after its last failure has passed (the last wait's
// ceiling, SceneRetryDelay·2^(SceneAttempts−1): 16 s by default), and
// gives it up unread before that. So a fault that cleared after a short
// blip is read by the next Sample, and one that lasts costs at most one
// attempt per later Sample until the time budget gives the scene up.
//
// One RetryBudget is shared by every Sample of a run (Options.Budget); its
// methods are safe for concurrent use.
type RetryBudget struct {
	d      time.Duration
	mu     sync.Mutex
	clocks map[string]failing // by scene ("scene:" + collection/id) and store ("store:" + location)
	tries  map[string]tries   // failed attempts by scene key, since its last read in full
}

// tries are a scene's failed attempts since its last read in full, and
// when the last one failed (or a probe of it started).
type tries struct {
	n    int
	last time.Time
}

// failing is a running clock: since when, and the last failure seen.
type failing struct {
	since time.Time
	last  string
}

// NewRetryBudget returns a budget of d; d ≤ 0 means DefaultRetryBudget.
func NewRetryBudget(d time.Duration) *RetryBudget {
	if d <= 0 {
		d = DefaultRetryBudget
	}
	return &RetryBudget{d: d, clocks: map[string]failing{}, tries: map[string]tries{}}
}

// Duration is the budget.
func (b *RetryBudget) Duration() time.Duration { return b.d }

// budgetKeys are the clocks of one scene: its own and its store's.
type budgetKeys [2]string

// keysOf returns the clocks of a scene: the item, and the store of its
// first remote asset ("" for a scene of local files).
func keysOf(it *Item) budgetKeys {
	k := budgetKeys{"scene:" + it.Collection + "/" + it.ID}
	for _, a := range it.Assets {
		if loc := storage.LocationOf(a.Href); strings.Contains(loc, "://") {
			k[1] = "store:" + storeOf(loc)
			break
		}
	}
	return k
}

// storeOf is the bucket or host part of a remote location: "s3://bucket",
// "https://host".
func storeOf(loc string) string {
	for i, slashes := 0, 0; i < len(loc); i++ {
		if loc[i] == '/' {
			if slashes++; slashes == 3 {
				return loc[:i]
			}
		}
	}
	return loc
}

// fail starts the clocks of k (those not running) at now, and keeps msg
// as the last failure.
func (b *RetryBudget) fail(k budgetKeys, now time.Time, msg string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, key := range k {
		if key == "" {
			continue
		}
		c, ok := b.clocks[key]
		if !ok {
			c.since = now
		}
		if msg != "" {
			c.last = msg
		}
		b.clocks[key] = c
	}
}

// ok stops the clocks of k and clears the scene's failed attempts: the
// scene was read in full.
func (b *RetryBudget) ok(k budgetKeys) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, key := range k {
		delete(b.clocks, key)
	}
	delete(b.tries, k[0])
}

// failedAttempt counts one more failed attempt of the scene, ended at
// now, and returns its failed attempts in the run since its last read in
// full.
func (b *RetryBudget) failedAttempt(k budgetKeys, now time.Time) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	t := b.tries[k[0]]
	t.n++
	t.last = now
	b.tries[k[0]] = t
	return t.n
}

// admit says whether a Sample may attempt the scene at now. It may while
// the scene has failed fewer than attempts times in the run (since its
// last read in full); after that, once, as a probe, when backoff has
// passed since its last failure — the probe is booked at now, so a
// concurrent Sample waits another backoff. Otherwise err gives the scene
// up unread.
func (b *RetryBudget) admit(k budgetKeys, attempts int, backoff time.Duration, now time.Time) (probe bool, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	t := b.tries[k[0]]
	if t.n < attempts {
		return false, nil
	}
	if now.Sub(t.last) >= backoff {
		t.last = now
		b.tries[k[0]] = t
		return true, nil
	}
	last := ""
	if c := b.clocks[k[0]]; c.last != "" {
		last = "; last: " + c.last
	}
	return false, fmt.Errorf("%w: still failing after %d attempts in this run, the last %s ago (the next is allowed %s after it)%s",
		errBudgetSpent, t.n, now.Sub(t.last).Round(time.Millisecond), backoff, last)
}

// spent returns, when the scene's budget is spent at now, the error that
// gives it up; nil otherwise. Only a scene that is failing itself (its
// clock runs) can spend it: when its own clock has run for the budget, or
// its store's has (nothing of the store read in full for that long). So a
// scene that fails while its store is down is given up at once, and one
// that reads well is never given up for its store's sake.
func (b *RetryBudget) spent(k budgetKeys, now time.Time) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	sc, ok := b.clocks[k[0]]
	if !ok {
		return nil
	}
	what, c := "this scene's reads", sc
	if now.Sub(c.since) < b.d {
		st, ok := b.clocks[k[1]]
		if k[1] == "" || !ok || now.Sub(st.since) < b.d {
			return nil
		}
		what, c = "every read of "+k[1][len("store:"):], st
	}
	last := ""
	if c.last != "" {
		last = "; last: " + c.last
	}
	return fmt.Errorf("%w: %s kept failing transiently from %s for the retry budget of %s%s",
		errBudgetSpent, what, c.since.UTC().Format(time.TimeOnly), b.d, last)
}

// remaining is the time left before the scene's budget is spent; the
// whole budget when the scene is not failing.
func (b *RetryBudget) remaining(k budgetKeys, now time.Time) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	sc, ok := b.clocks[k[0]]
	if !ok {
		return b.d
	}
	left := b.d - now.Sub(sc.since)
	if st, ok := b.clocks[k[1]]; ok && k[1] != "" {
		left = min(left, b.d-now.Sub(st.since))
	}
	return max(left, 0)
}

// errBudgetSpent marks a scene given up because its retry budget (time or
// attempts) is spent: retryScene tells it by the cause of the attempt's
// context, and its Problem is SkipTransient, the talhões incomplete.
var errBudgetSpent = errors.New("retry budget spent")

// budgetPoll is how often an attempt in flight checks its budget.
const budgetPoll = 250 * time.Millisecond

// watch returns a context of ctx that is cancelled, with the budget's
// error as its cause, once a clock of k has run for the budget; stop ends
// the watch.
func (b *RetryBudget) watch(ctx context.Context, k budgetKeys) (actx context.Context, stop func()) {
	actx, cancel := context.WithCancelCause(ctx)
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(budgetPoll)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-actx.Done():
				return
			case now := <-t.C:
				if err := b.spent(k, now); err != nil {
					cancel(err)
					return
				}
			}
		}
	}()
	return actx, func() { close(done); cancel(nil) }
}

// givenUp is the result of a scene whose budget was spent before an
// attempt: skipped as transient, incomplete, unread.
func givenUp(it *Item, err error) sceneResult {
	var ss sceneStats
	ss.skip(it, "", SkipTransient, 1, err)
	ss.incomplete = true
	return sceneResult{st: ss}
}
