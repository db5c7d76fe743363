package series

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/airbusgeo/godal"
	"github.com/manejo/manejo/storage"
	"golang.org/x/sync/semaphore"
)

// DefaultSceneAttempts is the default Options.SceneAttempts: a scene whose
// reads fail transiently is read again up to 5 times in all, each attempt
// with GDAL's own retries of every request (storage.MaxAttempts) inside it.
const DefaultSceneAttempts = 5

// DefaultSceneRetryDelay is the default Options.SceneRetryDelay: the first
// wait before a scene is read again, doubled at each attempt (1, 2, 4, 8 s)
// with jitter.
const DefaultSceneRetryDelay = time.Second

// DefaultIOConcurrency is the default Options.IOConcurrency: scenes read at
// once from an object store. Each waits tens of milliseconds per request,
// so far more reads than cores keep the cores busy. Measured on the test
// archive over a loopback S3 server with 40 ms per request (2 cores): 16
// in flight took 8.7 s, 32 took 4.0 s, 64 took 5.2–6.0 s and 128 took 13.7
// s (threads and GDAL's shared caches contend): docs/performance.md.
const DefaultIOConcurrency = 32

// IOStats accounts for the reads of one collection in a Sample.
type IOStats struct {
	Scenes int `json:"scenes"` // scene attempts started (a retried scene counts each attempt)
	// Requests and Bytes are the HTTP requests and body bytes GDAL's
	// network statistics record for the collection's remote assets (GDAL
	// 3.6 records fewer requests than it sends: 3,500 of 3,820 GETs in
	// TestIOAccounting, every byte counted); 0 for local files, which GDAL
	// reads through the OS.
	Requests int64 `json:"requests"`
	Bytes    int64 `json:"bytes"`
	// Retries counts retries by cause: "gdal:http-503", "gdal:connection-reset"...
	// are requests GDAL retried itself (its warnings), "scene:..." whole
	// scenes read again by Sample after a transient failure.
	Retries map[string]int64 `json:"retries"`
	// ReadSeconds is the time spent inside GDAL opens and reads, summed
	// over scenes: waiting for the network or the disk, and decoding the
	// blocks (GDAL does both in the same call). ComputeSeconds is the time
	// spent placing cells and computing indices from the values read.
	ReadSeconds    float64 `json:"read_seconds"`
	ComputeSeconds float64 `json:"compute_seconds"`
}

func (s *IOStats) add(o IOStats) {
	s.Scenes += o.Scenes
	s.Requests += o.Requests
	s.Bytes += o.Bytes
	s.ReadSeconds += o.ReadSeconds
	s.ComputeSeconds += o.ComputeSeconds
	for k, v := range o.Retries {
		if s.Retries == nil {
			s.Retries = map[string]int64{}
		}
		s.Retries[k] += v
	}
}

// ioLog records what one scene attempt's GDAL calls did: the retries GDAL
// announced in its warnings and the time spent in GDAL. Its methods are
// safe for concurrent use (a scene's files are read in parallel).
type ioLog struct {
	mu       sync.Mutex
	retries  map[string]int64
	readNano atomic.Int64
	// onRetry, when set, is told of each retry GDAL announces.
	onRetry func(msg string)
}

// handler is godal's error handler for the scene's calls: a warning is not
// an error. GDAL warns "HTTP error code: 503 ... Retrying again in 0.5
// secs" when it retries a request itself; godal's default handler would
// turn that warning into a failed read even when the retry succeeded.
func (l *ioLog) handler(ec godal.ErrorCategory, _ int, msg string) error {
	if ec > godal.CE_Warning {
		return errors.New(msg)
	}
	if strings.Contains(msg, "Retrying") {
		l.mu.Lock()
		if l.retries == nil {
			l.retries = map[string]int64{}
		}
		l.retries["gdal:"+retryCause(msg)]++
		l.mu.Unlock()
		if l.onRetry != nil {
			l.onRetry(msg)
		}
	}
	return nil
}

// timed runs fn, a GDAL call, and adds its duration to the read time.
func (l *ioLog) timed(fn func() error) error {
	t0 := time.Now()
	err := fn()
	l.readNano.Add(int64(time.Since(t0)))
	return err
}

