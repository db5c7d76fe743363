package usworld

import (
	"bytes"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
	"time"
)

func median(x []float64) float64 {
	s := append([]float64(nil), x...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// TestGenerateDeterministic: the same Config draws the same world, byte
// for byte in its table; another seed another one.
func TestGenerateDeterministic(t *testing.T) {
	cfg := Config{Seed: 3, Fields: 4, Years: []int{2018}, Points: 16, Artifacts: AllArtifacts()}
	table := func(c Config) string {
		var b bytes.Buffer
		w := Generate(c)
		if err := WriteCSV(&b, w.Fields, 2018); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	a, b := table(cfg), table(cfg)
	cfg.Seed = 4
	if a != b || a == table(cfg) || !strings.HasPrefix(a, TableHeader+"\n") {
		t.Errorf("tables: same seed equal %t, other seed differs %t", a == b, a != table(cfg))
	}
}

// TestWorldTruth: labels, tillage and cover as the cited ranges say. NT
// fields keep 60–95 % cover at planting (field means, with the points'
// spread); every CT field-year has passes, inside (Nov, planting] when the
// fall-before-window artifact is off; about a fifth of the fields are CT.
func TestWorldTruth(t *testing.T) {
	a := AllArtifacts()
	a.FallBeforeWindow = false
	w := Generate(Config{Seed: 1, Fields: 60, Points: 16, Artifacts: a})
	nCT := 0
	for _, f := range w.Fields {
		if f.CT {
			nCT++
		}
		for _, fy := range f.Years {
			if !f.CT && (len(fy.Passes) != 0 || fy.CoverAtPlanting < 0.55 || fy.CoverAtPlanting > 0.99) {
				t.Errorf("%s %d NT: passes %v, cover at planting %.2f", f.ID, fy.CropYear, fy.Passes, fy.CoverAtPlanting)
			}
			if f.CT && (len(fy.Passes) == 0 || !fy.InWindow() || fy.CoverAtPlanting > 0.8) {
				t.Errorf("%s %d CT %s: passes %v, cover at planting %.2f", f.ID, fy.CropYear, f.System, fy.Passes, fy.CoverAtPlanting)
			}
			for _, p := range fy.Passes {
				if p.Date.Before(fy.Start) || p.Date.After(fy.Planting) {
					t.Errorf("%s %d: pass %v outside (Nov, planting] with fall-before-window off", f.ID, fy.CropYear, p)
				}
			}
			if fy.Planting.Before(date(fy.CropYear, time.April, 20)) || fy.Planting.After(date(fy.CropYear, time.May, 20)) ||
				fy.End.Before(fy.Planting) || fy.End.Sub(fy.Planting) > 5*24*time.Hour {
				t.Errorf("%s %d: planting %v, end %v", f.ID, fy.CropYear, fy.Planting, fy.End)
			}
		}
	}
	if nCT != 12 {
		t.Errorf("%d CT fields of 60, want 12 (CTShare 0.2)", nCT)
	}
}

// TestSLCOffGaps: with clouds and snow off, a Landsat 7 scene keeps about
// four fifths of a field's points (22 % missing on average, USGS), every
// other sensor all of them.
func TestSLCOffGaps(t *testing.T) {
	a := AllArtifacts()
	a.Clouds, a.Snow = false, false
	w := Generate(Config{Seed: 2, Fields: 40, Years: []int{2018}, Artifacts: a})
	perScene := map[Sensor][]float64{}
	for _, f := range w.Fields {
		n := map[int32]map[Sensor]int{}
		for _, r := range f.Years[0].Readings {
			if n[r.Day] == nil {
				n[r.Day] = map[Sensor]int{}
			}
			n[r.Day][r.Sensor]++
		}
		for _, m := range n {
			for s, k := range m {
				perScene[s] = append(perScene[s], float64(k)/100)
			}
		}
	}
	mean := func(x []float64) float64 {
		s := 0.0
		for _, v := range x {
			s += v
		}
		return s / float64(len(x))
	}
	if m := mean(perScene[L7]); m < 0.70 || m > 0.86 {
		t.Errorf("Landsat 7 keeps %.2f of the points per scene, want ≈ 0.78", m)
	}
	for _, s := range []Sensor{L8, S2A, S2B} {
		if m := mean(perScene[s]); m < 0.999 {
			t.Errorf("%v keeps %.3f of the points per scene without clouds, want all (sidelap scenes count twice)", s, m)
		}
	}
}

// TestSpectraContrast: dry stover's NDTI is above dry soil's by the gap
// Daughtry et al. 2005 report (0.05–0.2), wetting narrows it (Daughtry &
// Hunt 2008), and the cross-sensor offsets keep L7 within 0.025 NDTI of
// L8 (Roy et al. 2016's OLS inverted: ≈ 0.01 on dark soils, ± 1 % gain)
// and S2 within 0.05 (typically 0.005–0.02) on these surfaces.
func TestSpectraContrast(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	var gaps, wideGaps, wetGaps, l7, s2 []float64
	for range 500 {
		soil, res := drawSoil(rng), drawResidue(rng, false)
		wideGaps = append(wideGaps, ndti(drawResidue(rng, true))-ndti(soil))
		gaps = append(gaps, ndti(res)-ndti(soil))
		wetGaps = append(wetGaps, ndti(wetten(res, wetResidue, 0.8))-ndti(wetten(soil, wetSoil, 0.8)))
		cal := drawCalibration(rng, true)
		for _, s := range []spec{soil, res} {
			l7 = append(l7, math.Abs(ndti(cal.apply(L7, s))-ndti(s)))
			s2 = append(s2, math.Abs(ndti(cal.apply(S2A, s))-ndti(s)))
		}
	}
	if g := median(gaps); g < 0.05 || g > 0.2 {
		t.Errorf("median residue–soil NDTI gap %.3f", g)
	}
	if g := median(wideGaps); g <= median(gaps) || g > 0.2 {
		t.Errorf("median residue–soil NDTI gap %.3f with WideContrast, %.3f without", g, median(gaps))
	}
	if median(wetGaps) >= median(gaps) {
		t.Errorf("wetting widens the gap: %.3f → %.3f", median(gaps), median(wetGaps))
	}
	sort.Float64s(l7)
	sort.Float64s(s2)
	if l7[len(l7)-1] > 0.025 || s2[len(s2)-1] > 0.05 || s2[len(s2)/2] < 0.005 || s2[len(s2)/2] > 0.02 {
		t.Errorf("cross-sensor NDTI offsets: L7 max %.4f, S2 median %.4f max %.4f", l7[len(l7)-1], s2[len(s2)/2], s2[len(s2)-1])
	}
}

// TestSnowSeason: snow lies only between December and early May (an
// episode starting by mid-March lasts at most 40 days), and never when the
// artifact is off.
func TestSnowSeason(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	for range 200 {
		w := drawWeather(rng, 2018, 43, true)
		for d := date(2017, time.November, 1); d.Before(date(2018, time.June, 1)); d = d.AddDate(0, 0, 1) {
			if f := w.snowAt(d); f > 0 && (d.Before(date(2017, time.December, 1)) || d.After(date(2018, time.May, 5))) {
				t.Fatalf("snow %.2f on %v", f, d)
			}
		}
		if off := drawWeather(rng, 2018, 43, false); len(off.snow) != 0 {
			t.Fatal("snow episodes with snow off")
		}
	}
}
