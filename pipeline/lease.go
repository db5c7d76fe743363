package pipeline

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/manejo/manejo/internal/clock"
	"github.com/manejo/manejo/storage"
)

// A run holds a lease on its shard of the output folder (run.lock, or
// run/part-i-of-n.lock): a small record naming the run, with a random
// nonce, renewed every few seconds. Liveness is read from the record
// changing, never from a process id: a run that sees the record unchanged
// for the lease's TTL, by its own clock, takes it over, whatever host or
// container wrote it (issue 26 item 3). So a retry on another host (an AWS
// Batch retry, a replacement pod) proceeds within the TTL, and a zombie, a
// reused pid or manejo as PID 1 in a new container cannot pass for the
// holder. Every change of the record is conditional on the version its
// writer last saw (storage.ReplaceIf: If-Match on S3, a flock'd compare
// and rename on a local disk), so of two runs taking over one expired
// lease exactly one wins, and a holder whose lease was taken over finds
// out at its next renewal and stops (ErrLeaseLost).

// ErrLocked is Run's error when another live run holds the shard's lease
// of the output folder past the wait.
var ErrLocked = errors.New("output folder locked by another run")

// ErrLeaseLost is the cause of a run stopped because its lease was taken
// over, or could not be renewed within its TTL (the store was unreachable):
// another run may then hold the shard, and two must not write it.
var ErrLeaseLost = errors.New("lease of the output folder lost")

// DefaultLeaseTTL is the default Config.LeaseTTL: a lease not renewed for
// 30 s is taken over. The holder renews it every TTL/6 (5 s).
const DefaultLeaseTTL = 30 * time.Second

// leaseClockSkew is how far two hosts' clocks may disagree: a record whose
// renewal time is older than its TTL plus this, by the reader's wall clock,
// is expired at once, without watching it for a TTL.
const leaseClockSkew = time.Minute

// leaseTimes are a lease's timings: its TTL, the holder's renewal period
// and how long a run waits for a live holder before ErrLocked.
type leaseTimes struct{ ttl, renew, wait time.Duration }

func leaseTimesOf(ttl time.Duration) leaseTimes {
	if ttl <= 0 {
		ttl = DefaultLeaseTTL
	}
	return leaseTimes{ttl: ttl, renew: ttl / 6, wait: 2 * ttl}
}

// leaseInfo is the content of a lease record. Host and PID are for the
// operator only: liveness is the record changing.
type leaseInfo struct {
	RunID     string    `json:"run_id"`
	Nonce     string    `json:"nonce"`
	Host      string    `json:"host"`
	PID       int       `json:"pid"`
	StartedAt time.Time `json:"started_at"`
	Heartbeat time.Time `json:"heartbeat_at"`
	// Seq counts the renewals; TTLSeconds is the holder's TTL.
	Seq        int64   `json:"seq"`
	TTLSeconds float64 `json:"ttl_s"`
}

// ttl is the record's TTL, or def for a record without one (a lock of an
// earlier version), at most an hour.
func (li leaseInfo) ttl(def time.Duration) time.Duration {
	if li.TTLSeconds <= 0 {
		return def
	}
	return min(time.Duration(li.TTLSeconds*float64(time.Second)), time.Hour)
}

// expired says whether a record seen unchanged for unchanged has expired:
// unchanged for its TTL by the reader's clock, or renewed last more than
// TTL + leaseClockSkew ago by the reader's wall clock.
func (li leaseInfo) expired(unchanged time.Duration, now time.Time, def time.Duration) bool {
	ttl := li.ttl(def)
	return unchanged >= ttl || !li.Heartbeat.IsZero() && now.Sub(li.Heartbeat) > ttl+leaseClockSkew
}

// lease is a held lease.
type lease struct {
	loc     string
	lt      leaseTimes
	info    leaseInfo
	version string // of the record as this run last wrote it
	// from is the record this run took over, nil when it created the lease.
	from *leaseInfo
	stop chan struct{}
	done chan struct{}
}

// newRunID returns a run id: the UTC start time and 8 random hex digits.
func newRunID(start time.Time) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return start.UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b[:])
}

// lockName is the lease record of a shard, next to its manifest.
func lockName(s Shard) string { return strings.TrimSuffix(manifestName(s), ".json") + ".lock" }

// acquireLease takes the lease of the shard's output folder for runID: it
// creates the record, or takes over one that expired, or waits while a
// live holder renews its own, up to lt.wait (ErrLocked then). waiting, when
// set, is called once if the run has to wait. The renewals run until
// release; when the lease is lost, lost is called with ErrLeaseLost.
func acquireLease(ctx context.Context, out string, sh Shard, runID string, lt leaseTimes, waiting func(leaseInfo), lost context.CancelCauseFunc) (*lease, error) {
	return acquireLeaseAt(ctx, storage.Join(out, lockName(sh)), runID, lt, waiting, lost)
}

