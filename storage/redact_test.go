package storage

import "testing"

// TestRedactSigned: a SAS or presigned query never reaches a problem's
// detail; plain URLs and the HTTP status stay.
func TestRedactSigned(t *testing.T) {
	for in, want := range map[string]string{
		"open /vsicurl/https://a.blob.core.windows.net/c/x.tif?st=1&se=2&sp=rl&sig=AbC%2B: HTTP response code 503": "open /vsicurl/https://a.blob.core.windows.net/c/x.tif?(signature redacted): HTTP response code 503",
		"GET https://b.s3.amazonaws.com/k?X-Amz-Credential=AKIA&X-Amz-Signature=f00 failed":                        "GET https://b.s3.amazonaws.com/k?(signature redacted) failed",
		"open /vsicurl/https://h/x.tif?version=2: 404":                                                             "open /vsicurl/https://h/x.tif?version=2: 404",
	} {
		if got := RedactSigned(in); got != want {
			t.Errorf("RedactSigned(%q) = %q, want %q", in, got, want)
		}
	}
}
