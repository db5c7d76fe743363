package series

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/manejo/manejo/internal/testkit"
)

// TestTransientMarksAnyScheme (issue 27 D7): the classification of read
// failures ignores case and covers every remote scheme. The messages are
// GDAL's and curl's own words: "CURL error: SSL connection timeout" was
// read as plain unreadable (the marks compared "curl error" in lower case),
// so scenes on an HTTPS server that never answered went missing instead of
// making their talhões incomplete.
func TestTransientMarksAnyScheme(t *testing.T) {
	transient := []string{
		"open /vsicurl/https://data.example/a/B04.tif: CURL error: SSL connection timeout",
		"open /vsicurl/https://data.example/a/B04.tif: CURL error: transfer closed with 16284 bytes remaining to read",
		"open /vsicurl/https://data.example/a/B04.tif: CURL error: OpenSSL SSL_read: error:0A000126:SSL routines::unexpected eof while reading, errno 0",
		"open /vsis3/bucket/a/B04.tif: CURL error: Operation timed out after 60000 milliseconds with 0 bytes received",
		"open /vsiaz/container/a/B04.tif: CURL ERROR: Could not connect to server",
		"read https://data.example/a/B04.tif block [0 0]: HTTP error code: 503",
		"read s3://bucket/a/B04.tif window: HTTP ERROR CODE: 429",
		"open /vsigs/bucket/a/B04.tif: http error code: 408",
		"still failing after 5 attempts: open /vsicurl/https://data.example/a/B04.tif: Connection Reset by peer",
		"scene read deadline exceeded after 10m0s (GDAL call abandoned)",
	}
	for _, d := range transient {
		if ok, _ := transientRead(context.Background(), Problem{Item: "x", Reason: SkipUnreadable, Detail: d}); !ok {
			t.Errorf("not transient: %s", d)
		}
	}
	permanent := []string{
		"open /data/a/B04.tif: not recognized as a supported file format",
		"read /data/a/B04.tif block [0 0]: TIFFReadEncodedTile() failed",
	}
	for _, d := range permanent {
		if ok, _ := transientRead(context.Background(), Problem{Item: "x", Reason: SkipUnreadable, Detail: d}); ok {
			t.Errorf("transient: %s", d)
		}
	}
	// The GDAL path to forget before another attempt is the file manejo
	// opened or read, whatever its scheme, never a URL quoted later.
	for d, want := range map[string]string{
		"open /vsicurl/https://h:8443/a/B04.tif?(signature redacted): CURL error: x": "/vsicurl/https://h:8443/a/B04.tif",
		"read https://h/a/B04.tif block [1 2]: CURL error: x":                        "/vsicurl/https://h/a/B04.tif",
		"read s3://b/a/B04.tif window: HTTP error code: 503":                         "/vsis3/b/a/B04.tif",
		"open /vsiaz/c/a/B04.tif: CURL error: x":                                     "/vsiaz/c/a/B04.tif",
		"open /data/B04.tif: CURL error: see https://169.254.169.254/x.tif":          "",
	} {
		if _, got := transientRead(context.Background(), Problem{Reason: SkipUnreadable, Detail: d}); got != want {
			t.Errorf("path of %q = %q, want %q", d, got, want)
		}
	}
}

// hostileTLS are HTTPS servers on loopback that fail the way the attack's
// archive did: one completes no TLS handshake (it answers the client's
// hello with the start of a record and stalls), one stalls after the
// handshake, one answers the header of a file but cuts every range read.
func hostileTLS(t *testing.T, file []byte) map[string]string {
	t.Helper()
	done := make(chan struct{})
	t.Cleanup(func() { close(done) })
	stall := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-done:
		}
	}))
	t.Cleanup(stall.Close)
	cut := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		size := strconv.Itoa(len(file))
		if r.Method == http.MethodHead || r.Header.Get("Range") == "" {
			w.Header().Set("Content-Length", size)
			w.Header().Set("Accept-Ranges", "bytes")
			if r.Method != http.MethodHead {
				_, _ = w.Write(file)
			}
			return
		}
		c, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			return
		}
		_, _ = c.Write([]byte("HTTP/1.1 206 Partial Content\r\nContent-Length: 16384\r\nContent-Range: bytes 0-16383/" + size + "\r\n\r\n"))
		_, _ = c.Write(file[:100])
		c.(*tls.Conn).NetConn().Close() // no close_notify: the transfer is cut
	}))
	t.Cleanup(cut.Close)
	// manejo's own HTTP client asks the cut server whether the file is
	// there: it trusts the test certificate as an operator's CA bundle
	// (read once per process, before any other TLS client of this
	// package's tests).
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cut.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SSL_CERT_FILE", ca)
	if _, err := x509.SystemCertPool(); err != nil {
		t.Fatal(err)
	}
	return map[string]string{"no handshake": testkit.NoHandshakeServer(t), "stalled": stall.Listener.Addr().String(), "cut transfer": cut.Listener.Addr().String()}
}

