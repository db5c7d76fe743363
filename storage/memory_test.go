package storage

import (
	"testing"

	"github.com/manejo/manejo/internal/testkit"
)

// TestReleaseMemory: 64 MiB of freed Go memory and 32 MiB of freed C memory
// in 64 KiB blocks (under glibc's mmap threshold, as GDAL's decoded blocks
// mostly are) stay resident until ReleaseMemory, which gives most back.
func TestReleaseMemory(t *testing.T) {
	rssKB := func(t *testing.T) int64 { return testkit.ProcStatusKB(t, "VmRSS") }
	ReleaseMemory()
	base := rssKB(t)
	keep := make([][]byte, 0, 64)
	for range 64 {
		b := make([]byte, 1<<20)
		for i := range b {
			b[i] = 1
		}
		keep = append(keep, b)
	}
	free, unpin := cHeap(512, 64<<10)
	defer unpin()
	held := rssKB(t)
	keep[0][0] = 2
	keep = nil
	free()
	freed := rssKB(t) // the Go memory is garbage, the C blocks are free: both still resident
	ReleaseMemory()
	after := rssKB(t)
	t.Logf("VmRSS: %d MiB before, %d MiB holding 64 MiB of Go and 32 MiB of C memory, %d MiB once freed, %d MiB after ReleaseMemory",
		base>>10, held>>10, freed>>10, after>>10)
	if held-base < 80<<10 {
		t.Fatalf("allocating 96 MiB raised VmRSS by %d KiB only", held-base)
	}
	if freed-base < 80<<10 {
		t.Fatalf("freeing raised nothing to release: VmRSS %d KiB over the start", freed-base)
	}
	if after-base > 24<<10 {
		t.Errorf("ReleaseMemory left %d MiB of the 96 MiB freed resident", (after-base)>>10)
	}
}
