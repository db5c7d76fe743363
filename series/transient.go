package series

import (
	"context"
	"errors"
	"io"
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

// transientMarks are the lower-case texts of GDAL/curl/object-store errors
// worth another attempt: GDAL's retry warning, any curl error, the
// transport's words, and the messages S3, GCS and Azure put in the body
// of a 500/503 or a throttling answer, which GDAL passes on as the error
// (/vsis3/ reports a 503 SlowDown as "Please reduce your request rate.").
// HTTP statuses are told apart by httpStatus.
var transientMarks = []string{
	"retrying again", "curl error", "connection reset", "connection was reset", "connection refused",
	"timed out", "timeout", "couldn't connect", "could not connect", "failed to connect", "empty reply",
	"recv failure", "send failure", "broken pipe", "deadline exceeded",
	"slowdown", "slow down", "reduce your request rate", "too many requests",
	"service unavailable", "service is unable to handle request", "server is busy",
	"internal error. please try again", "please retry the request", "within the specified time",
}

// httpStatus finds the HTTP status in GDAL's words for a failed request:
// "HTTP error code: 503 - <url>. Retrying again" (a request it retries),
// "HTTP response code: 503" (/vsicurl/'s open of a file), "HTTP error
// code : 503" (cpl_http's fetches), "HTTP response code on <url>: 503"
// and "response_code=503" (its debug lines).
var httpStatus = regexp.MustCompile(`(?i)(?:http (?:error|response) code(?: on \S+)? ?: ?|response_code=)(\d{3})\b`)

// transientStatus says whether an HTTP status may pass when asked again:
// a time-out (408), throttling (429) or a server error (5xx).
func transientStatus(code string) bool {
	return code == "408" || code == "429" || code[0] == '5'
}

// TransientMessage reports whether the message of a failed GDAL call names
// a transient cause by its words alone (transientText: an HTTP 408/429/5xx
// in any of GDAL's wordings, a store's throttling or server-error message,
// the transport): the classification of the DEM's reads (package pipeline)
// uses it, without asking the store.
func TransientMessage(msg string) bool { return transientText(msg) }

// transientText reports whether a read failure's detail names a transient
// cause: transientMarks (any case), or a transient HTTP status in GDAL's
// words. A permanent status (403, 404) or a file GDAL could not recognise
// is not (transientRead asks the store about those).
func transientText(detail string) bool {
	for _, m := range httpStatus.FindAllStringSubmatch(detail, -1) {
		if transientStatus(m[1]) {
			return true
		}
	}
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
// forget their cached state (storage.ForgetFile, then
// CPL_VSIL_CURL_NON_CACHED for the next attempt's reads) before another
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
	check := storage.Exists
	if strings.Contains(p.Detail, "not recognized as a supported file format") {
		// GDAL found the file and recognised no format in what it read:
		// a header read lost in transit, or a file that is no raster.
		check = isTIFF
	}
	ok, err := check(ctx, loc)
	if err != nil {
		// The store cannot say either (it fails too): worth another
		// attempt when its own error is transient.
		return storage.IsTransient(err), path
	}
	return ok, path
}

// isTIFF reads the first bytes of the remote file at loc and says whether
// they open a TIFF (classic or BigTIFF, either byte order), the container
// of every COG a profile reads; an absent file is not one.
func isTIFF(ctx context.Context, loc string) (bool, error) {
	r, err := storage.Open(ctx, loc)
	if errors.Is(err, storage.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer r.Close()
	var magic [4]byte
	if _, err := io.ReadFull(r, magic[:]); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return false, nil // shorter than a TIFF header
		}
		return false, err
	}
	switch string(magic[:]) {
	case "II*\x00", "MM\x00*", "II+\x00", "MM\x00+":
		return true, nil
	}
	return false, nil
}
