package testkit

import (
	"runtime"
	"runtime/debug"
	"sync"
	"time"
)

// HeapDuring runs f and returns the heap it cost: alloc, the bytes
// allocated in all (runtime TotalAlloc), and transient, the peak of live
// heap (sampled every millisecond, with the GC at 10 % so garbage stays
// small) above what is still live after f while its result is kept. A
// reader that holds its whole input while parsing it shows the input in
// transient; one that streams shows only its buffers.
func HeapDuring(f func() any) (alloc, transient uint64) {
	before, peak, keep := sampled(f)
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	peak = max(peak, after.HeapAlloc)
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(keep)
	return after.TotalAlloc - before.TotalAlloc, peak - min(peak, after.HeapAlloc)
}

// PeakHeapDuring runs f and returns the peak of live heap while it ran
// (sampled as HeapDuring does) above the live heap before it: what f held
// at its worst, its result included.
func PeakHeapDuring(f func() any) uint64 {
	before, peak, keep := sampled(f)
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(keep)
	peak = max(peak, after.HeapAlloc)
	return peak - min(before.HeapAlloc, peak)
}

// sampled runs f with the GC at 10 %, sampling the live heap every
// millisecond: the memory statistics before f (after a GC), the peak live
// heap seen, and f's result. The GC percent is set back when it returns.
func sampled(f func() any) (before runtime.MemStats, peak uint64, keep any) {
	old := debug.SetGCPercent(10)
	defer debug.SetGCPercent(old)
	runtime.GC()
	runtime.ReadMemStats(&before)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			peak = max(peak, m.HeapAlloc)
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	keep = f()
	close(stop)
	wg.Wait()
	return before, peak, keep
}
