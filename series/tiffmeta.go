package series

import (
	"fmt"
	"runtime"
	"strconv"

	"github.com/airbusgeo/godal"
)

// blockMeta returns the TIFF metadata item BLOCK_<what>_<x>_<y> of band b
// (what is OFFSET or SIZE: where block x, y's compressed bytes lie in the
// file, and how many), or -1 when the band has none.
//
// GDAL's GTiff driver formats that item with CPLSPrintf, into one of ten
// buffers private to the OS thread that made the call, and godal copies
// it into a Go string only after the cgo call has returned. Between the
// two, the goroutine may move to another thread while its first thread
// runs other goroutines' GDAL calls, which reuse those buffers: under
// CPU load the copy then read another block's, or another file's, number
// (dozens in a test run). So the goroutine holds its thread for the call
// and the copy.
func blockMeta(b godal.Band, what string, x, y int) int64 {
	key := fmt.Sprintf("BLOCK_%s_%d_%d", what, x, y)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	v, err := strconv.ParseInt(b.Metadata(key, godal.Domain("TIFF")), 10, 64)
	if err != nil {
		return -1
	}
	return v
}
