package grid

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/airbusgeo/godal"
	"github.com/manejo/manejo/internal/testkit"
	"github.com/paulmach/orb"
	"github.com/paulmach/orb/encoding/wkb"
)

// oracle checks a grid with GDAL/PROJ/GEOS only, independently of the pure
// Go projections and planar tests used by Build: geometry in an azimuthal
// equidistant plane centred on the talhão (PROJ), containment and buffers
// by GEOS, MODIS pixels from PROJ's sinusoidal projection.
type oracle struct {
	tb        testing.TB
	wgs, aeqd *godal.SpatialRef
	sinu      *godal.SpatialRef
	toA, toS  *godal.Transform
	fromS     *godal.Transform
	field     *godal.Geometry // talhão in the aeqd plane
}

func newOracle(tb testing.TB, mp orb.MultiPolygon) *oracle {
	tb.Helper()
	c := mp.Bound().Center()
	o := &oracle{tb: tb}
	var err error
	if o.wgs, err = godal.NewSpatialRefFromEPSG(4326); err != nil {
		tb.Fatal(err)
	}
	if o.aeqd, err = godal.NewSpatialRefFromProj4(fmt.Sprintf("+proj=aeqd +lat_0=%.9f +lon_0=%.9f +ellps=WGS84 +units=m +no_defs", c[1], c[0])); err != nil {
		tb.Fatal(err)
	}
	if o.sinu, err = godal.NewSpatialRefFromProj4("+proj=sinu +lon_0=0 +x_0=0 +y_0=0 +R=6371007.181 +units=m +no_defs"); err != nil {
		tb.Fatal(err)
	}
	if o.toA, err = godal.NewTransform(o.wgs, o.aeqd); err != nil {
		tb.Fatal(err)
	}
	if o.toS, err = godal.NewTransform(o.wgs, o.sinu); err != nil {
		tb.Fatal(err)
	}
	if o.fromS, err = godal.NewTransform(o.sinu, o.aeqd); err != nil {
		tb.Fatal(err)
	}
	o.field = o.geom(mp, o.toA)
	return o
}

func (o *oracle) close() {
	o.field.Close()
	o.toA.Close()
	o.toS.Close()
	o.fromS.Close()
	o.aeqd.Close()
	o.sinu.Close()
	o.wgs.Close()
}

// geom loads g into OGR and transforms it with t.
func (o *oracle) geom(g orb.Geometry, t *godal.Transform) *godal.Geometry {
	b, err := wkb.Marshal(g)
	if err != nil {
		o.tb.Fatal(err)
	}
	og, err := godal.NewGeometryFromWKB(b, nil)
	if err != nil {
		o.tb.Fatal(err)
	}
	if t != nil {
		if err := og.Transform(t); err != nil {
			o.tb.Fatal(err)
		}
	}
	return og
}

// centreOK reports whether p is inside the talhão and, with bufM > 0, at
// least bufM metres (less 1 cm for the 64-gon) from its boundary.
func (o *oracle) centreOK(p orb.Point, bufM float64) bool {
	pg := o.geom(p, o.toA)
	defer pg.Close()
	if bufM <= 0 {
		return o.field.Contains(pg)
	}
	disc, err := pg.Buffer(bufM-0.01, 64)
	if err != nil {
		o.tb.Fatal(err)
	}
	defer disc.Close()
	return o.field.Contains(disc)
}

// modis reports whether the MODIS 250 m pixel holding p lies inside the
// talhão.
func (o *oracle) modis(p orb.Point) bool {
	x, y := []float64{p[0]}, []float64{p[1]}
	if err := o.toS.TransformEx(x, y, nil, nil); err != nil {
		o.tb.Fatal(err)
	}
	col := math.Floor((x[0] - modisX0) / modisPixelM)
	row := math.Floor((modisY0 - y[0]) / modisPixelM)
	x0, y1 := modisX0+col*modisPixelM, modisY0-row*modisPixelM
	var r orb.Ring
	const k = 8
	for i := 0; i < 4*k; i++ {
		t := float64(i%k) / k
		switch i / k {
		case 0:
			r = append(r, orb.Point{x0 + t*modisPixelM, y1 - modisPixelM})
		case 1:
			r = append(r, orb.Point{x0 + modisPixelM, y1 - modisPixelM + t*modisPixelM})
		case 2:
			r = append(r, orb.Point{x0 + modisPixelM - t*modisPixelM, y1})
		case 3:
			r = append(r, orb.Point{x0, y1 - t*modisPixelM})
		}
	}
	r = append(r, r[0])
	pg := o.geom(orb.Polygon{r}, o.fromS)
	defer pg.Close()
	return o.field.Contains(pg)
}

