package grid

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/manejo/manejo/internal/testkit"
)

// writeFieldsFile writes a FeatureCollection of n square talhões of k
// vertices each, with pad bytes of whitespace after every comma between
// features and inside every feature, and returns its path and size.
func writeFieldsFile(t testing.TB, n, k, pad int) (string, int64) {
	path := filepath.Join(t.TempDir(), "talhoes.geojson")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	space := strings.Repeat(" \n\t", pad/3)
	w.WriteString(`{"type":"FeatureCollection","features":[`)
	for i := range n {
		if i > 0 {
			w.WriteString("," + space)
		}
		x, y := -56+float64(i%200)*0.01, -12+float64(i/200)*0.01
		fmt.Fprintf(w, `{"type":"Feature","properties":{"id":"T-%06d","crop":"soja","plantioContorno":0,"terraceamento":0},`+space+`"geometry":{"type":"Polygon","coordinates":[[`, i)
		for j := range k {
			fmt.Fprintf(w, "[%.9f,%.9f],", x+0.005*float64(j)/float64(k), y)
		}
		fmt.Fprintf(w, "[%.9f,%.9f],[%.9f,%.9f],[%.9f,%.9f]]]}}", x+0.005, y+0.005, x, y+0.005, x, y)
	}
	w.WriteString("]}")
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	st, _ := f.Stat()
	f.Close()
	return path, st.Size()
}

// TestReadMemoryIsBoundedByFeature reproduces issue 19 defect 12 for the
// talhões reader: the file used to be read whole and decoded twice over
// (3.3× its size in memory; a 200 MB file of whitespace took 657 MB). It
// is now streamed feature by feature:
//   - 49 MB of which 99.9 % is whitespace (between and inside features)
//     allocates under 1/16 of the file in all (measured 0.024×; the
//     whole-file reader allocated 3.56× and peaked 80 MB above its result);
//   - a file of 40,000 talhões of 40 vertices (58 MB) peaks under the
//     file's size above the talhões it returns (measured 0.61×, the parsed
//     properties; the whole-file reader 1.79×: the file and a copy of each
//     feature live at once).
func TestReadMemoryIsBoundedByFeature(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 100 MB of test files")
	}
	ctx := context.Background()
	path, size := writeFieldsFile(t, 24, 4, 1<<20)
	var fs []Field
	alloc, transient := testkit.HeapDuring(func() any {
		var errs []error
		fs, errs = Read(ctx, path, ReadOptions{})
		if len(errs) > 0 {
			t.Fatal(errs[0])
		}
		return fs
	})
	t.Logf("whitespace file: %.1f MB, %d talhões: allocated %.2f MB (%.3f× the file), transient peak %.2f MB", float64(size)/1e6, len(fs), float64(alloc)/1e6, float64(alloc)/float64(size), float64(transient)/1e6)
	if len(fs) != 24 || alloc > uint64(size)/16 {
		t.Errorf("whitespace file of %d bytes: %d talhões, %d bytes allocated; want 24 and under 1/16 of the file", size, len(fs), alloc)
	}

	path, size = writeFieldsFile(t, 40000, 40, 0)
	alloc, transient = testkit.HeapDuring(func() any {
		var errs []error
		fs, errs = Read(ctx, path, ReadOptions{})
		if len(errs) > 0 {
			t.Fatal(errs[0])
		}
		return fs
	})
	t.Logf("dense file: %.1f MB, %d talhões: allocated %.1f MB (%.2f× the file), transient peak %.1f MB (%.3f× the file)", float64(size)/1e6, len(fs), float64(alloc)/1e6, float64(alloc)/float64(size), float64(transient)/1e6, float64(transient)/float64(size))
	if len(fs) != 40000 || transient > uint64(size) {
		t.Errorf("dense file of %d bytes: %d talhões, transient peak %d bytes; want 40000 and under the file's size", size, len(fs), transient)
	}
}
