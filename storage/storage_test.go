package storage_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	. "github.com/manejo/manejo/storage"
	"github.com/manejo/manejo/storage/s3test"
)

func TestRoundTrip(t *testing.T) {
	s3test.StartS3(t, "bucket")
	ctx := context.Background()
	for _, base := range []string{t.TempDir(), "s3://bucket/run/out"} {
		t.Run(base, func(t *testing.T) {
			a, b := Join(base, "sinm", "F1.json"), Join(base, "indicators.parquet")
			if ok, err := Exists(ctx, a); err != nil || ok {
				t.Fatalf("Exists(%s) before write = %v, %v; want false, nil", a, ok, err)
			}
			if _, err := ReadFile(ctx, a); !errors.Is(err, ErrNotExist) {
				t.Fatalf("ReadFile(missing) error = %v, want ErrNotExist", err)
			}
			for _, loc := range []string{a, b} {
				if err := WriteFile(ctx, loc, []byte("data of "+filepath.Base(loc))); err != nil {
					t.Fatal(err)
				}
			}
			got, err := ReadFile(ctx, a)
			if err != nil || string(got) != "data of F1.json" {
				t.Fatalf("ReadFile = %q, %v", got, err)
			}
			if ok, err := Exists(ctx, a); err != nil || !ok {
				t.Fatalf("Exists after write = %v, %v", ok, err)
			}
			list, err := List(ctx, base)
			if err != nil {
				t.Fatal(err)
			}
			if want := []string{b, a}; !reflect.DeepEqual(list, want) {
				t.Fatalf("List = %v, want %v", list, want)
			}
			if err := Remove(ctx, a); err != nil {
				t.Fatal(err)
			}
			if ok, _ := Exists(ctx, a); ok {
				t.Fatal("object still there after Remove")
			}
		})
	}
}

func TestGDALConfig(t *testing.T) {
	t.Setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9000")
	t.Setenv("AWS_S3_USE_PATH_STYLE", "")
	t.Setenv("AWS_NO_SIGN_REQUEST", "YES")
	got := GDALConfig()
	want := map[string]string{"AWS_S3_ENDPOINT": "127.0.0.1:9000", "AWS_HTTPS": "NO", "AWS_VIRTUAL_HOSTING": "FALSE", "AWS_NO_SIGN_REQUEST": "YES"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("GDALConfig()[%s] = %q, want %q", k, got[k], v)
		}
	}
}

// TestRetries: a server that answers 503 SlowDown to every 3rd request and
// resets the connection of every 5th still serves every read and write.
func TestRetries(t *testing.T) {
	_, fl := s3test.StartFlakyS3(t, s3test.Faults{Every503: 3, EveryDrop: 5}, "bucket")
	ctx := context.Background()
	for i := 0; i < 20; i++ {
		loc := fmt.Sprintf("s3://bucket/x/%02d.bin", i)
		want := bytes.Repeat([]byte{byte(i)}, 1000+i)
		if err := WriteFile(ctx, loc, want); err != nil {
			t.Fatalf("WriteFile %s through faults: %v", loc, err)
		}
		got, err := ReadFile(ctx, loc)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("ReadFile %s through faults = %d bytes, %v; want %d bytes", loc, len(got), err, len(want))
		}
	}
	list, err := List(ctx, "s3://bucket/x")
	if err != nil || len(list) != 20 {
		t.Fatalf("List through faults = %d objects, %v; want 20", len(list), err)
	}
	fsys, err := FS(ctx, "s3://bucket/x")
	if err != nil {
		t.Fatalf("FS through faults: %v", err)
	}
	for i := 0; i < 20; i++ {
		name := fmt.Sprintf("%02d.bin", i)
		got, err := fs.ReadFile(fsys, name)
		if err != nil || len(got) != 1000+i {
			t.Fatalf("fs.ReadFile %s through faults = %d bytes, %v; want %d bytes", name, len(got), err, 1000+i)
		}
	}
	if fl.Failed503() == 0 || fl.Dropped() == 0 {
		t.Fatalf("faults injected: %d × 503, %d dropped; want both > 0", fl.Failed503(), fl.Dropped())
	}
	t.Logf("%d requests, %d answered 503, %d dropped", fl.Requests(), fl.Failed503(), fl.Dropped())
}

