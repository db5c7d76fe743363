package storage_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	. "github.com/manejo/manejo/storage"
)

// Bounded ends a call that never returns at its deadline (issue 19 item d:
// a FIFO given as an input blocks its open forever, and no HTTP timeout
// covers it), releases what the abandoned call returns once it does, and
// passes a prompt call's result and error through.
func TestBounded(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "talhoes.geojson")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip("no FIFO:", err)
	}
	t0 := time.Now()
	_, err := Bounded(context.Background(), 200*time.Millisecond, "read "+fifo, func(context.Context) (*os.File, error) {
		return os.Open(fifo) // blocks until a writer opens the FIFO
	}, func(f *os.File) { f.Close() })
	if !errors.Is(err, ErrDeadline) || !strings.Contains(err.Error(), "read "+fifo) || time.Since(t0) > 5*time.Second {
		t.Fatalf("open of a FIFO: %v after %s, want ErrDeadline naming the call within the deadline", err, time.Since(t0))
	}
	// A writer lets the abandoned open return: it is released (closed).
	released := make(chan struct{})
	_, _ = Bounded(context.Background(), 100*time.Millisecond, "wait", func(context.Context) (int, error) {
		time.Sleep(300 * time.Millisecond)
		return 7, nil
	}, func(v int) {
		if v == 7 {
			close(released)
		}
	})
	select {
	case <-released:
	case <-time.After(5 * time.Second):
		t.Error("the abandoned call's result was not released")
	}
	w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0)
	if err == nil {
		w.Close()
	}

	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(50 * time.Millisecond); cancel() }()
	if _, err := Bounded(ctx, time.Hour, "cancelled", func(c context.Context) (int, error) { <-make(chan int); return 0, nil }, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v, want context.Canceled", err)
	}
	v, err := Bounded(context.Background(), time.Second, "quick", func(context.Context) (int, error) { return 3, errors.New("x") }, nil)
	if v != 3 || err == nil || err.Error() != "x" {
		t.Errorf("quick call: %v %v, want its own result", v, err)
	}
}
