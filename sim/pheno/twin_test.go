package pheno

import (
	"math"
	"math/rand/v2"
	"testing"
)

// A Twin reads the same as its field on every day and every pass (wet or
// dry, clouds and noise drawn alike), while its straw covers more of the
// ground, never rises between harvests and is blended with soil within
// the share asked for.
func TestTwinReadsTheSame(t *testing.T) {
	const beta, minShare = 0.5, 0.6
	for _, sp := range []Spectra{SpectraReference, SpectraVaried} {
		more := 0
		for seed := uint64(0); seed < 20; seed++ {
			s := Random(rand.New(rand.NewPCG(seed, 9)), date("2022-07-01"), date("2026-06-30"), Options{Spectra: sp, TillageProb: 0.5})
			tw := s.Twin(beta, minShare)
			for i, d := 0, s.Start; !d.After(s.End); i, d = i+1, d.AddDate(0, 0, 1) {
				a, b := s.Reflectance(d), tw.Reflectance(d)
				for k, v := range [4]float64{a.Red - b.Red, a.NIR - b.NIR, a.SWIR1 - b.SWIR1, a.SWIR2 - b.SWIR2} {
					if math.Abs(v) > 1e-12 {
						t.Fatalf("spectra %d seed %d %s band %d: field %v, twin %v", sp, seed, d.Format("2006-01-02"), k, a, b)
					}
				}
				st, st2 := s.GroundStraw(d), tw.GroundStraw(d)
				if st2 < st-1e-12 || st2 > 1 || tw.share[i] < minShare || tw.share[i] > 1 {
					t.Fatalf("seed %d %s: straw %.3f → twin %.3f (share %.3f)", seed, d.Format("2006-01-02"), st, st2, tw.share[i])
				}
				if i > 0 && s.straw[i] <= s.straw[i-1] && st2 > tw.straw[i-1]+1e-12 {
					t.Fatalf("seed %d %s: the twin's straw rose from %.4f to %.4f with no harvest", seed, d.Format("2006-01-02"), tw.straw[i-1], st2)
				}
				if st2 > st+0.05 {
					more++
				}
			}
			dates := Revisit(s.Start, s.End, 5)
			oa := s.Observe(rand.New(rand.NewPCG(seed, 1)), dates, ObsOptions{})
			ob := tw.Observe(rand.New(rand.NewPCG(seed, 1)), dates, ObsOptions{})
			for i := range oa {
				if d := oa[i].R.NDTI() - ob[i].R.NDTI(); oa[i].Cloud != ob[i].Cloud || math.Abs(d) > 1e-9 {
					t.Fatalf("seed %d: pass %s differs", seed, dates[i].Format("2006-01-02"))
				}
			}
		}
		if more == 0 {
			t.Errorf("spectra %d: the twins' straw never exceeded their fields' by 5 pp", sp)
		}
	}
	s := Random(rand.New(rand.NewPCG(1, 9)), date("2022-07-01"), date("2026-06-30"), Options{Spectra: SpectraVaried})
	if z := s.Twin(0, minShare); z.StrawPct(s.Start, s.End) != s.StrawPct(s.Start, s.End) {
		t.Error("beta 0 changed the truth")
	}
}
