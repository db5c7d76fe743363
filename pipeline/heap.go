package pipeline

import (
	"os"
	"runtime/debug"
	"runtime/metrics"

	"github.com/manejo/manejo/storage"
)

// PairHeapBytes is the Go heap a run allows a batch per cell × scene pair
// of its budget (--batch-cell-scenes): about 1.5 times the most a batch
// held live (BenchmarkPeakRSSMixed: at most 670 MB marked live for a
// batch of a million pairs), so the collector keeps a third of the limit
// free and does not run back to back (docs/performance.md, "What sets
// the peak of a batch").
const PairHeapBytes = 1 << 10

// boundHeap sets the Go runtime's soft memory limit (debug.SetMemoryLimit)
// to the memory the process's Go runtime holds now, after a collection,
// plus PairHeapBytes for each pair of the heavier of a batch's budget and
// the heaviest batch cut (most: a talhão alone over the budget), and
// returns it with the limit it replaced, which the caller restores when
// its run ends. Without a limit the collector lets the heap grow to twice
// what was live at its last cycle, so a batch's peak was set by when that
// cycle ran: batches of the same pairs peaked 1.1–1.4 GB, and a run of
// many batches kept its highest. It sets nothing, and returns 0, unless
// cfg.BoundHeap, when the operator set GOMEMLIMIT (theirs wins) or batches
// are cut by count alone (BatchCellScenes < 0: no budget to derive it
// from). The limit is soft: a batch that needs more gets it, at the cost
// of more collections. C memory (GDAL's caches) is not in it. The limit is
// the process's: two Runs with BoundHeap at once in one process would set
// it over each other (cmd/manejo runs one).
func boundHeap(cfg Config, most int64) (limit, prev int64) {
	if !cfg.BoundHeap || cfg.BatchCellScenes < 0 {
		return 0, 0
	}
	if _, set := os.LookupEnv("GOMEMLIMIT"); set {
		return 0, 0
	}
	pairs := int64(cfg.BatchCellScenes)
	if pairs == 0 {
		pairs = DefaultBatchCellScenes
	}
	storage.ReleaseMemory()
	limit = goHeld() + max(pairs, most)*PairHeapBytes
	return limit, debug.SetMemoryLimit(limit)
}

// goHeld is the memory the Go runtime holds from the system, as its soft
// memory limit counts it: everything it mapped less what it released.
func goHeld() int64 {
	s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64()) - int64(s[1].Value.Uint64())
}
