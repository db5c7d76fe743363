package export

import (
	"fmt"
	"io"
	"math/rand/v2"
	"testing"
)

// benchObs builds n observation rows shaped like a real run: talhões of 200
// cells, scenes every 5 days, ~15 % masked, NDVI/NDTI with 4 significant
// decimals of noise around a seasonal curve.
func benchObs(tb testing.TB, n int) []ObsRow {
	tb.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	const cells, dates = 200, 250
	rows := make([]ObsRow, 0, n)
	masks := []string{"cloud", "shadow", "nodata"}
	for f := 0; len(rows) < n; f++ {
		field := fmt.Sprintf("MT-%05d", f)
		for c := 0; c < cells && len(rows) < n; c++ {
			cell := fmt.Sprintf("r%03dc%03d", c/20, c%20)
			for k := 0; k < dates && len(rows) < n; k++ {
				r := ObsRow{FieldID: field, CellID: cell, Date: Date(19000 + 5*k), Collection: "sentinel-2-l2a",
					ItemID: fmt.Sprintf("S2A_21LXH_%d_0_L2A", 19000+5*k)}
				if rng.Float64() < 0.15 {
					r.MaskReason = &masks[rng.IntN(len(masks))]
				} else {
					v := float32(0.5 + 0.3*float64(k%73)/73 + rng.NormFloat64()*0.03)
					w := float32(0.1 + rng.NormFloat64()*0.02)
					r.NDVI, r.NDTI = &v, &w
				}
				rows = append(rows, r)
			}
		}
	}
	return rows
}

type countWriter struct{ n int64 }

func (c *countWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

var _ io.Writer = (*countWriter)(nil)

// BenchmarkWriteObservations writes observations.parquet; rows/s and
// bytes/row are the figures of docs/outputs.md.
func BenchmarkWriteObservations(b *testing.B) {
	for _, n := range []int{100_000, 1_000_000} {
		rows := benchObs(b, n)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.ReportAllocs()
			var size int64
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				var cw countWriter
				if err := Write(&cw, rows, Options{}); err != nil {
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
	rows := benchObs(b, 1_000_000)
	var buf bytesBuf
	if err := Write(&buf, rows, Options{}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		n := 0
		if err := Scan(buf.reader(), int64(len(buf.b)), 8192, func(r []ObsRow) error { n += len(r); return nil }); err != nil {
			b.Fatal(err)
		}
		if n != len(rows) {
			b.Fatalf("scanned %d rows", n)
		}
	}
	b.ReportMetric(float64(len(rows))*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkBuildPayload builds the payload of a 200-cell talhão with 250
// dates (50 000 observations).
func BenchmarkBuildPayload(b *testing.B) {
	obs := benchObs(b, 50_000)
	cells := make([]CellRow, 200)
	for c := range cells {
		cells[c] = CellRow{FieldID: "MT-00000", CellID: fmt.Sprintf("r%03dc%03d", c/20, c%20), CentreLon: -55.6 + float64(c)*1e-3, CentreLat: -11.7}
	}
	start, end := Date(18900), Date(20300)
	slope := 2.0
	in := PayloadInput{Indicator: IndicatorRow{FieldID: "MT-00000", PeriodStart: &start, PeriodEnd: &end, SlopeMeanPct: &slope}, Cells: cells, Observations: obs}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var cw countWriter
		p, err := BuildPayload(in, testCodes)
		if err != nil {
			b.Fatal(err)
		}
		if err := WritePayload(&cw, p); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(cw.n), "payload_bytes")
	}
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
