package slope

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/manejo/manejo/internal/testkit"
	"github.com/paulmach/orb"
	"github.com/paulmach/orb/planar"
)

// near reports whether got is within tol of want.
// plane returns a width×height DEM z = gx·x + gy·y (metres) on a grid of
// dx × dy metre pixels, x east and y north, row 0 at the north.
func plane(width, height int, dx, dy, gx, gy float64) []float32 {
	z := make([]float32, width*height)
	for r := range height {
		for c := range width {
			x := (float64(c) + 0.5) * dx
			y := -(float64(r) + 0.5) * dy
			z[r*width+c] = float32(500 + gx*x + gy*y)
		}
	}
	return z
}

func TestHorn(t *testing.T) {
	nan := float32(math.NaN())
	tests := []struct {
		name   string
		dem    []float32
		w, h   int
		dx, dy []float64
		want   float64 // percent at every interior valid pixel
	}{
		{"flat", plane(5, 4, 30, 30, 0, 0), 5, 4, []float64{30}, []float64{30}, 0},
		{"east 3%", plane(6, 5, 30, 30, 0.03, 0), 6, 5, []float64{30}, []float64{30}, 3},
		{"north 5% rectangular pixels", plane(6, 5, 25, 31, 0, 0.05), 6, 5, []float64{25}, []float64{31}, 5},
		{"oblique 3-4-5", plane(7, 7, 30, 30, 0.06, 0.08), 7, 7, []float64{30}, []float64{30}, 10},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Horn(tc.dem, tc.w, tc.h, tc.dx, tc.dy)
			if err != nil {
				t.Fatalf("Horn: %v", err)
			}
			for r := range tc.h {
				for c := range tc.w {
					v := float64(got[r*tc.w+c])
					edge := r == 0 || c == 0 || r == tc.h-1 || c == tc.w-1
					if edge {
						if !math.IsNaN(v) {
							t.Errorf("Horn(%s)[%d,%d] = %v, want NaN at the edge", tc.name, r, c, v)
						}
						continue
					}
					if !testkit.Near(v, tc.want, 1e-4) {
						t.Errorf("Horn(%s)[%d,%d] = %v, want %v", tc.name, r, c, v, tc.want)
					}
				}
			}
		})
	}
	t.Run("per-row dx", func(t *testing.T) {
		// z = 0.04·x with x measured from the middle column, each row with its
		// own pixel width, as on a geographic grid where meridians converge.
		// Along a column z then changes from row to row by 0.04·(c−2.5)·Δdx,
		// a genuine north–south component: slope = 4·hypot(1, (c−2.5)·Δdx/dy).
		dxs := []float64{20, 21, 22, 23, 24}
		const w, h, dy = 6, 5, 30.0
		z := make([]float32, w*h)
		for r, dx := range dxs {
			for c := range w {
				z[r*w+c] = float32(0.04 * (float64(c) - 2.5) * dx)
			}
		}
		got, err := Horn(z, w, h, dxs, []float64{dy})
		if err != nil {
			t.Fatal(err)
		}
		for r := 1; r < h-1; r++ {
			for c := 1; c < w-1; c++ {
				want := 4 * math.Hypot(1, (float64(c)-2.5)*1/dy)
				if v := float64(got[r*w+c]); !testkit.Near(v, want, 1e-4) {
					t.Errorf("Horn(per-row dx)[%d,%d] = %v, want %v", r, c, v, want)
				}
			}
		}
	})
	t.Run("void propagates to its 3x3 neighbours", func(t *testing.T) {
		dem := plane(7, 7, 30, 30, 0.03, 0)
		dem[3*7+3] = nan
		got, err := Horn(dem, 7, 7, []float64{30}, []float64{30})
		if err != nil {
			t.Fatal(err)
		}
		for r := 1; r < 6; r++ {
			for c := 1; c < 6; c++ {
				v := got[r*7+c]
				inside := r >= 2 && r <= 4 && c >= 2 && c <= 4
				if inside != math.IsNaN(float64(v)) {
					t.Errorf("Horn[%d,%d] = %v, want NaN=%t", r, c, v, inside)
				}
			}
		}
	})
	t.Run("bad input", func(t *testing.T) {
		for _, tc := range []struct {
			name   string
			dem    []float32
			dx, dy []float64
		}{
			{"size", make([]float32, 5), []float64{30}, []float64{30}},
			{"zero dx", make([]float32, 9), []float64{0}, []float64{30}},
			{"dy count", make([]float32, 9), []float64{30}, []float64{30, 30}},
		} {
			if _, err := Horn(tc.dem, 3, 3, tc.dx, tc.dy); !errors.Is(err, ErrBadInput) {
				t.Errorf("Horn(%s) error = %v, want ErrBadInput", tc.name, err)
			}
		}
	})
}

