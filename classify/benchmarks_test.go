package classify

import "testing"

// BenchmarkClassify measures one talhão with a seven-crop history: the CLI
// and the worker classify one talhão per call.
func BenchmarkClassify(b *testing.B) {
	in := Input{
		FieldID: "b", Crop: Soja,
		CTC: Float(8), VPct: Float(60), Ca: Float(2), MPct: Float(12),
		TYears: Float(10), CPct: Float(95), SlopePct: Float(4), ContourPct: Float(60),
		EffectiveDepthCm: Float(100), History: richHistory(b),
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := Classify(in); err != nil {
			b.Fatal(err)
		}
	}
}
