package series

import (
	"context"
	"regexp"
	"strings"

	"github.com/manejo/manejo/storage"
)

// The classification of read failures: the one place that decides whether a
// failed scene read may succeed when tried again (IN 6.5: all images — a
// transient failure makes the talhões incomplete, never a missing scene).
//
// A read failure is transient when its detail, compared without regard to
// case (GDAL writes "CURL error", curl "SSL connection timeout", S3
// "SlowDown"), carries one of transientMarks: an HTTP 408/429/5xx, or any
// curl error — curl reports HTTP statuses apart ("HTTP error code"), so a
// curl error is always the transport: a refused, reset, dropped or timed-out
// connection or TLS handshake, a transfer cut short. This holds for every
// remote scheme GDAL reads (/vsicurl/ for https://, /vsis3/, /vsiaz/,
// /vsigs/...), whatever the words of the message.

// transientMarks are the lower-case texts of GDAL/curl/SDK errors worth
// another attempt.
var transientMarks = []string{
	"http error code: 5", "http error code: 429", "http error code: 408",
	"response_code=5", "response_code=429", "response_code=408",
	"retrying again", "curl error", "connection reset", "connection refused",
	"timed out", "timeout", "couldn't connect", "empty reply", "recv failure",
	"send failure", "slowdown", "deadline exceeded",
}

// transientText reports whether a read failure's detail names a transient
// cause (transientMarks, any case).
func transientText(detail string) bool {
	low := strings.ToLower(detail)
	for _, m := range transientMarks {
		if strings.Contains(low, m) {
			return true
		}
	}
	return false
}

// remotePath finds the remote file a read failure names: the path manejo
// itself opened or read, at the start of the detail ("open /vsicurl/https://…:
// …", "read s3://… block …", after "still failing after N attempts: " once
// a scene spent its attempts). Only that leading path is taken: a URL
// quoted later in the message (an item id, a server's echoed body) is never
// asked for. A query (a signature, redacted in details) is left out.
var remotePath = regexp.MustCompile(`^(?:still failing after \d+ attempts: )?(?:open|read) ((?:/vsi[a-z0-9_]+/|s3://|gs://|https?://)[^\s?]+?)(?:\?.*?)?(?::\s| window| block|$)`)

// TransientReads counts the problems of a Sample that are scene reads
// (SkipUnreadable, or SkipTransient once Sample's own attempts are spent)
// which may succeed when tried again: the GDAL/curl error says so
// (transientMarks), or GDAL could not open a remote file although the
// object is there (a dropped HEAD request leaves GDAL believing it
// missing; this asks the object store or HTTP server). It also returns the
// GDAL paths of the remote files involved, sorted and distinct: GDAL must
// forget their cached state (CPL_VSIL_CURL_NON_CACHED) before another
// attempt.
func TransientReads(ctx context.Context, ps []Problem) (n int, gdalPaths []string) {
	idx, paths := transientOf(ctx, ps)
	return len(idx), paths
}

// transientRead says whether p is a read failure worth another attempt,
// and the GDAL path of the remote file it names ("" when none).
func transientRead(ctx context.Context, p Problem) (bool, string) {
	if p.Reason != SkipUnreadable && p.Reason != SkipTransient {
		return false, ""
	}
	loc, path := "", ""
	if m := remotePath.FindStringSubmatch(p.Detail); m != nil {
		loc = storage.LocationOf(m[1])
		path = storage.GDALPath(loc)
	}
	if transientText(p.Detail) || p.Reason == SkipTransient && strings.HasPrefix(p.Detail, errBudgetSpent.Error()+":") {
		return true, path // a scene given up by the run's retry budget (givenUp) is too
	}
	if k := storage.KindOf(loc); loc == "" || (k != storage.S3 && k != storage.HTTP) {
		return false, "" // a local file, or a store manejo cannot ask itself
	}
	ok, err := storage.Exists(ctx, loc)
	if err != nil {
		// The store cannot say either (it fails too): worth another
		// attempt when its own error is transient.
		return storage.IsTransient(err), path
	}
	return ok, path
}