// checkGrid asserts the invariants of IN 6.2 and 6.4 I on g, built from mp.
// Fallback expectations for checkGrid.
const (
	noFallback = iota
	wantFallback
	anyFallback
)

func checkGrid(t *testing.T, g Grid, mp orb.MultiPolygon, bufM float64, fallback int) {
	t.Helper()
	ref := refAreaHa(mp)
	if rel := math.Abs(g.AreaHa-ref) / ref; rel > 1e-4 {
		t.Errorf("AreaHa = %.6f, PROJ geodesic %.6f (rel %.2g > 0.01 %%)", g.AreaHa, ref, rel)
	}
	wantCell := 1.0
	if ref >= 100 {
		wantCell = 5
	}
	if g.CellSizeHa != wantCell {
		t.Errorf("CellSizeHa = %g for %.4f ha, want %g (smallest legal)", g.CellSizeHa, ref, wantCell)
	}
	if lo, hi := CellSizeRange(ref); g.CellSizeHa < lo || g.CellSizeHa > hi {
		t.Errorf("CellSizeHa = %g outside %g–%g", g.CellSizeHa, lo, hi)
	}
	if len(g.Cells) == 0 {
		t.Fatalf("no cells")
	}
	if got := len(g.Flags) > 0 && g.Flags[0] == FlagFallbackCentre; fallback != anyFallback && got != (fallback == wantFallback) {
		t.Errorf("fallback flag = %v, want %v (flags %v)", got, fallback == wantFallback, g.Flags)
	}
	o := newOracle(t, mp)
	defer o.close()
	ids := map[string]bool{}
	var sum float64
	modisN, badCentres := 0, 0
	for _, c := range g.Cells {
		if ids[c.ID] {
			t.Errorf("cell id %s twice", c.ID)
		}
		ids[c.ID] = true
		if c.ID != fmt.Sprintf("r%03dc%03d", c.Row, c.Col) {
			t.Errorf("cell id %s for row %d col %d", c.ID, c.Row, c.Col)
		}
		sum += c.AreaHa
		buf := bufM
		if c.Fallback {
			buf = 0
		}
		if !o.centreOK(c.Centre, buf) {
			badCentres++
			if badCentres < 4 {
				t.Errorf("cell %s centre %v not inside the talhão %g m off its border", c.ID, c.Centre, buf)
			}
		}
		if c.Fallback {
			continue
		}
		if c.AreaHa > g.CellSizeHa*(1+2e-4) {
			t.Errorf("cell %s area %.6f ha > nominal %g", c.ID, c.AreaHa, g.CellSizeHa)
		}
		if !c.Border && !testkit.Near(c.AreaHa, g.CellSizeHa, 2e-4*g.CellSizeHa) {
			t.Errorf("inner cell %s area %.6f ha, want %g ± 0.02 %%", c.ID, c.AreaHa, g.CellSizeHa)
		}
		if c.AreaHa < g.CellSizeHa*(1-1e-3) && !c.Border {
			t.Errorf("cell %s cut (%.4f ha) but not Border", c.ID, c.AreaHa)
		}
		if g.AreaHa > 100 {
			if want := o.modis(c.Centre); c.MODIS != want {
				t.Errorf("cell %s MODIS = %v, PROJ/GEOS oracle %v", c.ID, c.MODIS, want)
			}
		}
		if c.MODIS {
			modisN++
		}
	}
	if sum > g.AreaHa*(1+1e-6) {
		t.Errorf("cells cover %.4f ha > talhão %.4f ha", sum, g.AreaHa)
	}
	// IN 6.4 I: over 100 ha, one MODIS-eligible point per 10 ha.
	if g.MODISPoints != modisN {
		t.Errorf("MODISPoints = %d, cells with MODIS %d", g.MODISPoints, modisN)
	}
	wantElig := ref > 100 && float64(modisN) >= math.Ceil(ref/10)
	if g.MODISEligible != wantElig {
		t.Errorf("MODISEligible = %v with %d points for %.3f ha, want %v", g.MODISEligible, modisN, ref, wantElig)
	}
	if g.MODISEligible != (g.MODISReason == "") {
		t.Errorf("MODISEligible %v but reason %q", g.MODISEligible, g.MODISReason)
	}
}