// retryCause names the cause of a transient failure from its message.
func retryCause(msg string) string {
	if m := httpStatus.FindStringSubmatch(msg); m != nil {
		return "http-" + m[1]
	}
	low := strings.ToLower(msg)
	switch {
	case strings.Contains(low, "slowdown") || strings.Contains(low, "slow down") || strings.Contains(low, "reduce your request rate"):
		return "http-503" // S3's SlowDown, whose message GDAL passes on
	case strings.Contains(low, "too many requests"):
		return "http-429"
	case strings.Contains(low, "reset") || strings.Contains(low, "empty reply") || strings.Contains(low, "recv failure") || strings.Contains(low, "send failure"):
		return "connection-reset"
	case strings.Contains(low, "timed out") || strings.Contains(low, "timeout") || strings.Contains(low, "deadline"):
		return "timeout"
	case strings.Contains(low, "connect"):
		return "connect"
	case strings.Contains(low, "not recognized") || strings.Contains(low, "does not exist") || strings.Contains(low, "no such file"):
		// GDAL could not open a file the store has (a failed header read).
		return "open-failed"
	}
	return "other"
}

// retryScene runs attempt (one read of a scene, given extra GDAL options)
// until it ends with no transient read failure or attempts are spent,
// waiting delay, then twice as long, and so on (with jitter) between
// attempts. Before another attempt GDAL forgets what it cached of the
// remote files involved (storage.ForgetFile) and reads them uncached
// (CPL_VSIL_CURL_NON_CACHED): a dropped request leaves it believing a
// file missing or empty, which the option alone drops only when the next
// attempt's handle closes, so that attempt failed too (an open's reset
// cost two attempts: TestFlakyS3). A scene still failing
// transiently at the end is marked incomplete: its failures are counted as
// SkipTransient, never as an unreadable scene.
//
// attempts bounds the scene's failed attempts in the run, not in this
// call: b counts them across every Sample sharing it, since the scene's
// last read in full. A scene that already spent them gets one probe
// attempt (counted too) once the last wait's ceiling has passed since its
// last failure (RetryBudget.admit), and is given up unread before that.
// The run's retry budget b bounds it in time too (RetryBudget): a scene
// whose budget is spent is given up unread; an attempt in flight is
// abandoned when it runs out (attempt's context is then cancelled with
// errBudgetSpent as the cause), and no wait outlasts it. attempt passes
// its onRetry to GDAL's retry warnings, which start the scene's clock.
func retryScene(ctx context.Context, attempts int, delay time.Duration, b *RetryBudget, it *Item, attempt func(actx context.Context, gdalCfg []string, onRetry func(string)) sceneResult) sceneResult {
	k := keysOf(it)
	if err := b.spent(k, time.Now()); err != nil {
		return givenUp(it, err)
	}
	probe, err := b.admit(k, attempts, delay<<min(attempts-1, 10), time.Now())
	if err != nil {
		return givenUp(it, err)
	}
	onRetry := func(msg string) { b.fail(k, time.Now(), storage.RedactSigned(msg)) }
	var extra []string
	retries := map[string]int64{}
	for n := 1; ; n++ {
		actx, stop := b.watch(ctx, k)
		res := attempt(actx, extra, onRetry)
		cut := errors.Is(context.Cause(actx), errBudgetSpent)
		stop()
		res.st.io.Scenes = n
		if cut && res.st.incomplete {
			// The budget ran out during the attempt: runScene gave the
			// scene up (SkipTransient, incomplete).
			res.st.io.addRetries(retries)
			return res
		}
		tr, paths := transientOf(ctx, res.st.problems)
		if len(tr) == 0 || ctx.Err() != nil {
			if ctx.Err() == nil {
				b.ok(k)
			}
			res.st.io.addRetries(retries)
			return res
		}
		b.fail(k, time.Now(), res.st.problems[tr[0]].Detail)
		failed := b.failedAttempt(k, time.Now())
		if probe || failed >= attempts || b.spent(k, time.Now()) != nil {
			res.st.io.addRetries(retries)
			res.st.markIncomplete(tr, failed)
			return res
		}
		for _, i := range tr {
			retries["scene:"+retryCause(res.st.problems[i].Detail)]++
		}
		// GDAL's own retries in the failed attempt were made too: keep
		// them, as res (counted with retries from here on) is dropped.
		for cause, n := range res.st.io.Retries {
			retries[cause] += n
		}
		res.st.io.Retries = nil
		extra = nil
		if len(paths) > 0 {
			extra = []string{"CPL_VSIL_CURL_NON_CACHED=" + strings.Join(paths, ":")}
		}
		ceil := delay << min(failed-1, 10)
		t := time.NewTimer(min(ceil/2+rand.N(ceil/2+1), b.remaining(k, time.Now())))
		select {
		case <-ctx.Done():
			t.Stop()
			res.st.io.addRetries(retries)
			return res
		case <-t.C:
		}
		if b.spent(k, time.Now()) != nil {
			res.st.io.addRetries(retries)
			res.st.markIncomplete(tr, failed)
			return res
		}
		for _, p := range paths {
			storage.ForgetFile(p)
		}
	}
}

