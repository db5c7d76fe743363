package series

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paulmach/orb"
)

// stuckAttempt is a scene attempt whose read GDAL keeps retrying: it
// announces a retry (with a signed URL) and blocks until unblock closes,
// inside runScene as Sample runs it. calls counts the attempts.
func stuckAttempt(it *Item, unblock <-chan struct{}, calls *atomic.Int64) func(context.Context, []string, func(string)) sceneResult {
	return func(actx context.Context, _ []string, onRetry func(string)) sceneResult {
		calls.Add(1)
		res, _ := runScene(actx, time.Hour, it, func(context.Context) sceneResult {
			onRetry("HTTP error code: 503 - https://store.example/c/" + it.ID + "/B04.tif?X-Amz-Signature=SECRET. Retrying again in 0.5 secs")
			<-unblock
			return sceneResult{}
		})
		return res
	}
}

func okAttempt(calls *atomic.Int64) func(context.Context, []string, func(string)) sceneResult {
	return func(context.Context, []string, func(string)) sceneResult {
		calls.Add(1)
		return sceneResult{st: sceneStats{read: true}}
	}
}

func storeItem(id string) *Item {
	return &Item{ID: id, Collection: "sentinel-2-l2a", Assets: map[string]Asset{"red": {Href: "https://store.example/c/" + id + "/B04.tif"}}}
}

// TestRetryBudget (issue 26 item 4): a scene whose reads GDAL keeps
// retrying is abandoned when the budget runs out, counted as transient
// and incomplete, its detail naming the budget and the last failure (the
// signature redacted); another batch needing it gives it up unread; a
// scene of the same store that reads well is not touched and stops the
// store's clock.
func TestRetryBudget(t *testing.T) {
	const d = 400 * time.Millisecond
	b := NewRetryBudget(d)
	unblock := make(chan struct{})
	defer close(unblock)
	bad := storeItem("BAD")
	var calls atomic.Int64
	t0 := time.Now()
	res := retryScene(context.Background(), 5, time.Millisecond, b, bad, stuckAttempt(bad, unblock, &calls))
	took := time.Since(t0)
	if took < d || took > d+4*budgetPoll {
		t.Errorf("the stuck scene was given up after %s, want the budget %s (+ at most %s)", took, d, 4*budgetPoll)
	}
	if !res.st.incomplete || res.st.skipped[SkipTransient] != 1 || len(res.st.problems) != 1 {
		t.Fatalf("stuck scene: %+v, want one transient problem, incomplete", res.st)
	}
	detail := res.st.problems[0].Detail
	if !strings.Contains(detail, "retry budget of 400ms") || !strings.Contains(detail, "HTTP error code: 503") || strings.Contains(detail, "SECRET") {
		t.Errorf("detail %q: want the budget and the last failure, without the signature", detail)
	}
	if calls.Load() != 1 {
		t.Errorf("%d attempts, want the one abandoned", calls.Load())
	}

	t0 = time.Now()
	res = retryScene(context.Background(), 5, time.Millisecond, b, bad, stuckAttempt(bad, unblock, &calls))
	if time.Since(t0) > budgetPoll || calls.Load() != 1 || !res.st.incomplete || !errors.Is(b.spent(keysOf(bad), time.Now()), errBudgetSpent) {
		t.Errorf("the given-up scene in a later batch: %s, %d attempts, %+v; want it given up unread at once", time.Since(t0), calls.Load(), res.st)
	}

	var good atomic.Int64
	res = retryScene(context.Background(), 5, time.Millisecond, b, storeItem("GOOD"), okAttempt(&good))
	if good.Load() != 1 || !res.st.read || res.st.incomplete {
		t.Errorf("a healthy scene of the same store: %d attempts, %+v; want read", good.Load(), res.st)
	}
	if _, running := b.clocks["store:https://store.example"]; running {
		t.Error("a scene read in full left its store's clock running")
	}
}