func TestBuild(t *testing.T) {
	const lon, lat = -55.6, -11.8 // Sinop-MT
	type tc struct {
		name     string
		mp       orb.MultiPolygon
		epsg     int
		fallback int
	}
	var cases []tc
	for _, ha := range []float64{0.5, 1, 50, 99.9, 100, 100.1, 1000, 5000} {
		fb := noFallback
		switch {
		case ha < 1: // no 70 m × 70 m core for a centre 15 m off the border
			fb = wantFallback
		case ha == 1: // depends on where the grid falls
			fb = anyFallback
		}
		cases = append(cases,
			tc{fmt.Sprintf("square-%gha", ha), square(lon, lat, ha), 32721, fb},
			tc{fmt.Sprintf("L-%gha", ha), lShape(lon, lat, ha), 32721, fb})
	}
	mx, my := metresPerDeg(lat)
	hole := square(lon, lat, 250)
	h := rectRing(lon+400/mx, lat+500/my, 600, 500) // 30 ha reserve
	h.Reverse()
	hole[0] = append(hole[0], h)
	multi := append(square(lon, lat, 30), square(lon+900/mx, lat, 70.5)[0])
	sliver := orb.MultiPolygon{{rectRing(lon, lat, 2000, 20)}}
	diag := orb.MultiPolygon{{{{lon, lat}, {lon + 3000/mx, lat + 2900/my}, {lon + 2990/mx, lat + 2915/my}, {lon, lat}}}} // thin diagonal triangle
	cases = append(cases,
		tc{"hole-250ha", hole, 32721, noFallback},
		tc{"multipolygon-30+70.5ha", multi, 32721, noFallback},
		tc{"sliver-2000x20m", sliver, 32721, wantFallback},
		tc{"thin-diagonal", diag, 32721, wantFallback},
		// 1000 ha straddling the 54°W zone boundary: centroid in zone 21.
		tc{"zone-boundary-west", square(-54.0-1800/mx, lat, 1000), 32721, noFallback},
		// ... and in zone 22 when the centroid is east of it.
		tc{"zone-boundary-east", square(-54.0-1400/mx, lat, 1000), 32722, noFallback},
		tc{"rio-grande-do-sul-L-300ha", lShape(-53.5, -29.2, 300), 32722, noFallback},
		tc{"roraima-north-120ha", square(-60.7, 2.8, 120), 32620, noFallback},
	)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := Field{ID: c.name, Geometry: c.mp}
			g := mustBuild(t, f, Options{})
			if g.EPSG != c.epsg {
				t.Errorf("EPSG = %d, want %d", g.EPSG, c.epsg)
			}
			checkGrid(t, g, c.mp, DefaultEdgeBufferM, c.fallback)
			again := mustBuild(t, f, Options{})
			if !reflect.DeepEqual(g, again) {
				t.Errorf("Build is not deterministic")
			}
		})
	}
}

// TestBuildCellSizes grids one talhão of each class at every legal size
// and checks the buffer with a wider --edge-buffer-m.
func TestBuildCellSizes(t *testing.T) {
	for _, c := range []struct {
		ha, cell, buf float64
	}{{60, 1, 15}, {60, 2.5, 15}, {60, 5, 40}, {400, 5, 15}, {400, 7.5, 60}, {400, 10, 15}} {
		t.Run(fmt.Sprintf("%gha-%gha-cells-%gm", c.ha, c.cell, c.buf), func(t *testing.T) {
			mp := lShape(-55.6, -11.8, c.ha)
			g := mustBuild(t, Field{ID: "x", Geometry: mp}, Options{CellHa: c.cell, EdgeBufferM: c.buf})
			if g.CellSizeHa != c.cell || !testkit.Near(g.CellSizeM, math.Sqrt(c.cell*1e4), 1e-12*g.CellSizeM) {
				t.Errorf("CellSizeHa, CellSizeM = %g, %g, want %g, %g", g.CellSizeHa, g.CellSizeM, c.cell, math.Sqrt(c.cell*1e4))
			}
			o := newOracle(t, mp)
			defer o.close()
			for _, cell := range g.Cells {
				if !o.centreOK(cell.Centre, c.buf) {
					t.Errorf("cell %s centre closer than %g m to the border", cell.ID, c.buf)
				}
			}
		})
	}
}

