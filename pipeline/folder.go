package pipeline

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/manejo/manejo/export"
	"github.com/manejo/manejo/storage"
)

// A run owns its output folder (issue 19 defects 3 and 7):
//
//   - it refuses a non-empty folder that is not a manejo output (no run.json,
//     run/, run.lock or _staging/ in it), so a user's files are never
//     overwritten or cleaned;
//   - it holds a lock (run.lock, or run/part-i-of-n.lock per shard) naming
//     its run id while it runs; a second run into the same folder (shard) is
//     refused while the holder is alive;
//   - it cleans only what manejo wrote: its staging, the temporary files of
//     the names it publishes, and the outputs a previous run listed in its
//     manifest that this run does not publish again.

// ErrConfig marks errors of the configuration that a run finds before it
// reads any imagery (an output folder that is not manejo's, a DEM too
// coarse or without CRS, a collection without a satellite code). The CLI
// reports them as usage errors (exit 2).
var ErrConfig = errors.New("configuration error")

// ErrLocked is Run's error when another live run holds the output folder.
var ErrLocked = errors.New("output folder locked by another run")

// LockStale is how old a lock's heartbeat may get before another run takes
// the lock over; the holder refreshes it every LockHeartbeat.
var (
	LockStale     = 15 * time.Minute
	LockHeartbeat = time.Minute
)

// lockInfo is the content of a lock file.
type lockInfo struct {
	RunID     string    `json:"run_id"`
	Host      string    `json:"host"`
	PID       int       `json:"pid"`
	StartedAt time.Time `json:"started_at"`
	Heartbeat time.Time `json:"heartbeat_at"`
}

// newRunID returns a run id: the UTC start time and 8 random hex digits.
func newRunID(start time.Time) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return start.UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b[:])
}

// lockName is the lock of a shard, next to its manifest.
func lockName(s Shard) string { return strings.TrimSuffix(manifestName(s), ".json") + ".lock" }

// checkFolder refuses a non-empty output folder that is not a manejo
// output.
func checkFolder(ctx context.Context, out string) error {
	fsys, err := storage.FS(ctx, out)
	if err != nil {
		return nil // absent: the run creates it
	}
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil || len(entries) == 0 {
		return nil
	}
	var names []string
	for _, e := range entries {
		switch e.Name() {
		case "run.json", "run", "run.lock", "_staging":
			return nil
		}
		names = append(names, e.Name())
	}
	return fmt.Errorf("%w: --out %s is not empty and is not a manejo output (no run.json, run/, run.lock or _staging/; it holds %s): choose an empty or new folder, manejo does not overwrite files it did not write",
		ErrConfig, out, strings.Join(names[:min(len(names), 3)], ", "))
}

// lock is a held lock file.
type lock struct {
	loc  string
	info lockInfo
	stop chan struct{}
	done chan struct{}
}

// acquireLock takes the lock of the shard's output folder for runID.
func acquireLock(ctx context.Context, out string, sh Shard, runID string, now time.Time) (*lock, error) {
	host, _ := os.Hostname()
	l := &lock{loc: storage.Join(out, lockName(sh)), info: lockInfo{RunID: runID, Host: host, PID: os.Getpid(), StartedAt: now.UTC(), Heartbeat: now.UTC()}}
	for attempt := 0; ; attempt++ {
		err := l.create(ctx)
		if err == nil {
			break
		}
		if errors.Is(err, fs.ErrExist) && attempt > 0 {
			return nil, fmt.Errorf("%w: %s was taken over by another run at the same time", ErrLocked, l.loc)
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, err
		}
		held, herr := readLock(ctx, l.loc)
		if herr == nil && !held.stale(host, time.Now()) {
			return nil, fmt.Errorf("%w: %s is held by run %s (host %s, pid %d, started %s, alive at %s); if that run is dead, remove %s and run again",
				ErrLocked, l.loc, held.RunID, held.Host, held.PID, held.StartedAt.Format(time.RFC3339), held.Heartbeat.Format(time.RFC3339), l.loc)
		}
		if err := storage.Remove(ctx, l.loc); err != nil { // stale or unreadable: take it over
			return nil, err
		}
	}
	l.stop, l.done = make(chan struct{}), make(chan struct{})
	go l.heartbeat(ctx)
	return l, nil
}

