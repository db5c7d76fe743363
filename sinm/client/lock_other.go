//go:build !unix

package client

import (
	"errors"
	"os"
)

// lockFile refuses: this platform has no flock(2), and a ledger two
// submits could append to at once would let both POST every talhão.
func lockFile(*os.File) error {
	return errors.New("sinm: no ledger lock on this platform; run sinm submit on Linux or macOS")
}
