package testkit

import (
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Near reports whether a and b differ by at most tol (an absolute
// tolerance). NaN is near nothing.
func Near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

// HashTree returns the hex sha256 of every file under dir, keyed by its
// slash-separated path relative to dir. A file whose relative path equals an
// entry of skip, or starts with an entry ending in "/", is left out (run
// manifests hold timings, for example).
func HashTree(tb testing.TB, dir string, skip ...string) map[string]string {
	tb.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		for _, s := range skip {
			if rel == s || strings.HasSuffix(s, "/") && strings.HasPrefix(rel, s) {
				return nil
			}
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		h := sha256.Sum256(b)
		out[rel] = hex.EncodeToString(h[:])
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

// Features reads the features of a GeoJSON FeatureCollection file (a
// static STAC catalog), each as written: asset hrefs untouched. A missing
// or malformed file fails the test.
func Features(tb testing.TB, path string) []json.RawMessage {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	var fc struct {
		Features []json.RawMessage `json:"features"`
	}
	if err := json.Unmarshal(b, &fc); err != nil {
		tb.Fatalf("read %s: %v", path, err)
	}
	return fc.Features
}

// ReadCSV reads every record of the CSV file at path, header included. A
// missing or malformed file fails the test: the data is part of the
// repository.
func ReadCSV(tb testing.TB, path string) [][]string {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		tb.Fatalf("read %s: %v", path, err)
	}
	if len(recs) == 0 {
		tb.Fatalf("read %s: no header", path)
	}
	return recs
}

// Columns maps each name of a CSV header to its index.
func Columns(header []string) map[string]int {
	col := make(map[string]int, len(header))
	for i, h := range header {
		col[h] = i
	}
	return col
}

// CPUTime is the user+system CPU time of this process so far (all threads,
// GDAL's included): on a shared machine a benchmark's CPU time is steadier
// than its wall time. It is 0 where getrusage fails.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
