package spectral

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/manejo/manejo/sim/pheno"
)

func member(r pheno.Reflectance) Endmember {
	return Endmember{NDVI: r.NDVI(), NDTI: r.NDTI(), VNIR: r.Red + r.NIR, SWIR: r.SWIR1 + r.SWIR2}
}

// Mixing the pheno spectra and unmixing their indices gives the fractions
// back exactly: the index-space system is the reflectance mixing, not an
// approximation of it.
func TestFractionsRecoverMixtures(t *testing.T) {
	t.Parallel()
	g, s, b := pheno.GreenEndmember, pheno.StrawEndmember, pheno.SoilEndmember
	u, ok := New(member(g), member(s), member(b))
	if !ok {
		t.Fatal("pheno endmembers rejected")
	}
	for _, f := range [][3]float64{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {0.2, 0.5, 0.3}, {0.05, 0.15, 0.8}, {0.6, 0.1, 0.3}} {
		mix := pheno.Reflectance{
			Red:   f[0]*g.Red + f[1]*s.Red + f[2]*b.Red,
			NIR:   f[0]*g.NIR + f[1]*s.NIR + f[2]*b.NIR,
			SWIR1: f[0]*g.SWIR1 + f[1]*s.SWIR1 + f[2]*b.SWIR1,
			SWIR2: f[0]*g.SWIR2 + f[1]*s.SWIR2 + f[2]*b.SWIR2,
		}
		gg, ss, bb := u.Fractions(mix.NDVI(), mix.NDTI())
		if math.Abs(gg-f[0]) > 1e-9 || math.Abs(ss-f[1]) > 1e-9 || math.Abs(bb-f[2]) > 1e-9 {
			t.Errorf("Fractions(mix %v) = %.6f %.6f %.6f", f, gg, ss, bb)
		}
	}
}

func TestNewRejectsBadEndmembers(t *testing.T) {
	t.Parallel()
	a := Endmember{NDVI: 0.8, NDTI: 0.3, VNIR: 0.5, SWIR: 0.3}
	b := Endmember{NDVI: 0.2, NDTI: 0.2, VNIR: 0.4, SWIR: 0.6}
	for name, c := range map[string]Endmember{
		"collinear": {NDVI: 0.5, NDTI: 0.25, VNIR: 0.4, SWIR: 0.5},
		"dark":      {NDVI: 0.1, NDTI: 0.05, VNIR: 0, SWIR: 0.5},
		"nan index": {NDVI: math.NaN(), NDTI: 0.05, VNIR: 0.3, SWIR: 0.5},
	} {
		if _, ok := New(a, b, c); ok {
			t.Errorf("%s third endmember accepted", name)
		}
	}
}

// mixIndices is the forward model of Unmixer: the NDVI and NDTI of a pixel
// covered by fractions f of the endmembers (reflectances mixed linearly).
func mixIndices(em [3]Endmember, f [3]float64) (ndvi, ndti float64) {
	var vd, vs, td, ts float64
	for i, e := range em {
		vs += f[i] * e.VNIR
		vd += f[i] * e.VNIR * e.NDVI
		ts += f[i] * e.SWIR
		td += f[i] * e.SWIR * e.NDTI
	}
	return vd / vs, td / ts
}

// At fixed NDTI (0.08–0.22), New's straw fraction moves with NDVI by ≈
// −1.1 to −1.7 per unit NDVI (a dry surface's NDVI read as green canopy); NewDry's does
// not move below the dry line, where it is the two-member straw/soil
// mixture of the NDTI alone.
func TestNewDryDryNDVIVariation(t *testing.T) {
	t.Parallel()
	u, _ := New(Green, Straw, Soil)
	v, ok := NewDry(Green, Straw, Soil)
	if !ok {
		t.Fatal("NewDry rejected the reference set")
	}
	d := v.DryNDVI()
	if !(d > Straw.NDVI && d < Straw.NDVI+0.05) || !math.IsNaN(u.DryNDVI()) {
		t.Fatalf("DryNDVI = %v (New: %v), want just above the straw's %.3f", d, u.DryNDVI(), Straw.NDVI)
	}
	for _, n := range []float64{0.08, 0.15, 0.22} {
		_, s1, _ := u.Fractions(0.15, n)
		_, s2, _ := u.Fractions(0.25, n)
		if slope := (s2 - s1) / 0.1; !(slope < -1 && slope > -1.8) {
			t.Errorf("New: straw moves %.2f per unit NDVI at NDTI %.2f, want ≈ −1.1 to −1.7", slope, n)
		}
		// The two-member mixture: NDTI n of straw share s with SWIR weights.
		ws, wb := Straw.SWIR, Soil.SWIR
		want := wb * (n - Soil.NDTI) / (ws*(Straw.NDTI-n) + wb*(n-Soil.NDTI))
		for _, ndvi := range []float64{0.05, 0.12, 0.2, d - 1e-9, d} {
			g, s, b := v.Fractions(ndvi, n)
			if g != 0 && ndvi < d || math.Abs(g) > 1e-9 || math.Abs(s-want) > 1e-9 || math.Abs(g+s+b-1) > 1e-12 {
				t.Errorf("NewDry.Fractions(%.3f, %.2f) = %.6f %.6f %.6f, want 0 %.6f", ndvi, n, g, s, b, want)
			}
		}
		// Continuous across D, and green above it.
		g, s, _ := v.Fractions(d+1e-6, n)
		if math.Abs(s-want) > 1e-4 || !(g > 0 && g < 1e-4) {
			t.Errorf("NewDry.Fractions just above D = %.6f %.6f, want ≈ 0 %.6f", g, s, want)
		}
	}
}