// TestRemoteFaultsAreTransient (issue 27 D7): a scene whose asset lies on
// an HTTPS server that never completes a handshake, never answers, or cuts
// every transfer is read again and then counted transient, its talhão
// incomplete — never an unreadable scene the talhão is computed without.
// Before, the cut transfer ("Can not read TIFF directory", no curl error
// in the message) was unreadable: only /vsis3/ paths were checked against
// the store.
func TestRemoteFaultsAreTransient(t *testing.T) {
	path0, _ := oneScene(t, nil)
	red, err := os.ReadFile(filepath.Join(filepath.Dir(path0), "s_red.tif"))
	if err != nil {
		t.Fatal(err)
	}
	for name, host := range hostileTLS(t, red) {
		t.Run(strings.ReplaceAll(name, " ", "-"), func(t *testing.T) {
			path, g := oneScene(t, map[string]string{"red": "https://" + host + "/s_red.tif"})
			cat, errs := LoadCatalog(context.Background(), path, CatalogOptions{AllowHrefPrefixes: []string{filepath.Dir(path), "https://" + host + "/"}})
			if cat == nil {
				t.Fatal(errs)
			}
			o := Options{SceneAttempts: 2, SceneRetryDelay: 10 * time.Millisecond,
				GDALConfig: []string{"GDAL_HTTP_UNSAFESSL=YES", "GDAL_HTTP_CONNECTTIMEOUT=1", "GDAL_HTTP_TIMEOUT=1", "GDAL_HTTP_MAX_RETRY=0"}}
			_, st, err := sampleWithin(t, context.Background(), 30*time.Second, cat, g, o)
			if err != nil {
				t.Fatal(err)
			}
			if st.Skipped[SkipTransient] != 1 || st.Skipped[SkipUnreadable] != 0 || len(st.Incomplete[g.Field.ID]) != 1 {
				t.Fatalf("skipped %v, incomplete %v, problems %v: want the scene transient and its talhão incomplete", st.Skipped, st.Incomplete, st.Problems)
			}
			if !strings.Contains(st.Problems[0].Detail, "still failing after 2 attempts") {
				t.Errorf("problem %v: want both attempts made", st.Problems[0])
			}
			t.Logf("%s", st.Problems[0].Detail)
		})
	}
}

// TestNonFiniteScaling (issue 27 D19): raster:bands scale 1e308 and offset
// −1e308 turned a red DN into +Inf observations with no mask reason. Such a
// scaling skips the scene as bad-scaling, naming the asset and the values;
// no observation is written from it.
func TestNonFiniteScaling(t *testing.T) {
	for _, rb := range []map[string]any{{"scale": 1e308, "offset": -1e308}, {"scale": 0.0001, "offset": -1e308}, {"scale": 1e5}} {
		dir := t.TempDir()
		it, pts := s2Spec(4, 1200).build(t, dir, "s", "2024-01-01T13:00:00Z")
		red := it["assets"].(map[string]any)["red"].(map[string]any)
		red["raster:bands"] = []any{rb}
		writeJSON(t, filepath.Join(dir, "catalog.json"), collection(it))
		cat, errs := LoadCatalog(context.Background(), filepath.Join(dir, "catalog.json"), CatalogOptions{})
		if cat == nil {
			t.Fatal(errs)
		}
		g := fieldAround("f", 0.0002, pts...)
		obs, st, err := sampleWithin(t, context.Background(), 30*time.Second, cat, g, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if len(obs) != 0 || st.Skipped[SkipBadScaling] != 1 || len(st.Problems) != 1 || st.Problems[0].Asset != "red" || !strings.Contains(st.Problems[0].Detail, "scale") {
			t.Errorf("raster:bands %v: %d observations, skipped %v, problems %v; want the scene skipped as bad-scaling", rb, len(obs), st.Skipped, st.Problems)
		}
	}
	// The profiles' own scalings and the real archives' pass.
	for name, p := range Profiles() {
		if err := (Radiometry{Scale: p.Scale, Offset: p.Offset}).Check(p); err != nil {
			t.Errorf("profile %s: %v", name, err)
		}
	}
	if err := (Radiometry{Scale: 2.75e-05, Offset: -0.2}).Check(Profiles()["landsat-c2-l2"]); err != nil {
		t.Errorf("Landsat C2 L2 raster:bands: %v", err)
	}
}

// TestAccessErrorSkipsScene (issue 27 D8): an asset whose SAS token could
// not be had (Asset.AccessErr, set by package stacapi) is not read: the
// scene is skipped as access, or, when the token endpoint kept failing
// transiently, counted transient with its talhão incomplete.
func TestAccessErrorSkipsScene(t *testing.T) {
	for _, transient := range []bool{false, true} {
		path, g := oneScene(t, nil)
		cat, errs := LoadCatalog(context.Background(), path, CatalogOptions{})
		if cat == nil {
			t.Fatal(errs)
		}
		a := cat.Items[0].Assets["red"]
		a.AccessErr = &AccessError{Detail: "SAS token for a/c: HTTP 503", Transient: transient}
		cat.Items[0].Assets["red"] = a
		obs, st, err := sampleWithin(t, context.Background(), 30*time.Second, cat, g, Options{SceneAttempts: 2, SceneRetryDelay: time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		want := map[bool]SkipReason{false: SkipAccess, true: SkipTransient}[transient]
		if len(obs) != 0 || st.Skipped[want] != 1 || (len(st.Incomplete[g.Field.ID]) == 1) != transient || !strings.Contains(st.Problems[0].Detail, "HTTP 503") {
			t.Errorf("transient %v: %d observations, skipped %v, incomplete %v, problems %v; want the scene skipped as %s", transient, len(obs), st.Skipped, st.Incomplete, st.Problems, want)
		}
	}
}