// acquireLeaseAt is acquireLease of the record at loc (a shard's lock, or
// the lock of its read phase, exchangeLock).
func acquireLeaseAt(ctx context.Context, loc, runID string, lt leaseTimes, waiting func(leaseInfo), lost context.CancelCauseFunc) (*lease, error) {
	host, _ := os.Hostname()
	now := time.Now().UTC()
	var nonce [16]byte
	_, _ = rand.Read(nonce[:])
	l := &lease{loc: loc, lt: lt, info: leaseInfo{RunID: runID, Nonce: hex.EncodeToString(nonce[:]),
		Host: host, PID: os.Getpid(), StartedAt: now, Heartbeat: now, TTLSeconds: lt.ttl.Seconds()}}
	start := time.Now()
	var seen string // version of the record last read
	var seenAt time.Time
	for {
		ok, err := l.create(ctx)
		if err != nil || ok {
			if err != nil {
				return nil, err
			}
			break
		}
		raw, ver, err := storage.ReadVersion(ctx, l.loc)
		if errors.Is(err, fs.ErrNotExist) {
			continue // released in between: create it
		}
		if err != nil {
			return nil, err
		}
		var held leaseInfo
		_ = json.Unmarshal(raw, &held) // an unreadable record expires like any other
		if ver != seen {
			seen, seenAt = ver, time.Now()
		}
		if held.expired(time.Since(seenAt), time.Now(), lt.ttl) {
			if v, err := storage.ReplaceIf(ctx, l.loc, l.raw(), ver); err == nil {
				l.version, l.from = v, &held
				break
			} else if !errors.Is(err, storage.ErrChanged) {
				return nil, err
			}
			continue // another run moved first: read it again
		}
		if wait := max(lt.wait, held.ttl(lt.ttl)+lt.renew); time.Since(start) >= wait {
			return nil, fmt.Errorf("%w: %s is held by run %s (host %s, pid %d, started %s), which renewed it while this run waited %s; its lease expires %s after its last renewal if it dies. If no such run exists, remove %s and run again",
				ErrLocked, l.loc, held.RunID, held.Host, held.PID, held.StartedAt.Format(time.RFC3339), wait.Round(time.Second), held.ttl(lt.ttl), l.loc)
		}
		if waiting != nil && time.Since(start) < lt.renew {
			waiting(held)
			waiting = nil
		}
		if err := clock.Sleep(ctx, lt.renew/2); err != nil {
			return nil, err
		}
	}
	l.stop, l.done = make(chan struct{}), make(chan struct{})
	go l.renew(ctx, lost)
	return l, nil
}

// raw is the record as JSON.
func (l *lease) raw() []byte {
	b, _ := json.Marshal(l.info)
	return b
}

// create writes the record when none exists, in one atomic step
// (storage.CreateExclusive), and reports whether it did. On S3 the record
// is read back: the SDK retries a put whose answer was lost, and the retry
// finds the object the first attempt wrote, ours; a store that ignores
// If-None-Match is caught when the other writer's put lands first.
func (l *lease) create(ctx context.Context) (bool, error) {
	raw := l.raw()
	err := storage.CreateExclusive(ctx, l.loc, raw)
	if err != nil && !errors.Is(err, fs.ErrExist) {
		return false, err
	}
	back, ver, rerr := storage.ReadVersion(ctx, l.loc)
	if rerr != nil || !bytes.Equal(back, raw) {
		if err == nil && storage.KindOf(l.loc) != storage.Local {
			return false, fmt.Errorf("%w: %s was taken by another run at the same time", ErrLocked, l.loc)
		}
		return false, nil
	}
	l.version = ver
	return true, nil
}

// renew rewrites the record every lt.renew, conditional on the version
// this run wrote last, until release or ctx ends. A record changed by
// another run, or not renewed for TTL − renew (the store unreachable),
// ends the lease: lost is called.
func (l *lease) renew(ctx context.Context, lost context.CancelCauseFunc) {
	defer close(l.done)
	t := time.NewTicker(l.lt.renew)
	defer t.Stop()
	lastOK := time.Now()
	for {
		select {
		case <-l.stop:
			return
		case <-ctx.Done():
			return
		case <-t.C:
		}
		l.info.Seq++
		l.info.Heartbeat = time.Now().UTC()
		raw := l.raw()
		v, err := storage.ReplaceIf(ctx, l.loc, raw, l.version)
		if errors.Is(err, storage.ErrChanged) {
			// A retried put whose first answer was lost finds our write.
			if back, bv, rerr := storage.ReadVersion(ctx, l.loc); rerr == nil && bytes.Equal(back, raw) {
				v, err = bv, nil
			}
		}
		switch {
		case err == nil:
			l.version, lastOK = v, time.Now()
		case errors.Is(err, storage.ErrChanged):
			if lost != nil {
				lost(fmt.Errorf("%w: %s was taken over by another run (this run's lease was not renewed in time)", ErrLeaseLost, l.loc))
			}
			return
		case time.Since(lastOK) > l.lt.ttl-l.lt.renew && ctx.Err() == nil:
			if lost != nil {
				lost(fmt.Errorf("%w: %s could not be renewed for %s: %v", ErrLeaseLost, l.loc, time.Since(lastOK).Round(time.Second), err))
			}
			return
		}
	}
}

// release stops the renewals and removes the record if it is still this
// run's. It does not wait long for a store that does not answer: a record
// left behind expires after its TTL.
func (l *lease) release() {
	close(l.stop)
	<-l.done
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	_ = storage.RemoveIf(ctx, l.loc, l.version)
	if storage.KindOf(l.loc) == storage.Local && filepath.Base(filepath.Dir(l.loc)) == "run" {
		_ = os.Remove(filepath.Dir(l.loc)) // run/ of a shard, when empty
	}
}
