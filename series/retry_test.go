package series

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/airbusgeo/godal"
)

// TestWarningsAreNotErrors: GDAL announces the retries it makes itself
// with warnings; they are counted by cause and never fail the call, while
// a GDAL error still does.
func TestWarningsAreNotErrors(t *testing.T) {
	var l ioLog
	if err := l.handler(godal.CE_Warning, 1, "HTTP error code: 503 - <Error><Code>SlowDown</Code></Error>. Retrying again in 0.5 secs"); err != nil {
		t.Errorf("a retry warning failed the call: %v", err)
	}
	if err := l.handler(godal.CE_Warning, 1, "curl error: Recv failure: Connection reset by peer. Retrying again in 0.5 secs"); err != nil {
		t.Errorf("a retry warning failed the call: %v", err)
	}
	if err := l.handler(godal.CE_Warning, 1, "TIFFReadDirectory: unknown tag"); err != nil {
		t.Errorf("a warning failed the call: %v", err)
	}
	if err := l.handler(godal.CE_Failure, 1, "HTTP error code: 503"); err == nil {
		t.Error("a GDAL error did not fail the call")
	}
	want := map[string]int64{"gdal:http-503": 1, "gdal:connection-reset": 1}
	if len(l.retries) != len(want) || l.retries["gdal:http-503"] != 1 || l.retries["gdal:connection-reset"] != 1 {
		t.Errorf("retries %v, want %v", l.retries, want)
	}
}

func TestRetryCause(t *testing.T) {
	for msg, want := range map[string]string{
		"HTTP error code: 429 - too many":                            "http-429",
		"open /vsicurl/http://h:8080/a.tif: HTTP response code: 503": "http-503",
		"HTTP error code : 502":                                      "http-502",
		"open /vsis3/b/k.tif: Please reduce your request rate.":      "http-503",
		"open /vsigs/b/k.tif: Too Many Requests":                     "http-429",
		"curl error: Empty reply from server":                        "connection-reset",
		"scene read deadline exceeded after 1s":                      "timeout",
		"open /vsis3/b/k.tif: not recognized as a supported":         "open-failed",
		"Couldn't connect to server":                                 "connect",
		"something else":                                             "other",
	} {
		if got := retryCause(msg); got != want {
			t.Errorf("retryCause(%q) = %s, want %s", msg, got, want)
		}
	}
}

// TestRetryScene: a scene failing transiently is read again until it
// succeeds; one failing for good after the budget is SkipTransient and
// incomplete; a permanent failure is not retried.
func TestRetryScene(t *testing.T) {
	it := &Item{ID: "S1"}
	fail := func(detail string, reason SkipReason) sceneResult {
		var ss sceneStats
		ss.skip(it, "red", reason, 1, errors.New(detail))
		return sceneResult{st: ss}
	}
	calls := 0
	res := retryScene(context.Background(), 5, time.Millisecond, NewRetryBudget(time.Hour), it, func(context.Context, []string, func(string)) sceneResult {
		if calls++; calls < 3 {
			return fail("HTTP error code: 503", SkipUnreadable)
		}
		return sceneResult{st: sceneStats{read: true}}
	})
	if calls != 3 || !res.st.read || res.st.incomplete || res.st.io.Scenes != 3 || res.st.io.Retries["scene:http-503"] != 2 {
		t.Errorf("after 2 faults: calls %d, result %+v", calls, res.st)
	}
	calls = 0
	res = retryScene(context.Background(), 3, time.Millisecond, NewRetryBudget(time.Hour), it, func(context.Context, []string, func(string)) sceneResult {
		calls++
		return fail("Connection reset by peer", SkipUnreadable)
	})
	if calls != 3 || !res.st.incomplete || res.st.skipped[SkipTransient] != 1 || res.st.skipped[SkipUnreadable] != 0 {
		t.Errorf("failing for good: calls %d, result %+v", calls, res.st)
	}
	calls = 0
	res = retryScene(context.Background(), 3, time.Millisecond, NewRetryBudget(time.Hour), it, func(context.Context, []string, func(string)) sceneResult {
		calls++
		return fail("not a TIFF file", SkipNoCRS)
	})
	if calls != 1 || res.st.incomplete || res.st.skipped[SkipNoCRS] != 1 {
		t.Errorf("permanent failure: calls %d, result %+v", calls, res.st)
	}
}

// TestRetrySceneKeepsGDALRetries: the requests GDAL retried itself in an
// attempt that then failed are counted with the scene's retries, whether a
// later attempt reads the scene or the scene is given up (run.json lost
// them before: 27 of TestFlakyS3's 36 retried 503s).
func TestRetrySceneKeepsGDALRetries(t *testing.T) {
	it := &Item{ID: "S1"}
	attempt := func(calls *int, ok int) func(context.Context, []string, func(string)) sceneResult {
		return func(context.Context, []string, func(string)) sceneResult {
			*calls++
			ss := sceneStats{io: IOStats{Retries: map[string]int64{"gdal:http-503": 2}}}
			if *calls == ok {
				ss.read = true
				return sceneResult{st: ss}
			}
			ss.skip(it, "red", SkipUnreadable, 1, errors.New("Connection reset by peer"))
			return sceneResult{st: ss}
		}
	}
	for _, c := range []struct {
		name                       string
		attempts, ok               int
		wantCalls, want503, resets int64
		incomplete                 bool
	}{
		{name: "read at the third attempt", attempts: 5, ok: 3, wantCalls: 3, want503: 6, resets: 2},
		{name: "given up after three", attempts: 3, ok: 0, wantCalls: 3, want503: 6, resets: 2, incomplete: true},
	} {
		calls := 0
		res := retryScene(context.Background(), c.attempts, time.Millisecond, NewRetryBudget(time.Hour), it, attempt(&calls, c.ok))
		if int64(calls) != c.wantCalls || res.st.incomplete != c.incomplete {
			t.Errorf("%s: calls %d, incomplete %v", c.name, calls, res.st.incomplete)
		}
		if got := res.st.io.Retries; got["gdal:http-503"] != c.want503 || got["scene:connection-reset"] != c.resets {
			t.Errorf("%s: retries %v, want gdal:http-503 %d (each attempt's), scene:connection-reset %d", c.name, got, c.want503, c.resets)
		}
	}
}

// TestThrottle: throttled attempts halve the scenes in flight (at most once
// per limit attempts, not below an eighth), clean ones bring them back.
func TestThrottle(t *testing.T) {
	th := newThrottle(32)
	run := func(n int, throttled bool) {
		for range n {
			th.acquire()
			th.release(throttled)
		}
	}
	run(31, true)
	if th.limit != 32 {
		t.Fatalf("limit %d after 31 throttled attempts, want 32 (once per limit attempts)", th.limit)
	}
	run(1, true)
	if th.limit != 16 {
		t.Fatalf("limit %d, want 16", th.limit)
	}
	run(1000, true)
	if th.limit != 1 {
		t.Fatalf("limit %d after a long throttle, want the floor 1", th.limit)
	}
	run(1, false)
	if th.limit != 2 {
		t.Fatalf("limit %d after 1 clean attempt at 1, want 2", th.limit)
	}
	run(10000, false)
	if th.limit != 32 {
		t.Fatalf("limit %d after a long clean spell, want 32", th.limit)
	}
	if !throttled(sceneStats{io: IOStats{Retries: map[string]int64{"gdal:http-503": 1}}}) || throttled(sceneStats{io: IOStats{Retries: map[string]int64{"gdal:connection-reset": 1}}}) {
		t.Error("throttled: a 503 retry is throttling, a reset is not")
	}
}
