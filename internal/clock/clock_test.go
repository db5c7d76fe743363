package clock

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestSleep: Sleep waits its duration, and returns the context's error as
// soon as the context ends, without waiting the rest.
func TestSleep(t *testing.T) {
	t0 := time.Now()
	if err := Sleep(context.Background(), 20*time.Millisecond); err != nil || time.Since(t0) < 20*time.Millisecond {
		t.Fatalf("Sleep(20ms) = %v after %v", err, time.Since(t0))
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(10*time.Millisecond, cancel)
	t0 = time.Now()
	if err := Sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) || time.Since(t0) > time.Minute {
		t.Fatalf("Sleep(1h) cancelled = %v after %v", err, time.Since(t0))
	}
}
