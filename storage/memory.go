package storage

/*
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

static void *touched(size_t n) { void *p = malloc(n); if (p) memset(p, 1, n); return p; }
*/
import "C"

import (
	"runtime"
	"runtime/debug"
	"unsafe"
)

// ReleaseMemory hands the memory the process holds but no longer uses back
// to the operating system: the Go heap's free pages (debug.FreeOSMemory,
// after two collections) and the free pages of the C heap, where GDAL decoded
// the blocks of the scenes just read (glibc's malloc_trim). A run calls it
// between a batch's stages, so that the next stage does not stack its
// memory on what the previous one left resident (docs/performance.md,
// "Memory"). It costs two full collections: call it between batches, not in
// loops.
func ReleaseMemory() {
	// Objects in a sync.Pool (the Parquet writers' 8 MiB zstd encoders)
	// survive one collection in its victim cache: the second drops them,
	// so the next batch's heap goal is not raised by idle encoders.
	runtime.GC()
	debug.FreeOSMemory()
	C.malloc_trim(0)
}

// cHeap allocates n blocks of size bytes with C's malloc, written so they
// are resident, each followed by a small allocation that stays (so that
// freeing the blocks leaves holes glibc does not return by itself, as
// GDAL's freed blocks between live allocations are). free frees the
// blocks, unpin the small allocations (for TestReleaseMemory: cgo is not
// allowed in test files).
func cHeap(n, size int) (free, unpin func()) {
	var blocks, pins []unsafe.Pointer
	for range n {
		blocks = append(blocks, C.touched(C.size_t(size)))
		pins = append(pins, C.touched(16))
	}
	each := func(ps []unsafe.Pointer) func() {
		return func() {
			for _, p := range ps {
				C.free(p)
			}
		}
	}
	return each(blocks), each(pins)
}