func (s *IOStats) addRetries(r map[string]int64) { s.add(IOStats{Retries: r}) }

// transientOf returns the indices of the problems that are transient read
// failures, and the GDAL paths of the remote files they name.
func transientOf(ctx context.Context, ps []Problem) (idx []int, paths []string) {
	seen := map[string]bool{}
	for i, p := range ps {
		ok, path := transientRead(ctx, p)
		if !ok {
			continue
		}
		idx = append(idx, i)
		if path != "" && !seen[path] {
			seen[path] = true
			paths = append(paths, path)
		}
	}
	sort.Strings(paths)
	return idx, paths
}

// markIncomplete turns the transient failures tr of a scene that spent its
// attempts into SkipTransient problems and marks the scene incomplete.
func (s *sceneStats) markIncomplete(tr []int, attempts int) {
	s.incomplete = true
	for _, i := range tr {
		p := &s.problems[i]
		s.skipped[p.Reason]--
		if s.skipped[p.Reason] == 0 {
			delete(s.skipped, p.Reason)
		}
		p.Reason = SkipTransient
		p.Detail = fmt.Sprintf("still failing after %d attempts: %s", attempts, p.Detail)
		s.count(SkipTransient, 1)
	}
}

// netByCollection returns the GDAL network statistics of the remote assets
// of jobs, by collection, as the difference between after and before.
func netByCollection(jobs []*sceneJob, allow []hrefRule, before, after map[string]storage.NetStat) map[string]storage.NetStat {
	out := map[string]storage.NetStat{}
	seen := map[string]bool{}
	for _, j := range jobs {
		for _, a := range j.item.Assets {
			p, err := gdalPath(a.Href, allow)
			if err != nil || seen[p] || !strings.HasPrefix(p, "/vsi") {
				continue
			}
			seen[p] = true
			d := out[j.item.Collection]
			d.Requests += after[p].Requests - before[p].Requests
			d.Bytes += after[p].Bytes - before[p].Bytes
			out[j.item.Collection] = d
		}
	}
	return out
}

// throttle is the adaptive limit on scenes in flight from a remote store:
// a scene attempt that met throttling (HTTP 429 or 503 SlowDown, retried by
// GDAL or by Sample) halves the limit, at most once per limit attempts,
// down to one scene at a time; attempts without it raise it by one per
// limit attempts, back to the maximum. A throttled store slows the job
// down instead of failing its scenes: a floor above one failed scenes of a
// store that takes fewer requests at once than a few scenes' COGs
// (pipeline.TestThrottledStore).
type throttle struct {
	mu                        sync.Mutex
	cond                      *sync.Cond
	limit, most, least, inUse int
	since                     int // attempts since the limit last changed
}

func newThrottle(most int) *throttle {
	t := &throttle{limit: most, most: most, least: 1}
	t.cond = sync.NewCond(&t.mu)
	return t
}

func (t *throttle) acquire() {
	t.mu.Lock()
	for t.inUse >= t.limit {
		t.cond.Wait()
	}
	t.inUse++
	t.mu.Unlock()
}

func (t *throttle) release(throttled bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.inUse--
	t.since++
	switch {
	case throttled && t.since >= t.limit && t.limit > t.least:
		t.limit, t.since = max(t.limit/2, t.least), 0
	case !throttled && t.since >= t.limit && t.limit < t.most:
		t.limit, t.since = t.limit+1, 0
	}
	t.cond.Broadcast()
}

// throttled says whether a scene attempt met throttling: GDAL retried a
// 429 or 503 itself, or the scene failed with one.
func throttled(ss sceneStats) bool {
	for k := range ss.io.Retries {
		if strings.HasSuffix(k, ":http-429") || strings.HasSuffix(k, ":http-503") {
			return true
		}
	}
	for _, p := range ss.problems {
		if c := retryCause(p.Detail); c == "http-429" || c == "http-503" {
			return true
		}
	}
	return false
}

// pairGate bounds the cell × scene pairs of the scenes read at once
// (Options.MaxPairsInFlight); a nil gate bounds nothing.
type pairGate struct {
	sem  *semaphore.Weighted
	most int
}

func newPairGate(most int) *pairGate {
	if most <= 0 {
		return nil
	}
	return &pairGate{sem: semaphore.NewWeighted(int64(most)), most: most}
}

// acquire waits until a scene of cells pairs fits (a scene larger than
// the bound waits until nothing else is in flight).
func (p *pairGate) acquire(ctx context.Context, cells int) error {
	if p == nil {
		return nil
	}
	return p.sem.Acquire(ctx, int64(min(cells, p.most)))
}

func (p *pairGate) release(cells int) {
	if p != nil {
		p.sem.Release(int64(min(cells, p.most)))
	}
}
