package storage

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// Scratch is a local temporary folder of this process under os.TempDir
// ($TMPDIR) that outlives no dead owner: it holds a file "lock" on which
// the process keeps an exclusive flock(2) until Close, and the kernel drops
// that lock when the process ends, however it ends (killed, out of memory,
// a test's timeout). NewScratch removes the folders of its prefix whose
// lock it can take — their owner has ended — so a killed worker's folder
// is removed by the next one on the same disk instead of filling it. A
// folder whose lock is held (a live process, this one included) or that has
// no lock file (being created, or written by an older version) is never
// touched. Keep the Scratch reachable until Close: the lock lives with its
// open file.
type Scratch struct {
	Dir  string
	lock *os.File
}

// scratchLock is the name of the lock file in a Scratch's folder.
const scratchLock = "lock"

// NewScratch removes the folders of dead owners named prefix* under
// os.TempDir, then creates this process's own (os.MkdirTemp's naming).
func NewScratch(prefix string) (*Scratch, error) {
	sweepScratch(prefix)
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		return nil, err
	}
	// The lock file is locked under another name and renamed into place,
	// so a sweeper never finds "lock" unlocked while its owner lives.
	f, err := os.CreateTemp(dir, ".lock-*")
	if err == nil {
		err = flockNB(f)
		if err == nil {
			err = os.Rename(f.Name(), filepath.Join(dir, scratchLock))
		}
		if err != nil {
			f.Close()
		}
	}
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("temporary folder %s: %w", dir, err)
	}
	return &Scratch{Dir: dir, lock: f}, nil
}

// Close removes the folder, then releases its lock.
func (s *Scratch) Close() error {
	if s == nil {
		return nil
	}
	err := os.RemoveAll(s.Dir)
	if cerr := s.lock.Close(); err == nil {
		err = cerr
	}
	return err
}

// sweepScratch removes the folders prefix* under os.TempDir whose lock
// file exists and is not held. Failures are ignored: a folder left is
// tried again by the next NewScratch.
func sweepScratch(prefix string) {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), prefix+"*"))
	for _, dir := range dirs {
		f, err := os.Open(filepath.Join(dir, scratchLock))
		if err != nil {
			continue // no lock file: not ours to judge
		}
		if flockNB(f) == nil {
			_ = os.RemoveAll(dir)
		}
		f.Close()
	}
}

// flockNB takes an exclusive flock of f without waiting.
func flockNB(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}
