package storage

import (
	"regexp"
	"strings"
)

// signedQuery matches the query of a signed URL (a SAS token, an S3
// presigned URL): a '?' up to the end of the URL when it holds a
// signature or token parameter.
var signedQuery = regexp.MustCompile(`\?[^\s"'<>]*(?i:sig|signature|token|x-amz-credential)=[^\s"'<>]*`)

// RedactSigned removes the signatures of signed URLs from a message (a
// GDAL error, a retry warning) before it reaches run.json or a log
// (docs/security.md: credentials). Plain URLs and the rest of the
// message stay.
func RedactSigned(s string) string {
	return signedQuery.ReplaceAllStringFunc(s, func(m string) string {
		if strings.HasSuffix(m, ":") { // "open URL: error": the colon is the message's
			return "?(signature redacted):"
		}
		return "?(signature redacted)"
	})
}
