// Package clock holds the one context-aware sleep that the retrying
// clients (pipeline's lease, stacapi, sinm/client) share.
package clock

import (
	"context"
	"time"
)

// Sleep waits d, or until ctx ends and then returns ctx.Err().
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
