package classify

import (
	"testing"

	"github.com/manejo/manejo/zarc"
)

// BenchmarkClassify measures one talhão with a seven-crop history: the CLI
// and the worker classify one talhão per call.
func BenchmarkClassify(b *testing.B) {
	in := Input{
		FieldID: "b", Crop: zarc.Soja,
		CTC: new(8.0), VPct: new(60.0), Ca: new(2.0), MPct: new(12.0),
		TYears: new(10.0), CPct: new(95.0), SlopePct: new(4.0), ContourPct: new(60.0),
		EffectiveDepthCm: new(100.0), History: richHistory(b),
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := Classify(in); err != nil {
			b.Fatal(err)
		}
	}
}
