package export_test

import (
	"fmt"
	"io"
	"testing"

	"github.com/manejo/manejo/export"
	"github.com/manejo/manejo/export/exporttest"
)

type countWriter struct{ n int64 }

func (c *countWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

var _ io.Writer = (*countWriter)(nil)

// BenchmarkWriteObservations writes observations.parquet; rows/s and
// bytes/row are the figures of docs/outputs.md.
func BenchmarkWriteObservations(b *testing.B) {
	for _, n := range []int{100_000, 1_000_000} {
		rows := exporttest.Observations(b, n)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.ReportAllocs()
			var size int64
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				var cw countWriter
				if err := export.Write(&cw, rows, export.Options{}); err != nil {
					b.Fatal(err)
				}
				size = cw.n
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
			b.ReportMetric(float64(size)/float64(n), "bytes/row")
		})
	}
}

// BenchmarkScanObservations reads them back with Scan in 8192-row chunks.
func BenchmarkScanObservations(b *testing.B) {
	rows := exporttest.Observations(b, 1_000_000)
	var buf bytesBuf
	if err := export.Write(&buf, rows, export.Options{}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		n := 0
		if err := export.Scan(buf.reader(), int64(len(buf.b)), 8192, func(r []export.ObsRow) error { n += len(r); return nil }); err != nil {
			b.Fatal(err)
		}
		if n != len(rows) {
			b.Fatalf("scanned %d rows", n)
		}
	}
	b.ReportMetric(float64(len(rows))*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

type bytesBuf struct{ b []byte }

func (w *bytesBuf) Write(p []byte) (int, error) { w.b = append(w.b, p...); return len(p), nil }
func (w *bytesBuf) reader() io.ReaderAt         { return readerAt(w.b) }

type readerAt []byte

func (r readerAt) ReadAt(p []byte, off int64) (int, error) {
	if off >= int64(len(r)) {
		return 0, io.EOF
	}
	n := copy(p, r[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}