// NewDry recovers exactly any straw/soil mixture whatever their NDVIs, and
// any mixture of green canopy with straw and soil that lie on its dry line.
func TestNewDryRecoversMixtures(t *testing.T) {
	t.Parallel()
	v, _ := NewDry(Green, Straw, Soil)
	fs := [][3]float64{{0, 1, 0}, {0, 0, 1}, {0, 0.3, 0.7}, {0, 0.85, 0.15}}
	for _, f := range fs {
		for _, dv := range [][2]float64{{-0.08, -0.1}, {0, 0}, {0.02, 0.05}, {-0.15, 0.06}} { // straw's and soil's NDVI moved, below D
			st, so := Straw, Soil
			st.NDVI += dv[0]
			so.NDVI += dv[1]
			ndvi, ndti := mixIndices([3]Endmember{Green, st, so}, f)
			g, s, b := v.Fractions(ndvi, ndti)
			if math.Abs(g-f[0]) > 1e-9 || math.Abs(s-f[1]) > 1e-9 || math.Abs(b-f[2]) > 1e-9 {
				t.Errorf("dry mixture %v (NDVI shifts %+.2f) = %.6f %.6f %.6f", f, dv, g, s, b)
			}
		}
	}
	st, so := Straw, Soil
	st.NDVI, so.NDVI = v.DryNDVI(), v.DryNDVI()
	for _, f := range [][3]float64{{1, 0, 0}, {0.1, 0.45, 0.45}, {0.2, 0.5, 0.3}, {0.6, 0.1, 0.3}} {
		ndvi, ndti := mixIndices([3]Endmember{Green, st, so}, f)
		g, s, b := v.Fractions(ndvi, ndti)
		if math.Abs(g-f[0]) > 1e-9 || math.Abs(s-f[1]) > 1e-9 || math.Abs(b-f[2]) > 1e-9 {
			t.Errorf("mixture %v on the dry line = %.6f %.6f %.6f", f, g, s, b)
		}
	}
	// The price (NewDry's doc): green over the reference straw and soil,
	// darker in NDVI than D, reads as less green and more straw.
	ndvi, ndti := mixIndices([3]Endmember{Green, Straw, Soil}, [3]float64{0.1, 0.45, 0.45})
	if g, s, _ := v.Fractions(ndvi, ndti); !(g < 0.1 && s > 0.45) {
		t.Errorf("weeds over the reference straw and soil = green %.3f straw %.3f, want < 0.1 and > 0.45", g, s)
	}
}

// D sits one reading's NDVI noise above the straw: pure-straw readings with
// 0.006 reflectance noise per band read some green about one time in six
// (one σ), not one in two as on the straw's own NDVI.
func TestNewDryNoiseMargin(t *testing.T) {
	t.Parallel()
	v, _ := NewDry(Green, Straw, Soil)
	rng := rand.New(rand.NewPCG(17, 1))
	n, green := 20000, 0
	for range n {
		r := StrawSpectrum
		r.Red += 0.006 * rng.NormFloat64()
		r.NIR += 0.006 * rng.NormFloat64()
		e := r.Endmember()
		if g, _, _ := v.Fractions(e.NDVI, Straw.NDTI); g > 0 {
			green++
		}
	}
	if p := float64(green) / float64(n); math.Abs(p-0.1587) > 0.01 {
		t.Errorf("pure straw read with green in %.3f of readings, want ≈ 0.159 (one σ)", p)
	}
}

func TestNewDryRejects(t *testing.T) {
	t.Parallel()
	so := Soil
	so.NDTI = Straw.NDTI
	if _, ok := NewDry(Green, Straw, so); ok {
		t.Error("straw and soil of one NDTI accepted")
	}
	gr := Green
	gr.NDVI = 0.2 + 0.0216
	if _, ok := NewDry(gr, Straw, Soil); ok {
		t.Error("green on the dry line accepted")
	}
	if _, ok := NewDry(Green, Straw, Endmember{NDVI: 0.1, NDTI: 0.05, VNIR: 0, SWIR: 0.5}); ok {
		t.Error("dark soil accepted")
	}
}

// NewDryAt raises the dry line to at least d and never lowers it below
// NewDry's; below the raised line a bright dry residue (NDVI 0.30) reads
// no green, and its straw is the two-member reading of its NDTI.
func TestNewDryAt(t *testing.T) {
	t.Parallel()
	base, _ := NewDry(Green, Straw, Soil)
	low, ok1 := NewDryAt(Green, Straw, Soil, 0.1)
	high, ok2 := NewDryAt(Green, Straw, Soil, 0.35)
	if !ok1 || !ok2 || low.DryNDVI() != base.DryNDVI() || high.DryNDVI() != 0.35 {
		t.Fatalf("dry lines: NewDry %.3f, at 0.1 %.3f (%v), at 0.35 %.3f (%v)", base.DryNDVI(), low.DryNDVI(), ok1, high.DryNDVI(), ok2)
	}
	g, s, _ := high.Fractions(0.30, 0.15)
	g0, s0, _ := base.Fractions(0.22, 0.15) // below NewDry's line: NDTI alone
	if g != 0 || math.Abs(s-s0) > 1e-12 || g0 != 0 {
		t.Errorf("NDVI 0.30 under the line at 0.35: green %.4f straw %.4f, want 0 and %.4f", g, s, s0)
	}
	if g, _, _ := base.Fractions(0.30, 0.15); !(g > 0) {
		t.Errorf("NDVI 0.30 above NewDry's line: green %.4f, want > 0", g)
	}
}