func TestPixelSizeM(t *testing.T) {
	const arcsec = 1.0 / 3600
	// Reference radii of WGS84: M(0) = a(1−e²) = 6335439.327 m, N(0) = a;
	// at 45°: M = 6367381.816 m, N = 6388838.290 m.
	tests := []struct {
		name           string
		lat            float64
		wantDX, wantDY float64
	}{
		{"equator", 0, 6378137 * arcsec * math.Pi / 180, 6335439.327 * arcsec * math.Pi / 180},
		{"45S", -45, 6388838.290 * math.Cos(math.Pi/4) * arcsec * math.Pi / 180, 6367381.816 * arcsec * math.Pi / 180},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dx, dy := PixelSizeM(tc.lat, arcsec, -arcsec, WGS84)
			if !testkit.Near(dx, tc.wantDX, 1e-6) || !testkit.Near(dy, tc.wantDY, 1e-6) {
				t.Errorf("PixelSizeM(%v, 1″) = %.6f × %.6f m, want %.6f × %.6f", tc.lat, dx, dy, tc.wantDX, tc.wantDY)
			}
		})
	}
	// 1″ at the equator is 30.92 × 30.72 m: the figures quoted in the docs.
	dx, dy := PixelSizeM(0, arcsec, arcsec, WGS84)
	if !testkit.Near(dx, 30.92, 0.005) || !testkit.Near(dy, 30.72, 0.005) {
		t.Errorf("PixelSizeM(0, 1″) = %.3f × %.3f, want 30.92 × 30.72", dx, dy)
	}
}

func TestRasterize(t *testing.T) {
	// A 10×10 grid of unit pixels, origin (0,10), north-up.
	gt := [6]float64{0, 1, 0, 10, 0, -1}
	square := orb.MultiPolygon{{{{2, 2}, {6, 2}, {6, 6}, {2, 6}, {2, 2}}}}
	withHole := orb.MultiPolygon{{
		{{1, 1}, {9, 1}, {9, 9}, {1, 9}, {1, 1}},
		{{4, 4}, {6, 4}, {6, 6}, {4, 6}, {4, 4}},
	}}
	tests := []struct {
		name string
		mp   orb.MultiPolygon
		want int
	}{
		{"square 4x4", square, 16},
		{"hole", withHole, 64 - 4},
		{"two members", append(square, orb.Polygon{{{7, 7}, {9, 7}, {9, 9}, {7, 9}, {7, 7}}}), 16 + 4},
		{"between centres", orb.MultiPolygon{{{{2.6, 2.6}, {3.4, 2.6}, {3.4, 3.4}, {2.6, 3.4}, {2.6, 2.6}}}}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Rasterize(tc.mp, gt, 10, 10)
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, v := range m {
				if v {
					n++
				}
			}
			if n != tc.want {
				t.Errorf("Rasterize(%s) = %d pixels, want %d", tc.name, n, tc.want)
			}
		})
	}
	t.Run("agrees with point in polygon", func(t *testing.T) {
		rng := rand.New(rand.NewPCG(1, 2))
		for k := range 50 {
			// A random star-shaped polygon around (50, 50) on a 100×100 grid.
			var ring orb.Ring
			n := 5 + rng.IntN(20)
			for i := range n {
				a := 2 * math.Pi * float64(i) / float64(n)
				rad := 10 + 35*rng.Float64()
				ring = append(ring, orb.Point{50.3 + rad*math.Cos(a), 49.7 + rad*math.Sin(a)})
			}
			ring = append(ring, ring[0])
			mp := orb.MultiPolygon{{ring}}
			g := [6]float64{0, 1, 0, 100, 0, -1}
			m, err := Rasterize(mp, g, 100, 100)
			if err != nil {
				t.Fatal(err)
			}
			for r := range 100 {
				for c := range 100 {
					p := orb.Point{float64(c) + 0.5, 100 - float64(r) - 0.5}
					if m[r*100+c] != planar.MultiPolygonContains(mp, p) {
						t.Fatalf("polygon %d: Rasterize at %v = %t, planar says %t", k, p, m[r*100+c], !m[r*100+c])
					}
				}
			}
		}
	})
	if _, err := Rasterize(square, [6]float64{0, 1, 0.1, 10, 0, -1}, 10, 10); !errors.Is(err, ErrBadInput) {
		t.Errorf("Rasterize(rotated) error = %v, want ErrBadInput", err)
	}
}

