package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/manejo/manejo/storage"
	"github.com/manejo/manejo/storage/s3test"
)

// testLease are short lease timings: a TTL of 600 ms, renewed every 100
// ms, a live holder waited for 1.2 s.
var testLease = leaseTimesOf(600 * time.Millisecond)

// leaseStores runs f on a local folder and on the S3 protocol server.
func leaseStores(t *testing.T, f func(t *testing.T, out string)) {
	t.Run("local", func(t *testing.T) { f(t, t.TempDir()) })
	t.Run("s3", func(t *testing.T) {
		s3test.StartS3(t, "bucket")
		f(t, "s3://bucket/out")
	})
}

// TestLeaseLiveHolderExcludes: while a run renews its lease, a second run
// of the same shard waits, sees it renewed and gets ErrLocked; once the
// holder releases it, the second run takes it at once.
func TestLeaseLiveHolderExcludes(t *testing.T) {
	leaseStores(t, func(t *testing.T, out string) {
		ctx := context.Background()
		sh := Shard{Index: 1, Count: 2}
		a, err := acquireLease(ctx, out, sh, "run-a", testLease, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		t0 := time.Now()
		waited := false
		_, err = acquireLease(ctx, out, sh, "run-b", testLease, func(held leaseInfo) { waited = held.RunID == "run-a" }, nil)
		if !errors.Is(err, ErrLocked) || !waited {
			t.Fatalf("second run while the first renews its lease: %v (waited for run-a: %v), want ErrLocked", err, waited)
		}
		if d := time.Since(t0); d < testLease.wait {
			t.Errorf("refused after %s, want a wait of %s for the holder", d, testLease.wait)
		}
		a.release()
		t0 = time.Now()
		b, err := acquireLease(ctx, out, sh, "run-b", testLease, nil, nil)
		if err != nil {
			t.Fatalf("after the release: %v", err)
		}
		defer b.release()
		if d := time.Since(t0); d > testLease.ttl/2 || b.from != nil {
			t.Errorf("released lease taken in %s (taken over from %v), want at once, created anew", d, b.from)
		}
	})
}

// TestLeaseDeadHolderRace: the record of a dead run names this very
// process on this host (what a zombie, a reused pid or manejo as PID 1 in
// a new container look like to a pid check) with a fresh heartbeat. Eight
// runs race for it: each watches it unchanged for the TTL, exactly one
// takes it over, and the seven others see the winner renew it and get
// ErrLocked.
func TestLeaseDeadHolderRace(t *testing.T) {
	leaseStores(t, func(t *testing.T, out string) {
		host, _ := os.Hostname()
		dead, _ := json.Marshal(leaseInfo{RunID: "dead", Nonce: "n", Host: host, PID: os.Getpid(), Heartbeat: time.Now().UTC(), TTLSeconds: testLease.ttl.Seconds()})
		loc := storage.Join(out, lockName(Shard{Index: 1, Count: 2}))
		if err := storage.WriteFile(context.Background(), loc, dead); err != nil {
			t.Fatal(err)
		}
		t0 := time.Now()
		locks, errs := raceLease(t, out, 8, testLease)
		w := oneHolder(t, locks, errs)
		if w == nil {
			t.FailNow()
		}
		defer w.release()
		if w.from == nil || w.from.RunID != "dead" {
			t.Errorf("the winner took over %+v, want the dead run's record", w.from)
		}
		if d := time.Since(t0); d < testLease.ttl {
			t.Errorf("the dead run's fresh lease was taken over after %s, before its TTL %s", d, testLease.ttl)
		}
	})
}

// TestLeaseStaleRecordAtOnce: a record last renewed long ago (by its
// writer's clock, beyond the TTL and any clock skew) is taken over without
// watching it for a TTL.
func TestLeaseStaleRecordAtOnce(t *testing.T) {
	out := t.TempDir()
	old, _ := json.Marshal(leaseInfo{RunID: "old", Heartbeat: time.Now().Add(-time.Hour), TTLSeconds: 30})
	if err := os.WriteFile(filepath.Join(out, "run.lock"), old, 0o644); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	l, err := acquireLease(context.Background(), out, All, "new", leaseTimesOf(0), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.release()
	if d := time.Since(t0); d > 2*time.Second || l.from == nil || l.from.RunID != "old" {
		t.Errorf("an hour-old record taken over in %s from %+v; want at once", d, l.from)
	}
}

// TestLeaseLostStopsHolder: a holder whose record another run replaced
// (it was taken over while this run could not renew) finds out at its next
// renewal and is told ErrLeaseLost, and its release leaves the other run's
// record alone.
func TestLeaseLostStopsHolder(t *testing.T) {
	leaseStores(t, func(t *testing.T, out string) {
		ctx := context.Background()
		var cause atomic.Value
		l, err := acquireLease(ctx, out, All, "mine", testLease, nil, func(err error) { cause.Store(err) })
		if err != nil {
			t.Fatal(err)
		}
		other := []byte(`{"run_id":"other","nonce":"x"}`)
		if err := storage.WriteFile(ctx, l.loc, other); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(5 * testLease.renew)
		for cause.Load() == nil && time.Now().Before(deadline) {
			time.Sleep(testLease.renew / 4)
		}
		err, _ = cause.Load().(error)
		if !errors.Is(err, ErrLeaseLost) {
			t.Fatalf("holder after its record was replaced: %v, want ErrLeaseLost within %s", err, 5*testLease.renew)
		}
		l.release()
		if b, err := storage.ReadFile(ctx, l.loc); err != nil || string(b) != string(other) {
			t.Errorf("the lost lease's release left %q, %v; want the other run's record", b, err)
		}
	})
}
