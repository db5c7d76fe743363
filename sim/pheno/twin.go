package pheno

import "math"

// Twin returns a field that no satellite reading can tell from s — its
// reflectance is s's on every day, wet or dry, to rounding — but whose
// ground straw covers more of the ground and is further decomposed: on day
// i its ground residue is s's residue blended with the field's soil in the
// proportion λᵢ : 1 − λᵢ (residue decomposed further toward the soil's
// organic matter, or partly covered by soil splashed by rain), over 1/λᵢ
// times the ground s's residue covers. The identity is exact:
//
//	st·S + (1 − st)·B = (st/λ)·(λ·S + (1 − λ)·B) + (1 − st/λ)·B
//
// (each part wetting as its own material). λᵢ = max(minShare, (stᵢ/hᵢ)^beta),
// where hᵢ is s's ground straw after its last rise (a harvest): the twin's
// straw is as fresh as s's at harvest and decays more slowly, to
// stᵢ^(1−beta)·hᵢ^beta (never rising between harvests, never above hᵢ), while
// it decomposes further. Its truth (Fractions, GroundStraw, StrawPct,
// GroundStrawSpectrum, GroundStrawNDTI) is the twin's own.
//
// A twin shows what four bands cannot identify: "less, fresher straw" and
// "more, more decomposed straw" give the same readings, so no estimator can
// be right on both (docs/coverage.md, "What the readings cannot tell").
// beta in (0, 1) and minShare in (0, 1]; the zero beta gives s's truth.
func (s *Scenario) Twin(beta, minShare float64) *Scenario {
	c := *s
	n := len(s.straw)
	c.share, c.straw = make([]float64, n), make([]float64, n)
	h := 0.0
	for i, st := range s.straw {
		if i == 0 || st > s.straw[i-1] {
			h = st
		}
		l := 1.0
		if h > 0 && beta > 0 {
			l = math.Max(minShare, math.Pow(st/h, beta))
		}
		c.share[i], c.straw[i] = l, st/l
	}
	return &c
}

// shareOf returns the share of the ground residue's own spectrum on day i
// (1 but in a Twin).
func (s *Scenario) shareOf(i int) float64 {
	if s.share == nil {
		return 1
	}
	return s.share[i]
}

// addGround adds to out the reflectance of the ground of day i, covering
// ground of the pixel: residue of spectrum straw (wetting with kStraw) over
// the share s.straw[i] of it, soil (wetting with kSoil) over the rest; in a
// Twin the residue is blended with soil (each part wetting as its own).
func (s *Scenario) addGround(out Reflectance, i int, ground float64, straw Reflectance, kStraw, kSoil [3]float64, wet float64) Reflectance {
	st := s.straw[i]
	soil := wetten(s.Soil, kSoil, wet)
	residue := wetten(straw, kStraw, wet)
	if l := s.shareOf(i); l != 1 {
		residue = residue.scale(l).add(soil.scale(1 - l))
	}
	out = out.add(residue.scale(ground * st))
	return out.add(soil.scale(ground * (1 - st)))
}

// twinStraw is the dry ground-straw spectrum straw of day i as a Twin
// blends it with soil.
func (s *Scenario) twinStraw(i int, straw Reflectance) Reflectance {
	l := s.shareOf(i)
	return straw.scale(l).add(s.Soil.scale(1 - l))
}