// TestRetryBudgetStoreDown: while nothing of a store reads, its clock
// runs from the first failure; once it has run for the budget, each other
// failing scene of it is given up as soon as it fails, not after a budget
// of its own.
func TestRetryBudgetStoreDown(t *testing.T) {
	const d = 400 * time.Millisecond
	b := NewRetryBudget(d)
	unblock := make(chan struct{})
	defer close(unblock)
	var calls atomic.Int64
	first := storeItem("A")
	retryScene(context.Background(), 5, time.Millisecond, b, first, stuckAttempt(first, unblock, &calls))
	t0 := time.Now()
	second := storeItem("B")
	res := retryScene(context.Background(), 5, time.Millisecond, b, second, stuckAttempt(second, unblock, &calls))
	if took := time.Since(t0); took > 3*budgetPoll || !res.st.incomplete || !strings.Contains(res.st.problems[0].Detail, "every read of https://store.example") {
		t.Errorf("a second scene of the store that is down: given up after %s, %+v; want at its first failure, naming the store", took, res.st)
	}
}

// TestSceneAttemptsPerRun (issue 26): the attempts of a failing scene are
// counted per run, across the Samples sharing a budget (the read pass and
// each batch of a run), since the scene's last read in full: a scene that
// spent them is given up unread by later calls until the backoff after its
// last failure has passed (delay·2^(attempts−1)); then a later call makes
// one probe attempt, counted, and no more; one read in full in between
// starts again from none. The backoff is passed by ageing the scene's last
// failure (ago), not by sleeping.
func TestSceneAttemptsPerRun(t *testing.T) {
	it := storeItem("S1")
	fail := func(calls *int) func(context.Context, []string, func(string)) sceneResult {
		return func(context.Context, []string, func(string)) sceneResult {
			*calls++
			var ss sceneStats
			ss.skip(it, "red", SkipUnreadable, 1, errors.New("HTTP error code: 503"))
			return sceneResult{st: ss}
		}
	}
	const delay = 50 * time.Millisecond // backoff after 3 failures: 200 ms
	b := NewRetryBudget(time.Hour)
	calls := 0
	res := retryScene(context.Background(), 3, delay, b, it, fail(&calls))
	if calls != 3 || !res.st.incomplete || !strings.Contains(res.st.problems[0].Detail, "still failing after 3 attempts") {
		t.Fatalf("first call (the read pass): %d attempts, %+v; want 3, incomplete", calls, res.st)
	}
	for batch := 1; batch <= 2; batch++ {
		ago(b, it, -time.Minute) // within the backoff, however slow the machine
		res = retryScene(context.Background(), 3, delay, b, it, fail(&calls))
		if calls != 3 || !res.st.incomplete || res.st.skipped[SkipTransient] != 1 || !strings.Contains(res.st.problems[0].Detail, "still failing after 3 attempts in this run") {
			t.Errorf("batch %d within the backoff: %d attempts in all, %+v; want none more, given up as transient", batch, calls, res.st)
		}
	}
	for batch, want := range []int{4, 5} {
		ago(b, it, 4*delay) // the backoff has passed: one probe, counted
		res = retryScene(context.Background(), 3, delay, b, it, fail(&calls))
		if calls != want || !res.st.incomplete || res.st.skipped[SkipTransient] != 1 || !strings.Contains(res.st.problems[0].Detail, fmt.Sprintf("still failing after %d attempts", want)) {
			t.Errorf("batch %d after the backoff: %d attempts in all, %+v; want one probe (%d in all), failed, transient", batch+3, calls, res.st, want)
		}
	}

	// The fault clears between Samples (review #3): the read pass spent
	// its 3 attempts in a blip; the next Sample after the backoff reads
	// the scene, and the count starts again from none.
	b = NewRetryBudget(time.Hour)
	calls = 0
	retryScene(context.Background(), 3, delay, b, it, fail(&calls))
	ago(b, it, 4*delay)
	var read atomic.Int64
	if res := retryScene(context.Background(), 3, delay, b, it, okAttempt(&read)); read.Load() != 1 || !res.st.read || res.st.incomplete {
		t.Errorf("fault cleared, next Sample after the backoff: %d attempts, %+v; want the scene read", read.Load(), res.st)
	}
	if _, left := b.tries[keysOf(it)[0]]; left || calls != 3 {
		t.Errorf("after the full read: count left %v, %d failed attempts; want none left", b.tries[keysOf(it)[0]], calls)
	}

	// Two failures, then a full read: the next call has its 3 attempts.
	b = NewRetryBudget(time.Hour)
	calls = 0
	flaky := func(context.Context, []string, func(string)) sceneResult {
		if calls++; calls%3 != 0 {
			var ss sceneStats
			ss.skip(it, "red", SkipUnreadable, 1, errors.New("HTTP error code: 503"))
			return sceneResult{st: ss}
		}
		return sceneResult{st: sceneStats{read: true}}
	}
	for call := 1; call <= 2; call++ {
		if res := retryScene(context.Background(), 3, time.Millisecond, b, it, flaky); !res.st.read || res.st.incomplete {
			t.Errorf("call %d, read on its third attempt: %+v", call, res.st)
		}
	}
	if calls != 6 {
		t.Errorf("%d attempts, want 3 per call: a full read clears the count", calls)
	}
}

