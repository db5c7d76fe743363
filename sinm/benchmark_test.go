package sinm

import (
	"fmt"
	"testing"

	"github.com/manejo/manejo/export"
	"github.com/manejo/manejo/export/exporttest"
	"github.com/manejo/manejo/zarc"
)

type countWriter struct{ n int64 }

func (c *countWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

// BenchmarkBuildPayload builds the payload of a 200-cell talhão with 250
// dates (50 000 observations).
func BenchmarkBuildPayload(b *testing.B) {
	obs := exporttest.Observations(b, 50_000)
	cells := make([]export.CellRow, 200)
	for c := range cells {
		cells[c] = export.CellRow{FieldID: "MT-00000", CellID: fmt.Sprintf("r%03dc%03d", c/20, c%20), CentreLon: -55.6 + float64(c)*1e-3, CentreLat: -11.7}
	}
	start, end := zarc.Date(18900), zarc.Date(20300)
	slope := 2.0
	in := PayloadInput{Indicator: export.IndicatorRow{FieldID: "MT-00000", PeriodStart: &start, PeriodEnd: &end, SlopeMeanPct: &slope}, Cells: cells, Observations: obs}
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
