package pheno

import (
	"math/rand/v2"
	"testing"
)

// Dried keeps the truth and the cloudy rain days but never wets the
// surface: a day that was wet now reads the dry reflectance (brighter in
// SWIR); Unclouded leaves rain days' passes clear. The field they were
// made from is unchanged.
func TestDriedAndUnclouded(t *testing.T) {
	s := Random(rand.New(rand.NewPCG(3, 9)), date("2022-07-01"), date("2026-06-30"), Options{Spectra: SpectraVaried})
	dr, un := s.Dried(), s.Unclouded()
	wet, rain := 0, 0
	for d := s.Start; !d.After(s.End); d = d.AddDate(0, 0, 1) {
		if dr.Wetness(d) != 0 || dr.StrawPct(d, d.AddDate(0, 0, 1)) != s.StrawPct(d, d.AddDate(0, 0, 1)) {
			t.Fatalf("%s: dried wetness %.2f, truth %.3f vs %.3f", d.Format("2006-01-02"), dr.Wetness(d), dr.StrawPct(d, d.AddDate(0, 0, 1)), s.StrawPct(d, d.AddDate(0, 0, 1)))
		}
		if dr.rained(d) != s.rained(d) || un.rained(d) || un.Wetness(d) != s.Wetness(d) {
			t.Fatalf("%s: rain %v → dried %v, unclouded %v", d.Format("2006-01-02"), s.rained(d), dr.rained(d), un.rained(d))
		}
		if s.rained(d) {
			rain++
		}
		if s.Wetness(d) > 0.3 {
			wet++
			if a, b := s.Reflectance(d), dr.Reflectance(d); b.SWIR1 <= a.SWIR1 {
				t.Fatalf("%s (wetness %.2f): dried SWIR1 %.3f, wet %.3f", d.Format("2006-01-02"), s.Wetness(d), b.SWIR1, a.SWIR1)
			}
		}
	}
	if wet == 0 || rain == 0 {
		t.Fatalf("no wet day (%d) or rain day (%d) to check", wet, rain)
	}
	if r := Random(rand.New(rand.NewPCG(3, 9)), date("2022-07-01"), date("2026-06-30"), Options{}); r.Dried() != r || r.Unclouded() != r {
		t.Error("the reference world changed")
	}
}