// ago moves the scene's last failed attempt d before now (a negative d
// puts it after now: the backoff has surely not passed).
func ago(b *RetryBudget, it *Item, d time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	k := keysOf(it)[0]
	t := b.tries[k]
	t.last = time.Now().Add(-d)
	b.tries[k] = t
}

// TestMaxPairsInFlight: with Options.MaxPairsInFlight, a scene starts only
// when the cell × scene pairs in flight leave room for its cells. Four
// scenes of 2 cells each on a loopback HTTP server (30 ms a request): a
// bound of 3 pairs reads them one at a time (the server never serves two
// scenes at once), without it they overlap; the observations are the same.
// Each read has its own URLs, so GDAL's cache of the other serves nothing.
func TestMaxPairsInFlight(t *testing.T) {
	dir := t.TempDir()
	var mu sync.Mutex
	inFlight, most := map[string]int{}, 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := path.Base(r.URL.Path)
		scene, _, _ := strings.Cut(name, "_")
		mu.Lock()
		inFlight[scene]++
		most = max(most, len(inFlight))
		mu.Unlock()
		defer func() {
			mu.Lock()
			if inFlight[scene]--; inFlight[scene] == 0 {
				delete(inFlight, scene)
			}
			mu.Unlock()
		}()
		time.Sleep(30 * time.Millisecond)
		http.ServeFile(w, r, filepath.Join(dir, name))
	}))
	defer srv.Close()
	var items []map[string]any
	var pts []orb.Point
	for i := range 4 {
		it, p := s2Spec(4, 1200).build(t, dir, fmt.Sprintf("s%d", i), fmt.Sprintf("2024-01-0%dT13:00:00Z", i+1))
		items, pts = append(items, it), p
	}
	g := fieldAround("f", 0.0002, pts...)
	read := func(run string, bound int) (int, int) {
		t.Helper()
		for _, it := range items {
			for _, a := range it["assets"].(map[string]any) {
				a.(map[string]any)["href"] = srv.URL + "/" + run + "/" + path.Base(a.(map[string]any)["href"].(string))
			}
		}
		catPath := filepath.Join(dir, run+".json")
		writeJSON(t, catPath, collection(items...))
		cat, errs := LoadCatalog(context.Background(), catPath, CatalogOptions{AllowHrefPrefixes: []string{srv.URL + "/"}})
		if cat == nil {
			t.Fatal(errs)
		}
		mu.Lock()
		most = 0
		mu.Unlock()
		obs, st, err := sampleWithin(t, context.Background(), time.Minute, cat, g, Options{IOConcurrency: 4, MaxPairsInFlight: bound})
		if err != nil || st.ScenesRead != 4 {
			t.Fatalf("bound %d: %v, %d scenes read, problems %v", bound, err, st.ScenesRead, st.Problems)
		}
		mu.Lock()
		defer mu.Unlock()
		return most, len(obs)
	}
	bounded, obsBounded := read("bounded", 3)
	free, obsFree := read("free", 0)
	if bounded != 1 || obsBounded != obsFree || obsFree == 0 {
		t.Errorf("scenes served at once: %d with a bound of 3 pairs (want 1), %d without; observations %d and %d (want equal)", bounded, free, obsBounded, obsFree)
	}
	if free < 2 {
		t.Errorf("without a bound the scenes did not overlap (%d at once): the bound is not what serialised them", free)
	}
}
