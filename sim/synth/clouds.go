package synth

import (
	"math"
	"math/rand/v2"
	"time"

	"github.com/manejo/manejo/sim/pheno"
)

// Sentinel-2 L2A scene classification (SCL) codes written by the archive.
const (
	SCLNoData      = 0
	SCLShadow      = 3
	SCLVegetation  = 4
	SCLNotVeg      = 5
	SCLWater       = 6
	SCLCloudMedium = 8
	SCLCloudHigh   = 9
	SCLCirrus      = 10
)

// Thresholds of the cloud model (opacity, shadow strength and cirrus
// reflectance at which SCL flags a pixel) and of what the truth calls an
// unflagged residue.
const (
	flagCloud    = 0.12  // opacity ≥ this: SCL 8 (≥ flagCloudHigh: 9)
	flagCloudHi  = 0.5   //
	flagShadow   = 0.25  // shadow strength ≥ this (and not cloud): SCL 3
	flagCirrus   = 0.015 // cirrus reflectance ≥ this (and not cloud): SCL 10
	residueCloud = 0.03  // unflagged opacity ≥ this is a residue (Δred ≈ +0.01)
	residueShade = 0.1   // unflagged shadow ≥ this is a residue (−6.5 %)
	residueCirr  = 0.008 // unflagged cirrus ≥ this is a residue
	shadowDark   = 0.65  // reflectance loss at full shadow
)

// cloudTop is the reflectance of a thick cloud top (as in pheno).
var cloudTop = pheno.Reflectance{Red: 0.45, NIR: 0.48, SWIR1: 0.38, SWIR2: 0.28}

// cirrusSpec is the relative cirrus contribution per band (weaker in SWIR).
var cirrusSpec = pheno.Reflectance{Red: 1, NIR: 1, SWIR1: 0.8, SWIR2: 0.6}

// sky is the atmosphere of one acquisition on the 20 m grid (m × m): cloud
// opacity (flagged when ≥ flagCloud), unflagged haze opacity, cloud-shadow
// strength, cirrus reflectance, and the swath's no-data area.
type sky struct {
	m                           int
	alpha, haze, shadow, cirrus []float32
	nodata                      []bool
	clear                       bool // nothing at all: every pixel is clear
}

// at returns the state of 20 m pixel q.
func (s *sky) at(q int) (alpha, shadow, cirrus float64, nodata bool) {
	if s.clear {
		return 0, 0, 0, false
	}
	return math.Min(1, float64(s.alpha[q]+s.haze[q])), float64(s.shadow[q]), float64(s.cirrus[q]), s.nodata[q]
}

// flagged returns the SCL code the mask gives to a pixel for its
// atmosphere alone, or 0 when the atmosphere leaves it to the surface.
func (s *sky) flag(q int) uint8 {
	if s.clear {
		return 0
	}
	switch a := s.alpha[q]; {
	case a >= flagCloudHi:
		return SCLCloudHigh
	case a >= flagCloud:
		return SCLCloudMedium
	case s.cirrus[q] >= flagCirrus:
		return SCLCirrus
	case s.shadow[q] >= flagShadow:
		return SCLShadow
	}
	return 0
}

// residue reports whether an unflagged pixel still carries cloud, haze,
// shadow or cirrus.
func (s *sky) residue(q int) bool {
	if s.clear {
		return false
	}
	return s.alpha[q]+s.haze[q] >= residueCloud || s.shadow[q] >= residueShade || s.cirrus[q] >= residueCirr
}

// atm returns reflectance x of a band seen through the atmosphere.
func atm(x, alpha, shadow, cirrus, top, cspec float64) float64 {
	return x*(1-shadowDark*shadow)*(1-alpha) + alpha*top + cirrus*cspec
}

// newSky draws the atmosphere of acquisition t. Cloud cover follows the
// monthly climatology of pheno.CloudProb: in the rainy months most passes
// are overcast or broken, in the dry season most are clear.
func (sc *scene) newSky(t int) *sky {
	d := sc.dates[t]
	m := sc.n / 2
	rng := rngFor(sc.o.Seed, 1_000_000+uint64(t))
	p := 0.0
	if sc.o.CloudScale > 0 {
		p = math.Min(0.98, pheno.CloudProb(d)*sc.o.CloudScale)
	}
	var cover float64
	if rng.Float64() < 0.45*p {
		cover = 0.8 + 0.2*rng.Float64()
	} else {
		cover = 0.9 * p * rng.Float64()
	}
	hasCirrus := rng.Float64() < 0.25*p+0.04
	hasHaze := rng.Float64() < 0.04
	swath := rng.Float64() < 0.07
	s := &sky{m: m}
	if cover < 0.002 && !hasCirrus && !hasHaze && !swath {
		s.clear = true
		return s
	}
	s.alpha = make([]float32, m*m)
	s.haze = make([]float32, m*m)
	s.shadow = make([]float32, m*m)
	s.cirrus = make([]float32, m*m)
	s.nodata = make([]bool, m*m)
	side := float64(sc.n) * pixelM
	// The draws below come from rng in a fixed order: the archive depends
	// on it.
	covered := s.addClouds(rng, side, cover)
	if hasHaze {
		s.addHaze(rng, side)
	}
	if covered > 0 {
		s.addShadows(rng, d)
	}
	if hasCirrus {
		s.addCirrus(rng, newValueNoise(sc.o.Seed, 2_000_000+uint64(t), 1200))
	}
	if swath {
		s.addSwathGap(rng)
	}
	return s
}

