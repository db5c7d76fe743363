package pipeline

import (
	"math"
	"os"
	"runtime/debug"
	"testing"
)

// TestBoundHeap checks the soft memory limit a run sets: the Go memory
// held plus PairHeapBytes per pair of the batches' budget, and none when
// not asked, when GOMEMLIMIT is set or without a pair budget.
func TestBoundHeap(t *testing.T) {
	prev := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(prev)
	if v, set := os.LookupEnv("GOMEMLIMIT"); set {
		t.Skipf("GOMEMLIMIT=%s in the environment", v)
	}
	for _, c := range []struct {
		cfg   Config
		pairs int64
	}{
		{Config{BoundHeap: true}, DefaultBatchCellScenes},
		{Config{BoundHeap: true, BatchCellScenes: 200_000}, 200_000},
	} {
		debug.SetMemoryLimit(math.MaxInt64)
		got := boundHeap(c.cfg)
		held := goHeld()
		want := c.pairs * PairHeapBytes
		// The memory held before the limit was set is at most what the
		// runtime holds now (a few MiB of test process) plus a little.
		if got < want || got > want+held+8<<20 {
			t.Errorf("BatchCellScenes %d: limit %d, want %d plus the %d bytes held", c.cfg.BatchCellScenes, got, want, held)
		}
		if lim := debug.SetMemoryLimit(-1); lim != got {
			t.Errorf("BatchCellScenes %d: runtime's limit %d, boundHeap returned %d", c.cfg.BatchCellScenes, lim, got)
		}
	}
	for _, cfg := range []Config{{}, {BoundHeap: true, BatchCellScenes: -1}} {
		debug.SetMemoryLimit(math.MaxInt64)
		if got := boundHeap(cfg); got != 0 || debug.SetMemoryLimit(-1) != math.MaxInt64 {
			t.Errorf("BoundHeap %v, BatchCellScenes %d: set a limit (%d)", cfg.BoundHeap, cfg.BatchCellScenes, got)
		}
	}
	t.Setenv("GOMEMLIMIT", "4GiB")
	debug.SetMemoryLimit(math.MaxInt64)
	if got := boundHeap(Config{BoundHeap: true}); got != 0 || debug.SetMemoryLimit(-1) != math.MaxInt64 {
		t.Errorf("GOMEMLIMIT set: boundHeap set %d", got)
	}
}
