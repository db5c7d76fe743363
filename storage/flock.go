package storage

import (
	"errors"
	"os"
	"syscall"
)

// TryLock takes an exclusive flock(2) on f without waiting, again when a
// signal interrupts it. A lock another open of the file holds (another
// process, or this one through another open) is an error matching
// syscall.EWOULDBLOCK; a file system without flock gives its own (ENOLCK,
// EOPNOTSUPP, ENOSYS). The kernel releases the lock when f is closed or
// the process ends, however it ends. The Scratch folders and the SINM
// submissions ledger (sinm/client) hold theirs this way.
func TryLock(f *os.File) error {
	return flock(f, syscall.LOCK_EX|syscall.LOCK_NB)
}

// flock applies flock(2) operation how to f, again when a signal
// interrupts it (EINTR).
func flock(f *os.File, how int) error {
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}
