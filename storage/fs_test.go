package storage_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"math/rand/v2"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"testing/fstest"

	"github.com/manejo/manejo/export"
	"github.com/manejo/manejo/export/exporttest"
	. "github.com/manejo/manejo/storage"
	"github.com/manejo/manejo/storage/s3test"
)

// rangeLog records the GET requests an S3 server receives.
type rangeLog struct {
	mu   sync.Mutex
	gets []string // Range header of each GET of an object ("" for a whole one)
}

func (l *rangeLog) match(r *http.Request) bool {
	if r.Method == http.MethodGet && r.URL.Query().Get("list-type") == "" && !r.URL.Query().Has("location") {
		l.mu.Lock()
		l.gets = append(l.gets, r.Header.Get("Range"))
		l.mu.Unlock()
	}
	return false // count only, inject no fault
}

// requested sums the bytes the logged GETs asked for; whole is the number
// of GETs without a range.
func (l *rangeLog) requested(t *testing.T) (bytes int64, whole int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, r := range l.gets {
		a, b, ok := strings.Cut(strings.TrimPrefix(r, "bytes="), "-")
		if !ok {
			whole++
			continue
		}
		x, err1 := strconv.ParseInt(a, 10, 64)
		y, err2 := strconv.ParseInt(b, 10, 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("range %q", r)
		}
		bytes += y - x + 1
	}
	return bytes, whole
}

func (l *rangeLog) reset() { l.mu.Lock(); l.gets = nil; l.mu.Unlock() }

var tree = map[string]string{
	"run.json":    `{"tool":"manejo"}`,
	"sinm/A.json": "{}",
	"sinm/B.json": "{ }",
	"indicators.parquet/part-00000-of-00002.parquet": "p0",
	"indicators.parquet/part-00001-of-00002.parquet": "p1",
}

// TestFS: a local folder and an S3 prefix holding the same objects are the
// same fs.FS (testing/fstest checks Open, ReadDir, Stat, Glob, ReadAt, Seek).
func TestFS(t *testing.T) {
	s3test.StartS3(t, "bucket")
	ctx := context.Background()
	for _, base := range []string{t.TempDir(), "s3://bucket/runs/out", "s3://bucket/runs/out/"} {
		t.Run(base, func(t *testing.T) {
			for name, data := range tree {
				if err := WriteFile(ctx, Join(base, filepath.FromSlash(name)), []byte(data)); err != nil {
					t.Fatal(err)
				}
			}
			WriteFile(ctx, "s3://bucket/runs/outside.json", []byte("not under the prefix"))
			fsys, err := FS(ctx, base)
			if err != nil {
				t.Fatal(err)
			}
			if err := fstest.TestFS(fsys, "run.json", "sinm/A.json", "sinm/B.json", "indicators.parquet/part-00001-of-00002.parquet"); err != nil {
				t.Fatal(err)
			}
			files, err := export.DatasetFiles(fsys, "indicators")
			if err != nil || len(files) != 2 || files[1] != "indicators.parquet/part-00001-of-00002.parquet" {
				t.Errorf("DatasetFiles = %v, %v", files, err)
			}
			if b, err := fs.ReadFile(fsys, "sinm/B.json"); err != nil || string(b) != "{ }" {
				t.Errorf("ReadFile = %q, %v", b, err)
			}
			for _, missing := range []string{"nope.json", "sinm/C.json", "sin"} {
				if _, err := fs.Stat(fsys, missing); !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("Stat(%s) = %v, want fs.ErrNotExist", missing, err)
				}
			}
		})
	}
	if _, err := FS(ctx, "s3://bucket/no/such/prefix"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("FS(empty prefix) = %v, want fs.ErrNotExist", err)
	}
	file := filepath.Join(t.TempDir(), "run.json")
	WriteFile(ctx, file, []byte("{}"))
	if _, err := FS(ctx, file); !errors.Is(err, syscall.ENOTDIR) {
		t.Errorf("FS(a file) = %v, want syscall.ENOTDIR", err)
	}
	if _, err := FS(ctx, filepath.Join(t.TempDir(), "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("FS(missing folder) = %v, want fs.ErrNotExist", err)
	}
}

// TestFSReadsByRange: reading a few bytes, or the first rows of a Parquet
// file, through an S3 FS fetches ranges, never the whole object.
func TestFSReadsByRange(t *testing.T) {
	var log rangeLog
	s3test.StartFlakyS3(t, s3test.Faults{Match: log.match}, "bucket")
	ctx := context.Background()
	big := make([]byte, 3*ReadAhead+12345)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range big {
		big[i] = byte(rng.Uint32())
	}
	if err := WriteFile(ctx, "s3://bucket/out/big.bin", big); err != nil {
		t.Fatal(err)
	}
	fsys, err := FS(ctx, "s3://bucket/out")
	if err != nil {
		t.Fatal(err)
	}
	f, err := fsys.Open("big.bin")
	if err != nil {
		t.Fatal(err)
	}
	ra := f.(io.ReaderAt)
	log.reset()
	p := make([]byte, 100)
	for _, off := range []int64{int64(len(big)) - 100, 10, 20} { // 20 is in the block read for 10
		if n, err := ra.ReadAt(p, off); n != 100 || err != nil || !bytes.Equal(p, big[off:off+100]) {
			t.Fatalf("ReadAt(%d) = %d, %v", off, n, err)
		}
	}
	got, whole := log.requested(t)
	if whole != 0 || len(log.gets) != 2 || got > 4*BlockSize {
		t.Errorf("3 small reads made GETs %q (%d bytes, %d whole), want 2 ranged ones", log.gets, got, whole)
	}

	// A Parquet file larger than ReadAhead: the first chunk of rows needs
	// the footer and the first pages, not the file.
	var buf bytes.Buffer
	if err := export.Write(&buf, exporttest.Observations(t, 400_000), export.Options{}); err != nil {
		t.Fatal(err)
	}
	if buf.Len() < 2*ReadAhead {
		t.Fatalf("observations.parquet is %d bytes; the test needs more than %d", buf.Len(), 2*ReadAhead)
	}
	if err := WriteFile(ctx, "s3://bucket/out/observations.parquet", buf.Bytes()); err != nil {
		t.Fatal(err)
	}
	log.reset()
	stop := errors.New("stop")
	err = export.ScanFS(fsys, "observations.parquet", 1000, func(rows []export.ObsRow) error {
		if len(rows) != 1000 {
			t.Errorf("first chunk = %d rows", len(rows))
		}
		return stop
	})
	if !errors.Is(err, stop) {
		t.Fatal(err)
	}
	got, whole = log.requested(t)
	if whole != 0 || got >= int64(buf.Len()) {
		t.Errorf("scanning the first 1000 rows fetched %d of %d bytes (%d whole GETs): %q", got, buf.Len(), whole, log.gets)
	}
	t.Logf("first chunk: %d GETs, %d of %d bytes", len(log.gets), got, buf.Len())

	// And every row reads back through the FS.
	rows, err := export.ReadDataset[export.ObsRow](fsys)
	if err != nil || len(rows) != 400_000 {
		t.Fatalf("ReadDataset through S3 FS = %d rows, %v", len(rows), err)
	}
}
