package storage

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Scratch is a local temporary folder of this process under os.TempDir
// ($TMPDIR) that outlives no dead owner: it holds a file "lock" on which
// the process keeps an exclusive flock(2) until Close, and the kernel drops
// that lock when the process ends, however it ends (killed, out of memory,
// a test's timeout). NewScratch removes the folders of its prefix whose
// lock it can take — their owner has ended — so a killed worker's folder
// is removed by the next one on the same disk instead of filling it. Only
// a real directory (not a symbolic link) owned by this process's user with
// a regular "lock" file (not a link, FIFO or device) is a candidate; a
// folder whose lock is held (a live process, this one included), that has
// no lock file (being created, or written by an older version) or that is
// anything else is never touched. Keep the Scratch reachable until Close:
// the lock lives with its open file.
type Scratch struct {
	Dir string
	// Reclaimed lists the dead owners' folders NewScratch removed, for the
	// caller's log (Report).
	Reclaimed []Reclaimed
	// NoLock is why this folder has no lock when the file system refuses
	// flock (ENOLCK on NFS without lockd, EOPNOTSUPP or ENOSYS on some
	// FUSE mounts): the folder is kept, and if this process is killed the
	// next NewScratch never removes it (the safe side). Nil when locked.
	NoLock error
	lock   *os.File
}

// Reclaimed is a dead owner's folder removed by NewScratch and the bytes
// of the regular files it held.
type Reclaimed struct {
	Dir   string
	Bytes int64
}

// scratchLock is the name of the lock file in a Scratch's folder.
const scratchLock = "lock"

// NewScratch removes the folders of dead owners named prefix* under
// os.TempDir, then creates this process's own (os.MkdirTemp's naming). A
// file system without flock does not fail it: see Scratch.NoLock.
func NewScratch(prefix string) (*Scratch, error) {
	return newScratch(prefix, TryLock)
}

// newScratch is NewScratch taking the new folder's lock with lockOwn (a
// test stands in for a file system without flock).
func newScratch(prefix string, lockOwn func(*os.File) error) (*Scratch, error) {
	reclaimed := sweepScratch(prefix)
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		return nil, err
	}
	s := &Scratch{Dir: dir, Reclaimed: reclaimed}
	// The lock file is locked under another name and renamed into place,
	// so a sweeper never finds "lock" unlocked while its owner lives.
	f, err := os.CreateTemp(dir, ".lock-*")
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("temporary folder %s: %w", dir, err)
	}
	if err := lockOwn(f); err != nil {
		// Left under its temporary name, the file is no "lock": the
		// folder is never swept.
		f.Close()
		s.NoLock = err
		return s, nil
	}
	if err := os.Rename(f.Name(), filepath.Join(dir, scratchLock)); err != nil {
		f.Close()
		os.RemoveAll(dir)
		return nil, fmt.Errorf("temporary folder %s: %w", dir, err)
	}
	s.lock = f
	return s, nil
}

// Report returns one line per dead owner's folder NewScratch removed and
// one if this folder has no lock, for the caller's log.
func (s *Scratch) Report() []string {
	var lines []string
	for _, r := range s.Reclaimed {
		lines = append(lines, fmt.Sprintf("reclaimed a dead worker's scratch %s (%d bytes)", r.Dir, r.Bytes))
	}
	if s.NoLock != nil {
		lines = append(lines, fmt.Sprintf("scratch %s: no flock (%v): a killed run's folder will not be reclaimed", s.Dir, s.NoLock))
	}
	return lines
}

// Close removes the folder, then releases its lock.
func (s *Scratch) Close() error {
	if s == nil {
		return nil
	}
	err := os.RemoveAll(s.Dir)
	if s.lock != nil {
		if cerr := s.lock.Close(); err == nil {
			err = cerr
		}
	}
	return err
}

// sweepScratch removes the folders prefix* under os.TempDir whose owner
// has ended (deadScratch) and returns them. Failures are ignored: a folder
// left is tried again by the next NewScratch.
func sweepScratch(prefix string) []Reclaimed {
	var out []Reclaimed
	entries, _ := os.ReadDir(os.TempDir())
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), prefix) {
			continue
		}
		dir := filepath.Join(os.TempDir(), e.Name())
		f := deadScratch(dir)
		if f == nil {
			continue
		}
		n := regularBytes(dir)
		if os.RemoveAll(dir) == nil {
			out = append(out, Reclaimed{Dir: dir, Bytes: n})
		}
		f.Close()
	}
	return out
}

// deadScratch returns dir's lock file, locked, when dir is a real directory
// of this user whose regular "lock" file no live process holds; else nil.
// The lock is opened without following a link and without waiting (a FIFO
// would block open(2) until a writer comes).
func deadScratch(dir string) *os.File {
	fi, err := os.Lstat(dir)
	if err != nil || !fi.IsDir() {
		return nil // a symbolic link, a file, gone
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); !ok || int(st.Uid) != os.Getuid() {
		return nil // another user's: not ours to judge
	}
	f, err := os.OpenFile(filepath.Join(dir, scratchLock),
		os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil // no lock file (or a link): not ours to judge
	}
	if li, err := f.Stat(); err != nil || !li.Mode().IsRegular() {
		f.Close()
		return nil
	}
	if TryLock(f) != nil {
		f.Close() // held by a live owner, or no flock here
		return nil
	}
	return f
}

// regularBytes sums the sizes of the regular files under dir (links not
// followed).
func regularBytes(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}