func TestCellSize(t *testing.T) {
	for _, c := range []struct {
		area, want, got float64
		err             bool
	}{
		{0.5, 0, 1, false},
		{99.9, 0, 1, false},
		{99.99999, 5, 5, false},
		{100, 0, 5, false}, // 100 ha exactly: larger class
		{100, 3, 0, true},
		{100, 10, 10, false},
		{50, 5, 5, false},
		{50, 5.01, 0, true},
		{50, 0.99, 0, true},
		{1000, 10.5, 0, true},
		{1000, math.NaN(), 0, true},
	} {
		t.Run(fmt.Sprintf("%g-%g", c.area, c.want), func(t *testing.T) {
			got, err := CellSize(c.area, c.want)
			if c.err {
				if !errors.Is(err, ErrCellSize) {
					t.Errorf("CellSize(%g, %g) error = %v, want ErrCellSize", c.area, c.want, err)
				}
				return
			}
			if err != nil || got != c.got {
				t.Errorf("CellSize(%g, %g) = %g, %v, want %g", c.area, c.want, got, err, c.got)
			}
		})
	}
	if _, err := Build(Field{ID: "nan", Geometry: square(-55.6, -11.8, 30)}, Options{EdgeBufferM: math.NaN()}); err == nil {
		t.Errorf("Build with a NaN buffer succeeded")
	}
	f := Field{ID: "big", Geometry: square(-55.6, -11.8, 300)}
	if _, err := Build(f, Options{CellHa: 2}); !errors.Is(err, ErrCellSize) || !strings.Contains(err.Error(), "big") {
		t.Errorf("Build(300 ha, 2 ha cells) error = %v, want ErrCellSize naming the talhão", err)
	}
}

// TestModisRule builds talhões around the IN 6.4 I thresholds.
func TestModisRule(t *testing.T) {
	// A 99.9 ha talhão is never eligible, whatever its pixels.
	g := mustBuild(t, Field{ID: "a", Geometry: square(-55.6, -11.8, 99.9)}, Options{})
	if g.MODISEligible || g.MODISPoints != 0 || !strings.Contains(g.MODISReason, "not over 100 ha") {
		t.Errorf("99.9 ha: eligible %v points %d reason %q", g.MODISEligible, g.MODISPoints, g.MODISReason)
	}
	// With 10 ha cells no talhão reaches one eligible point per 10 ha
	// (border cells lose their pixels).
	g = mustBuild(t, Field{ID: "b", Geometry: square(-55.6, -11.8, 1000)}, Options{CellHa: 10})
	if g.MODISEligible || !strings.Contains(g.MODISReason, "need 101") {
		t.Errorf("1000 ha in 10 ha cells: eligible %v (%d points), reason %q", g.MODISEligible, g.MODISPoints, g.MODISReason)
	}
	// A 200 m wide strip of 150 ha: no MODIS pixel (231.7 m north-south)
	// fits in it.
	mp := orb.MultiPolygon{{rectRing(-55.6, -11.8, 7500, 200)}}
	g = mustBuild(t, Field{ID: "c", Geometry: mp}, Options{})
	// 150.0005 ha → ceil(15.00005) = 16 points needed
	need := fmt.Sprintf("need %d", int(math.Ceil(refAreaHa(mp)/10)))
	if g.MODISEligible || g.MODISPoints != 0 || !strings.Contains(g.MODISReason, need) {
		t.Errorf("strip 150 ha: eligible %v, %d points, reason %q", g.MODISEligible, g.MODISPoints, g.MODISReason)
	}
	checkGrid(t, g, mp, DefaultEdgeBufferM, anyFallback)
	// A wider strip, 600 m × 2500 m: pixels fit along its middle; the
	// oracle decides each point.
	mp = orb.MultiPolygon{{rectRing(-55.6, -11.8, 2500, 600)}}
	checkGrid(t, mustBuild(t, Field{ID: "d", Geometry: mp}, Options{}), mp, DefaultEdgeBufferM, noFallback)
}

func TestFallbackCentre(t *testing.T) {
	mp := orb.MultiPolygon{{rectRing(-55.6, -11.8, 300, 25)}} // 0.75 ha, 25 m wide
	g := mustBuild(t, Field{ID: "thin", Geometry: mp}, Options{})
	if len(g.Cells) != 1 || !g.Cells[0].Fallback || !g.Cells[0].Border || len(g.Flags) != 1 || g.Flags[0] != FlagFallbackCentre {
		t.Fatalf("cells %+v flags %v, want one fallback cell", g.Cells, g.Flags)
	}
	c := g.Cells[0]
	// the interior point sits on the strip's midline (12.5 m from both sides)
	o := newOracle(t, mp)
	defer o.close()
	if !o.centreOK(c.Centre, 12.4) {
		t.Errorf("fallback centre %v is not on the midline of the strip", c.Centre)
	}
	if !testkit.Near(c.AreaHa, g.AreaHa, 1e-9*g.AreaHa) {
		t.Errorf("fallback cell area %.6f, want the talhão's %.6f", c.AreaHa, g.AreaHa)
	}
}
