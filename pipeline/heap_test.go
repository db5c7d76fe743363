package pipeline

import (
	"math"
	"os"
	"runtime/debug"
	"testing"
)

// TestBoundHeap checks the soft memory limit a run sets: the Go memory
// held plus PairHeapBytes per pair of the heavier of the batches' budget
// and the heaviest batch, the limit it replaced returned for the run to
// restore, and none when not asked, when GOMEMLIMIT is set or without a
// pair budget.
func TestBoundHeap(t *testing.T) {
	prev := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(prev)
	if v, set := os.LookupEnv("GOMEMLIMIT"); set {
		t.Skipf("GOMEMLIMIT=%s in the environment", v)
	}
	const before = 5 << 30
	for _, c := range []struct {
		cfg   Config
		most  int64
		pairs int64
	}{
		{Config{BoundHeap: true}, 0, DefaultBatchCellScenes},
		{Config{BoundHeap: true, BatchCellScenes: 200_000}, 150_000, 200_000},
		{Config{BoundHeap: true, BatchCellScenes: 200_000}, 3_000_000, 3_000_000}, // a talhão alone over the budget
	} {
		debug.SetMemoryLimit(before)
		got, old := boundHeap(c.cfg, c.most)
		held := goHeld()
		want := c.pairs * PairHeapBytes
		// The memory held when the limit was set is counted in it (the
		// test process holds some MiB), and is at most what the runtime
		// holds now plus a little.
		if got <= want || got > want+held+8<<20 {
			t.Errorf("BatchCellScenes %d, heaviest %d: limit %d, want %d plus the %d bytes held", c.cfg.BatchCellScenes, c.most, got, want, held)
		}
		if lim := debug.SetMemoryLimit(-1); lim != got || old != before {
			t.Errorf("BatchCellScenes %d: runtime's limit %d, boundHeap returned %d replacing %d (want %d)", c.cfg.BatchCellScenes, lim, got, old, before)
		}
	}
	for _, cfg := range []Config{{}, {BoundHeap: true, BatchCellScenes: -1}} {
		debug.SetMemoryLimit(math.MaxInt64)
		if got, _ := boundHeap(cfg, 0); got != 0 || debug.SetMemoryLimit(-1) != math.MaxInt64 {
			t.Errorf("BoundHeap %v, BatchCellScenes %d: set a limit (%d)", cfg.BoundHeap, cfg.BatchCellScenes, got)
		}
	}
	t.Setenv("GOMEMLIMIT", "4GiB")
	debug.SetMemoryLimit(math.MaxInt64)
	if got, _ := boundHeap(Config{BoundHeap: true}, 0); got != 0 || debug.SetMemoryLimit(-1) != math.MaxInt64 {
		t.Errorf("GOMEMLIMIT set: boundHeap set %d", got)
	}
}
