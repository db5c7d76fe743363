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
	"sync"
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

// TestTransientGDALMessages (issue 26): the words GDAL 3.6 uses for a
// failed request (port/cpl_vsil_curl.cpp, cpl_http.cpp, cpl_aws.cpp) and
// the messages object stores put in the error body GDAL passes on. Those
// of a time-out, throttling (429, S3's SlowDown) or a server error (5xx)
// are transient by their words alone; before, "HTTP response code: 503"
// (/vsicurl/'s open), "HTTP error code : 503" (cpl_http) and S3's "Please
// reduce your request rate." (/vsis3/'s open of a 503 SlowDown) were not,
// and each failed attempt asked the store first (8 GETs, ~17 s on a server
// answering 503: TestTransientStatusThroughGDAL). Permanent answers are
// not transient by their words: a 403, a 404, a file GDAL read and could
// not recognise (transientRead asks the store about those).
func TestTransientGDALMessages(t *testing.T) {
	transient := []string{
		"open /vsicurl/http://127.0.0.1:8080/a/B04.tif: HTTP response code: 503",
		"open /vsicurl/http://127.0.0.1:8080/a/B04.tif: HTTP response code: 429",
		"open /vsicurl/http://127.0.0.1:8080/a/B04.tif: HTTP response code: 500",
		"open /vsicurl/https://h/a/B04.tif: HTTP response code: 504 - Operation too slow",
		"open /vsicurl/https://h/a/B04.tif: HTTP response code: 408",
		"HTTP response code on https://h:443/a/B04.tif: 503",
		"read https://h/a/B04.tif block [0 0]: HTTP error code : 503",
		"HTTP error code: 502 - https://h/a/B04.tif. Retrying again in 0.5 secs",
		"open /vsis3/archive/s2/B04.tif: Please reduce your request rate.",
		"open /vsis3/archive/s2/B04.tif: Reduce your request rate.",
		"open /vsis3/archive/s2/B04.tif: SlowDown",
		"open /vsis3/archive/s2/B04.tif: Service Unavailable",
		"open /vsis3/archive/s2/B04.tif: Service is unable to handle request.",
		"open /vsis3/archive/s2/B04.tif: We encountered an internal error. Please try again.",
		"open /vsis3/archive/s2/B04.tif: Your socket connection to the server was not read from or written to within the timeout period. Idle connections will be closed.",
		"open /vsigs/bucket/a/B04.tif: Too Many Requests",
		"open /vsiaz/c/a/B04.tif: The server is busy.",
		"open /vsiaz/c/a/B04.tif: Operation could not be completed within the specified time.",
		"open /vsiaz/c/a/B04.tif: The server encountered an internal error. Please retry the request.",
		"open /vsicurl/https://h/a/B04.tif: CURL error: Recv failure: Connection reset by peer",
		"open /vsicurl/https://h/a/B04.tif: CURL error: Connection timed out after 10001 milliseconds",
		"open /vsicurl/https://h/a/B04.tif: CURL error: Failed to connect to h port 443 after 3 ms: Connection refused",
		"open /vsicurl/https://h/a/B04.tif: CURL error: Send failure: Broken pipe",
		"open /vsicurl/https://h/a/B04.tif: CURL error: Resolving timed out after 5000 milliseconds",
		"read s3://b/a/B04.tif block [0 0]: Connection was reset",
	}
	for _, d := range transient {
		if !transientText(d) {
			t.Errorf("not transient by its words: %s", d)
		}
	}
	permanent := []string{
		"open /vsicurl/http://127.0.0.1:8080/a/B04.tif: HTTP response code: 403",
		"open /vsicurl/http://127.0.0.1:8080/a/B04.tif: HTTP response code: 404",
		"open /vsicurl/https://h:5003/a/B04.tif: HTTP response code: 401",
		"read https://h/a/B04.tif block [0 0]: HTTP error code : 404",
		"open /vsis3/archive/s2/B04.tif: Access Denied",
		"open /vsis3/archive/s2/B04.tif: The specified key does not exist.",
		"open /vsis3/archive/s2/B04.tif: The request signature we calculated does not match the signature you provided. Check your key and signing method.",
		"open /vsicurl/http://127.0.0.1:8080/a/B04.tif: `/vsicurl/http://127.0.0.1:8080/a/B04.tif' not recognized as a supported file format.",
		"open /vsis3/b/a/B04.tif: /vsis3/b/a/B04.tif: Not a TIFF or MDI file, bad magic number 26740 (0x6874)",
		"read /data/a/B04.tif block [0 0]: TIFFReadEncodedTile() failed",
	}
	for _, d := range permanent {
		if transientText(d) {
			t.Errorf("transient by its words: %s", d)
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

// TestTransientStatusThroughGDAL (issue 26): a loopback HTTP server
// answers GDAL's requests for one asset of a scene with a status; GDAL
// (/vsicurl/, its own retries off) reports "HTTP response code: N". A 503
// or 429 is transient by its words: the scene is read again, then given
// up as transient, its talhão incomplete, and manejo never asks the
// server itself whether the file is there (before: 8 GETs of its own per
// failed attempt, ~17 s each). A 404, and a file that answers 200 but is
// no TIFF, are unreadable — permanent, no second attempt; before, the
// non-TIFF file counted as transient (the object exists), leaving its
// talhões incomplete in every run. manejo's own requests are told from
// GDAL's by their User-Agent (GDAL sends none here).
func TestTransientStatusThroughGDAL(t *testing.T) {
	dir := t.TempDir()
	var mu sync.Mutex
	gdal, asked := map[string]int{}, map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		status, name, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
		if strings.HasSuffix(name, "_red.tif") {
			mu.Lock()
			if r.UserAgent() == "" {
				gdal[status]++
			} else {
				asked[status]++
			}
			mu.Unlock()
			switch status {
			case "notiff":
				_, _ = w.Write([]byte("<html>this is no TIFF</html>"))
			default:
				code, _ := strconv.Atoi(status)
				w.WriteHeader(code)
			}
			return
		}
		http.ServeFile(w, r, filepath.Join(dir, name))
	}))
	defer srv.Close()
	it, pts := s2Spec(4, 1200).build(t, dir, "st", "2024-01-01T13:00:00Z")
	g := fieldAround("f", 0.0002, pts...)
	for _, c := range []struct {
		status    string
		transient bool
	}{{"503", true}, {"429", true}, {"404", false}, {"notiff", false}} {
		for _, a := range it["assets"].(map[string]any) {
			a := a.(map[string]any)
			a["href"] = srv.URL + "/" + c.status + "/" + filepath.Base(a["href"].(string))
		}
		catPath := filepath.Join(dir, c.status+".json")
		writeJSON(t, catPath, collection(it))
		cat, errs := LoadCatalog(context.Background(), catPath, CatalogOptions{AllowHrefPrefixes: []string{srv.URL + "/"}})
		if cat == nil {
			t.Fatal(errs)
		}
		o := Options{SceneAttempts: 2, SceneRetryDelay: time.Millisecond, GDALConfig: []string{"GDAL_HTTP_MAX_RETRY=0"}}
		t0 := time.Now()
		_, st, err := sampleWithin(t, context.Background(), time.Minute, cat, g, o)
		if err != nil || len(st.Problems) != 1 {
			t.Fatalf("%s: %v, problems %v", c.status, err, st.Problems)
		}
		p := st.Problems[0]
		mu.Lock()
		n, own := gdal[c.status], asked[c.status]
		mu.Unlock()
		t.Logf("%s: %s in %s; GDAL sent %d requests, manejo %d", c.status, p.Detail, time.Since(t0).Round(time.Millisecond), n, own)
		switch {
		case c.transient && (p.Reason != SkipTransient || len(st.Incomplete[g.Field.ID]) != 1 || !strings.Contains(p.Detail, "still failing after 2 attempts") || !strings.Contains(p.Detail, "HTTP response code: "+c.status)):
			t.Errorf("%s: %+v, incomplete %v; want transient after 2 attempts, the talhão incomplete", c.status, p, st.Incomplete)
		case c.transient && own != 0:
			t.Errorf("%s: manejo asked the server %d times; the status alone says transient", c.status, own)
		case !c.transient && (p.Reason != SkipUnreadable || len(st.Incomplete) != 0 || strings.Contains(p.Detail, "still failing")):
			t.Errorf("%s: %+v, incomplete %v; want unreadable at once, nothing incomplete", c.status, p, st.Incomplete)
		}
	}
}
