package storage

/*
#cgo pkg-config: gdal
#include <gdal.h>
*/
import "C"

import (
	"os"
	"sync"
)

// BlockCachePerScene is GDAL's block cache a scene read from local files
// needs: such reads go block by block, each decoded block used once, so a
// few blocks per scene in flight suffice.
const BlockCachePerScene = 8 << 20

// SizeBlockCache sets GDAL's block cache to the larger of bytes and 16 MB,
// or back to GDAL's default (5 % of RAM) when bytes is 0, unless the
// operator chose it (GDAL_CACHEMAX in the environment). GDAL's default
// keeps every decoded block of the scenes in flight until their files
// close, so the peak of a run of local files followed the batches it
// happened to stack up rather than --batch-size (docs/performance.md,
// "Peak memory across portfolios"). GDAL applies a smaller limit at once,
// flushing blocks beyond it.
func SizeBlockCache(bytes int64) {
	if _, set := os.LookupEnv("GDAL_CACHEMAX"); set {
		return
	}
	cacheMu.Lock()
	defer cacheMu.Unlock()
	if gdalDefault == 0 {
		gdalDefault = int64(C.GDALGetCacheMax64())
	}
	if bytes == 0 {
		bytes = gdalDefault
	}
	C.GDALSetCacheMax64(C.GIntBig(max(bytes, 16<<20)))
}

var (
	cacheMu     sync.Mutex
	gdalDefault int64 // GDAL's limit before the first SizeBlockCache
)

// BlockCacheSize returns GDAL's block cache limit in bytes.
func BlockCacheSize() int64 { return int64(C.GDALGetCacheMax64()) }
