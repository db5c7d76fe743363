package series

import (
	"context"
	"regexp"
	"sort"
	"strings"

	"github.com/manejo/manejo/storage"
)

// transientMarks are the texts of GDAL/curl errors worth another attempt:
// HTTP 429/5xx, dropped, refused or timed-out connections.
var transientMarks = []string{
	"HTTP error code: 5", "HTTP error code: 429", "response_code=5", "response_code=429",
	"Retrying again", "Connection reset", "Connection timed out", "Operation timed out",
	"Couldn't connect", "Empty reply", "Recv failure", "Send failure", "connection refused",
	"SlowDown", "curl error", "deadline exceeded",
}

// remoteRaster finds the remote raster a read problem names.
var remoteRaster = regexp.MustCompile("(/vsis3/|s3://)[^\\s'`\"]+?\\.(?:tif|TIF|tiff|TIFF)")

// TransientReads counts the problems of a Sample that are scene reads
// (SkipUnreadable, or SkipTransient once Sample's own attempts are spent)
// which may succeed when tried again: the GDAL/curl error
// says so (HTTP 429/5xx, a dropped or timed-out connection), or GDAL could
// not open a remote file although the object is there (a dropped HEAD
// request leaves GDAL believing it missing; this asks the object store). It
// also returns the GDAL paths of the remote files involved, sorted and
// distinct: GDAL must forget their cached state (CPL_VSIL_CURL_NON_CACHED)
// before another attempt.
func TransientReads(ctx context.Context, ps []Problem) (n int, gdalPaths []string) {
	seen := map[string]bool{}
	for _, p := range ps {
		ok, path := transientRead(ctx, p)
		if !ok {
			continue
		}
		n++
		if path != "" && !seen[path] {
			seen[path] = true
			gdalPaths = append(gdalPaths, path)
		}
	}
	sort.Strings(gdalPaths)
	return n, gdalPaths
}

// transientRead says whether p is a read failure worth another attempt,
// and the GDAL path of the remote raster it names ("" when none).
func transientRead(ctx context.Context, p Problem) (bool, string) {
	if p.Reason != SkipUnreadable && p.Reason != SkipTransient {
		return false, ""
	}
	msg := p.Error() // holds p.Detail, the read error
	loc := storage.LocationOf(remoteRaster.FindString(msg))
	path := ""
	if loc != "" {
		path = storage.GDALPath(loc)
	}
	for _, m := range transientMarks {
		if strings.Contains(msg, m) {
			return true, path
		}
	}
	if loc == "" {
		return false, ""
	}
	ok, err := storage.Exists(ctx, loc)
	if err != nil {
		// The store cannot say either (it fails too): worth another
		// attempt when its own error is transient.
		return storage.IsTransient(err), path
	}
	return ok, path
}