func TestSummarize(t *testing.T) {
	nan := float32(math.NaN())
	vals := []float32{1, 2, 3, 4, nan, 100, 5}
	mask := []bool{true, true, true, true, true, false, true}
	st, err := Summarize(vals, mask)
	if err != nil {
		t.Fatal(err)
	}
	// Valid in mask: 1 2 3 4 5 → mean 3, median 3, p90 = 4 + 0.6·1 = 4.6.
	if !testkit.Near(st.MeanPct, 3, 1e-12) || !testkit.Near(st.MedianPct, 3, 1e-12) || !testkit.Near(st.P90Pct, 4.6, 1e-12) {
		t.Errorf("Summarize = mean %v median %v p90 %v, want 3 3 4.6", st.MeanPct, st.MedianPct, st.P90Pct)
	}
	if st.NPixels != 6 || st.NVoid != 1 || !testkit.Near(st.VoidFraction, 1.0/6, 1e-12) {
		t.Errorf("Summarize counts = %d px, %d void, %v, want 6, 1, 1/6", st.NPixels, st.NVoid, st.VoidFraction)
	}
	if _, err := Summarize([]float32{nan, nan}, []bool{true, true}); !errors.Is(err, ErrAllVoid) {
		t.Errorf("Summarize(all void) error = %v, want ErrAllVoid", err)
	}
	if _, err := Summarize([]float32{1}, []bool{false}); !errors.Is(err, ErrBadInput) {
		t.Errorf("Summarize(empty mask) error = %v, want ErrBadInput", err)
	}
}

// TestNewResult checks IN SPA/MAPA 2/2025 item 3.2.1 I: "para áreas com
// declividade ≥ 3%, é obrigatória a semeadura em contorno ou semeadura em
// nível" — on the unrounded mean — and the integer declividadeMedia.
func TestNewResult(t *testing.T) {
	tests := []struct {
		mean        float64
		wantContour bool
		wantDecl    int
		wantCross   bool
	}{
		{0.4, false, 0, false},
		{2.49, false, 2, false},
		{2.5, false, 3, true},
		{2.999, false, 3, true},
		{3.0, true, 3, false},
		{3.49, true, 3, false},
		{3.5, true, 4, false},
		{12.7, true, 13, false},
	}
	for _, tc := range tests {
		r := NewResult("t1", Stats{MeanPct: tc.mean, NPixels: 10})
		if r.ContourRequired != tc.wantContour || r.DeclividadeMedia != tc.wantDecl || r.RoundingCrosses3 != tc.wantCross {
			t.Errorf("NewResult(%v) = contour %t, declividade %d, crosses %t; want %t, %d, %t",
				tc.mean, r.ContourRequired, r.DeclividadeMedia, r.RoundingCrosses3, tc.wantContour, tc.wantDecl, tc.wantCross)
		}
		if tc.wantCross != (len(r.Warnings) == 1) {
			t.Errorf("NewResult(%v) warnings = %q, want one only when rounding crosses 3%%", tc.mean, r.Warnings)
		}
	}
}

