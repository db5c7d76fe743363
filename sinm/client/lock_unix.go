//go:build unix

package client

import (
	"errors"
	"os"
	"syscall"
)

// lockFile takes an exclusive flock(2) on f without waiting; one held by
// another open of the file is ErrLedgerBusy. The kernel releases it when f
// is closed or the process ends.
func lockFile(f *os.File) error {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return ErrLedgerBusy
	}
	return err
}