// TestHTTPRetries: Open and ReadFile retry 503s and dropped connections over
// plain HTTP, and do not retry a 404 or a 403.
func TestHTTPRetries(t *testing.T) {
	body := []byte("talhões")
	var hits atomic.Int64
	h := s3test.NewFlaky(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		switch r.URL.Path {
		case "/missing":
			http.NotFound(w, r)
		case "/forbidden":
			http.Error(w, "no", http.StatusForbidden)
		default:
			w.Write(body)
		}
	}), s3test.Faults{Every503: 2, EveryDrop: 3})
	srv := httptest.NewServer(h)
	defer srv.Close()
	ctx := context.Background()
	for i := 0; i < 6; i++ {
		got, err := ReadFile(ctx, srv.URL+"/f.geojson")
		if err != nil || !bytes.Equal(got, body) {
			t.Fatalf("ReadFile #%d = %q, %v; want %q", i, got, err, body)
		}
		r, err := Open(ctx, srv.URL+"/f.geojson")
		if err != nil {
			t.Fatalf("Open #%d: %v", i, err)
		}
		r.Close()
	}
	if h.Failed503() == 0 || h.Dropped() == 0 {
		t.Fatalf("faults injected: %d × 503, %d dropped; want both > 0", h.Failed503(), h.Dropped())
	}
	h.Off.Store(true)
	before := hits.Load()
	if _, err := ReadFile(ctx, srv.URL+"/missing"); !errors.Is(err, ErrNotExist) {
		t.Fatalf("ReadFile(404) error = %v, want ErrNotExist", err)
	}
	if _, err := ReadFile(ctx, srv.URL+"/forbidden"); err == nil || !strings.Contains(err.Error(), "403") {
		t.Fatalf("ReadFile(403) error = %v, want HTTP 403", err)
	}
	if n := hits.Load() - before; n != 2 {
		t.Fatalf("404 and 403 took %d requests, want 2 (no retries)", n)
	}
}

func TestGDALRetrySettings(t *testing.T) {
	got := GDALConfig()
	if got["GDAL_HTTP_MAX_RETRY"] != fmt.Sprint(MaxAttempts-1) || got["GDAL_HTTP_RETRY_DELAY"] != GDALRetryDelay {
		t.Fatalf("GDALConfig retries = %q / %q, want %d / %s", got["GDAL_HTTP_MAX_RETRY"], got["GDAL_HTTP_RETRY_DELAY"], MaxAttempts-1, GDALRetryDelay)
	}
}

func TestPutFile(t *testing.T) {
	s3test.StartS3(t, "bucket")
	ctx := context.Background()
	for _, loc := range []string{filepath.Join(t.TempDir(), "a", "part.parquet"), "s3://bucket/out/part.parquet"} {
		f, err := CreateTemp(loc)
		if err != nil {
			t.Fatal(err)
		}
		want := bytes.Repeat([]byte("row "), 5000)
		if _, err := f.Write(want); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		if err := PutFile(ctx, loc, f.Name()); err != nil {
			t.Fatalf("PutFile %s: %v", loc, err)
		}
		got, err := ReadFile(ctx, loc)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("ReadFile(%s) after PutFile = %d bytes, %v; want %d", loc, len(got), err, len(want))
		}
		if ok, _ := Exists(ctx, f.Name()); ok {
			t.Errorf("temporary file %s left after PutFile", f.Name())
		}
	}
}

// CreateExclusive is one atomic create-if-absent (issue 19 defect 3, the
// output folder's lock): of 16 writers racing for one name, on a local disk
// and on the S3 protocol server (a PutObject with If-None-Match: "*"),
// exactly one wins and the others get fs.ErrExist; the winner's bytes stay.
func TestCreateExclusive(t *testing.T) {
	s3test.StartS3(t, "bucket")
	ctx := context.Background()
	for _, base := range []string{t.TempDir(), "s3://bucket/out"} {
		t.Run(base, func(t *testing.T) {
			loc := Join(base, "run", "part-00000-of-00002.lock")
			const n = 16
			errs := make([]error, n)
			var wg sync.WaitGroup
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					errs[i] = CreateExclusive(ctx, loc, []byte(fmt.Sprintf("writer %d", i)))
				}()
			}
			wg.Wait()
			won := -1
			for i, err := range errs {
				switch {
				case err == nil && won >= 0:
					t.Errorf("writers %d and %d both created %s", won, i, loc)
				case err == nil:
					won = i
				case !errors.Is(err, fs.ErrExist):
					t.Errorf("writer %d: %v, want fs.ErrExist", i, err)
				}
			}
			if won < 0 {
				t.Fatal("no writer created the file")
			}
			if b, err := ReadFile(ctx, loc); err != nil || string(b) != fmt.Sprintf("writer %d", won) {
				t.Errorf("%s holds %q, %v; want the winner's bytes", loc, b, err)
			}
			if err := CreateExclusive(ctx, loc, []byte("late")); !errors.Is(err, fs.ErrExist) {
				t.Errorf("create over an existing file: %v, want fs.ErrExist", err)
			}
			if err := Remove(ctx, loc); err != nil {
				t.Fatal(err)
			}
			if err := CreateExclusive(ctx, loc, []byte("again")); err != nil {
				t.Errorf("create after remove: %v", err)
			}
		})
	}
	if err := CreateExclusive(ctx, "https://example.invalid/x.lock", nil); err == nil {
		t.Error("created over HTTP")
	}
}