// create writes the lock file only when none exists, in one atomic step
// (storage.CreateExclusive: O_EXCL on a local disk, a PutObject with
// If-None-Match: "*" on S3), so of two runs starting at once exactly one
// gets the lock. On S3 the lock is read back as well: a server that
// ignores If-None-Match (an old S3-compatible store) is then caught when
// the other writer's put lands first.
func (l *lock) create(ctx context.Context) error {
	raw, _ := json.Marshal(l.info)
	err := storage.CreateExclusive(ctx, l.loc, raw)
	if storage.KindOf(l.loc) == storage.Local {
		return err
	}
	if errors.Is(err, fs.ErrExist) {
		// The SDK retries a put whose answer was lost; the retry then finds
		// the object our first attempt wrote. Ours is not another run's.
		if back, rerr := readLock(ctx, l.loc); rerr == nil && back.RunID == l.info.RunID {
			err = nil
		}
	}
	if err != nil {
		return err
	}
	if back, err := readLock(ctx, l.loc); err != nil || back.RunID != l.info.RunID {
		return fmt.Errorf("%w: %s was taken by another run at the same time", ErrLocked, l.loc)
	}
	return nil
}

func readLock(ctx context.Context, loc string) (lockInfo, error) {
	var li lockInfo
	b, err := storage.ReadFile(ctx, loc)
	if err == nil {
		err = json.Unmarshal(b, &li)
	}
	return li, err
}

// stale reports whether a lock's holder is gone: a process of this host
// that no longer exists, or a heartbeat older than LockStale.
func (li lockInfo) stale(host string, now time.Time) bool {
	if li.Host == host && li.PID > 0 && li.PID != os.Getpid() {
		if err := syscall.Kill(li.PID, 0); errors.Is(err, syscall.ESRCH) {
			return true
		}
	}
	return now.Sub(li.Heartbeat) > LockStale
}

// heartbeat refreshes the lock until release.
func (l *lock) heartbeat(ctx context.Context) {
	defer close(l.done)
	t := time.NewTicker(LockHeartbeat)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-ctx.Done():
			return
		case now := <-t.C:
			l.info.Heartbeat = now.UTC()
			raw, _ := json.Marshal(l.info)
			_ = storage.WriteFile(ctx, l.loc, raw)
		}
	}
}

// release stops the heartbeat and removes the lock file.
func (l *lock) release() {
	close(l.stop)
	<-l.done
	_ = storage.Remove(context.Background(), l.loc)
	if storage.KindOf(l.loc) == storage.Local && filepath.Base(filepath.Dir(l.loc)) == "run" {
		_ = os.Remove(filepath.Dir(l.loc)) // run/ of a shard, when empty
	}
}

// validOutputPath reports whether p, from a manifest's outputs[], names a
// file inside the output folder that a run may remove.
func validOutputPath(p string) bool {
	return p != "" && !strings.HasPrefix(p, "/") && path.Clean(p) == p && p != "." &&
		!strings.HasPrefix(p, "../") && p != ".." && !strings.ContainsRune(p, '\\') && p != "run.json"
}

// outputsUnion returns a then the entries of b whose path a lacks.
func outputsUnion(a, b []export.Output) []export.Output {
	seen := make(map[string]bool, len(a))
	out := append([]export.Output{}, a...)
	for _, o := range a {
		seen[o.Path] = true
	}
	for _, o := range b {
		if !seen[o.Path] && validOutputPath(o.Path) {
			out = append(out, o)
		}
	}
	return out
}

// removeStale removes the outputs a previous run listed that this run does
// not publish again: the payload of a talhão that now fails or left the
// input, a part file of another layout.
func removeStale(ctx context.Context, out string, prev, now []export.Output) []string {
	keep := make(map[string]bool, len(now))
	for _, o := range now {
		keep[o.Path] = true
	}
	var removed []string
	for _, o := range prev {
		if keep[o.Path] || !validOutputPath(o.Path) {
			continue
		}
		if err := storage.Remove(ctx, storage.Join(out, o.Path)); err == nil {
			removed = append(removed, o.Path)
		}
	}
	return removed
}