// TestCheckResolution checks IN 6.3: "produtos com resolução espacial mínima
// de 30 metros, tais como NASADEM": 1″ accepted, 3″ refused.
func TestCheckResolution(t *testing.T) {
	tests := []struct {
		name       string
		x, y       float64
		geographic bool
		ok         bool
	}{
		{"NASADEM 1″", 1.0 / 3600, -1.0 / 3600, true, true},
		{"1″ rounded to 6 decimals", 0.000278, -0.000278, true, true},
		{"2″", 2.0 / 3600, -2.0 / 3600, true, false},
		{"HydroSHEDS 3″", 0.000833333333333, -0.000833333333333, true, false},
		{"1″ E-W, 3″ N-S", 1.0 / 3600, -3.0 / 3600, true, false},
		{"UTM 30 m", 30, -30, false, true},
		{"1″ reprojected 30.92 m", 30.92, -30.92, false, true},
		{"31.5 m", 31.5, -31.5, false, false},
		{"SRTM 90 m", 90, -90, false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckResolution(tc.x, tc.y, tc.geographic)
			if tc.ok != (err == nil) || (err != nil && !errors.Is(err, ErrTooCoarse)) {
				t.Errorf("CheckResolution(%v, %v, %t) = %v, want ok=%t", tc.x, tc.y, tc.geographic, err, tc.ok)
			}
		})
	}
}

// FuzzRasterize checks the scan-line mask against point-in-polygon for
// arbitrary triangles and quadrilaterals on a 32×32 grid.
func FuzzRasterize(f *testing.F) {
	f.Add(1.0, 1.0, 30.0, 2.0, 15.0, 31.0, 2.0, 20.0)
	f.Add(0.5, 0.5, 0.5, 31.5, 31.5, 31.5, 31.5, 0.5)
	f.Add(3.0, 3.0, 29.0, 29.0, 3.0, 29.0, 29.0, 3.0) // bow tie
	f.Fuzz(func(t *testing.T, x1, y1, x2, y2, x3, y3, x4, y4 float64) {
		for _, v := range []float64{x1, y1, x2, y2, x3, y3, x4, y4} {
			if math.IsNaN(v) || math.IsInf(v, 0) || math.Abs(v) > 1e6 {
				return
			}
		}
		ring := orb.Ring{{x1, y1}, {x2, y2}, {x3, y3}, {x4, y4}, {x1, y1}}
		mp := orb.MultiPolygon{{ring}}
		gt := [6]float64{0, 1, 0, 32, 0, -1}
		m, err := Rasterize(mp, gt, 32, 32)
		if err != nil {
			t.Fatal(err)
		}
		for r := range 32 {
			for c := range 32 {
				p := orb.Point{float64(c) + 0.5, 32 - float64(r) - 0.5}
				if onBoundary(ring, p) {
					continue // the half-open rule and planar may differ on an edge
				}
				if m[r*32+c] != planar.RingContains(ring, p) {
					t.Fatalf("Rasterize(%v) at %v = %t, planar.RingContains %t", ring, p, m[r*32+c], !m[r*32+c])
				}
			}
		}
	})
}

// onBoundary reports whether p lies on (or within 1e-9 of) an edge of ring.
func onBoundary(ring orb.Ring, p orb.Point) bool {
	for i := 0; i+1 < len(ring); i++ {
		a, b := ring[i], ring[i+1]
		cross := (b[0]-a[0])*(p[1]-a[1]) - (b[1]-a[1])*(p[0]-a[0])
		l := math.Hypot(b[0]-a[0], b[1]-a[1])
		if math.Abs(cross) <= 1e-9*max(l, 1) &&
			p[0] >= math.Min(a[0], b[0])-1e-9 && p[0] <= math.Max(a[0], b[0])+1e-9 &&
			p[1] >= math.Min(a[1], b[1])-1e-9 && p[1] <= math.Max(a[1], b[1])+1e-9 {
			return true
		}
	}
	return false
}
