package storage

/*
#cgo pkg-config: gdal
#include <stdlib.h>
#include "cpl_vsi.h"
#include "cpl_conv.h"
*/
import "C"

import (
	"encoding/json"
	"unsafe"
)

// NetStat is what GDAL's network layer did for one remote file: HTTP
// requests and body bytes received, as GDAL records them (GDAL 3.6 leaves
// some of its requests out; the bytes are exact).
type NetStat struct {
	Requests int64
	Bytes    int64
}

// GDALNetStats returns, by GDAL path (/vsis3/bucket/key, /vsicurl/...),
// the requests GDAL has sent and the bytes it has received since the
// process started (CPL_VSIL_NETWORK_STATS_ENABLED, set by GDALConfig). The
// counts only grow: a caller takes the difference of two calls. Local
// files have no entry.
func GDALNetStats() map[string]NetStat {
	p := C.VSINetworkStatsGetAsSerializedJSON(nil)
	if p == nil {
		return map[string]NetStat{}
	}
	defer C.VSIFree(unsafe.Pointer(p))
	return parseNetStats([]byte(C.GoString(p)))
}

// netMethods are the requests of one file or handler by HTTP method.
type netMethods map[string]struct {
	Count      int64 `json:"count"`
	Downloaded int64 `json:"downloaded_bytes"`
}

// parseNetStats turns GDAL's JSON ({"handlers": {"vsis3": {"files":
// {"/vsis3/bucket/key.tif": {"methods": {"GET": {"count": 1,
// "downloaded_bytes": 4242}}}}}}}) into counts by GDAL path.
func parseNetStats(raw []byte) map[string]NetStat {
	var top struct {
		Handlers map[string]struct {
			Files map[string]struct {
				Methods netMethods `json:"methods"`
			} `json:"files"`
		} `json:"handlers"`
	}
	out := map[string]NetStat{}
	if json.Unmarshal(raw, &top) != nil {
		return out
	}
	for _, h := range top.Handlers {
		for path, f := range h.Files {
			var s NetStat
			for _, m := range f.Methods {
				s.Requests += m.Count
				s.Bytes += m.Downloaded
			}
			out[path] = s
		}
	}
	return out
}

// ClearRangeCache empties GDAL's process-wide cache of byte ranges and
// file properties fetched from object stores (VSICurlClearCache; its size
// is RangeCacheBytes). Run calls it at its start, so that what a run reads
// — the bytes and requests run.json counts and compares with the minimum —
// does not depend on what an earlier run in the same process left there.
// A run reading at the same time only fetches again what it needs.
func ClearRangeCache() { C.VSICurlClearCache() }

// ForgetFile drops what GDAL's process-wide cache holds of one remote file,
// a GDAL path such as /vsis3/bucket/key (VSICurlPartialClearCache): its
// properties (existence, size) and byte ranges. A request of the file that
// failed mid-way can leave GDAL believing it missing or empty; a read
// that follows ForgetFile asks the store again.
func ForgetFile(path string) {
	p := C.CString(path)
	defer C.free(unsafe.Pointer(p))
	C.VSICurlPartialClearCache(p)
}