// addClouds raises lobed clouds until cover of the pixels are flagged (or
// 20000 tries), and returns how many are.
func (s *sky) addClouds(rng *rand.Rand, side, cover float64) int {
	m := s.m
	covered := 0
	target := int(cover * float64(m*m))
	for tries := 0; covered < target && tries < 20000; tries++ {
		r := 150 * math.Exp(rng.Float64()*math.Log(10)) // 150 m – 1.5 km
		if cover > 0.6 {
			r *= 1.5
		}
		cx, cy := rng.Float64()*(side+2*r)-r, rng.Float64()*(side+2*r)-r
		covered += blob(s.alpha, m, cx, cy, r, 3+3*rng.Float64(), 1, rng.Float64()*6.3, rng.Float64()*6.3)
	}
	return covered
}

// addHaze adds thin haze the mask misses: opacity stays below flagCloud.
func (s *sky) addHaze(rng *rand.Rand, side float64) {
	r := 400 + 1100*rng.Float64()
	blob(s.haze, s.m, rng.Float64()*side, rng.Float64()*side, r, 1.5, 0.06+0.05*rng.Float64(), rng.Float64()*6.3, rng.Float64()*6.3)
}

// addShadows casts the clouds' shadows, displaced away from the morning sun
// of date d.
func (s *sky) addShadows(rng *rand.Rand, d time.Time) {
	m := s.m
	az := (85 - 25*math.Cos(2*math.Pi*float64(d.YearDay()-172)/365)) * math.Pi / 180
	l := 500 + 900*rng.Float64()
	dx, dy := -l*math.Sin(az)/20, l*math.Cos(az)/20 // 20 m pixels, x east, y south
	for i := 0; i < m; i++ {
		for j := 0; j < m; j++ {
			si, sj := int(math.Round(float64(i)-dy)), int(math.Round(float64(j)-dx))
			if si < 0 || sj < 0 || si >= m || sj >= m {
				continue
			}
			if a := s.alpha[si*m+sj]; a > 0 {
				s.shadow[i*m+j] = float32(math.Min(1, 1.2*float64(a)))
			}
		}
	}
}

// addCirrus lays thin cirrus following the value noise v.
func (s *sky) addCirrus(rng *rand.Rand, v valueNoise) {
	m := s.m
	amp := 0.01 + 0.03*rng.Float64()
	for i := 0; i < m; i++ {
		for j := 0; j < m; j++ {
			if c := (v.at((float64(j)+0.5)*20, (float64(i)+0.5)*20) - 0.45) / 0.55; c > 0 {
				s.cirrus[i*m+j] = float32(amp * c)
			}
		}
	}
}

// addSwathGap marks a corner outside the orbit's swath as no data.
func (s *sky) addSwathGap(rng *rand.Rand) {
	m := s.m
	f := 0.1 + 0.3*rng.Float64()
	a := float64(m) * math.Sqrt(2*f)
	corner := rng.IntN(4)
	for i := 0; i < m; i++ {
		for j := 0; j < m; j++ {
			x, y := float64(j)+0.5, float64(i)+0.5
			if corner&1 == 1 {
				x = float64(m) - x
			}
			if corner&2 == 2 {
				y = float64(m) - y
			}
			if x+y < a {
				s.nodata[i*m+j] = true
			}
		}
	}
}

// blob raises field f (m × m, 20 m pixels) to a lobed cloud of radius r
// metres centred at (cx, cy) metres, with opacity k·(1 − (d/r)²) capped at
// peak, and returns how many pixels it newly raised to ≥ flagCloud.
func blob(f []float32, m int, cx, cy, r, k, peak, ph1, ph2 float64) int {
	rmax := r * 1.4
	i0, i1 := max(0, int((cy-rmax)/20)), min(m-1, int((cy+rmax)/20))
	j0, j1 := max(0, int((cx-rmax)/20)), min(m-1, int((cx+rmax)/20))
	n := 0
	for i := i0; i <= i1; i++ {
		y := (float64(i)+0.5)*20 - cy
		for j := j0; j <= j1; j++ {
			x := (float64(j)+0.5)*20 - cx
			d2 := x*x + y*y
			if d2 >= rmax*rmax {
				continue
			}
			th := math.Atan2(y, x)
			rr := r * (1 + 0.25*math.Sin(3*th+ph1) + 0.12*math.Sin(7*th+ph2))
			a := k * (1 - d2/(rr*rr))
			if a <= 0 {
				continue
			}
			a = math.Min(a, peak)
			q := i*m + j
			if old := f[q]; float32(a) > old {
				if old < flagCloud && a >= flagCloud {
					n++
				}
				f[q] = float32(a)
			}
		}
	}
	return n
}

// seasonOf names the agricultural year holding d, "2023/2024".
func seasonOf(d time.Time) string { return seasonName(agriYear(d)) }
