package synth

import (
	"fmt"
	"math"
	"path/filepath"

	"github.com/airbusgeo/godal"
)

// The terrain: a flat plateau in the west (1 % towards the east) that
// breaks, between 1.85 and 2.15 km from the scene's west edge, into a valley
// side of 5.2 %, mirrored every 3.84 km so larger scenes stay in range, with
// a gentle ±1.5 m undulation. Local coordinates: metres east (x) and south
// (y) of the scene's north-west corner.
const (
	terrainBase   = 420.0  // elevation at the west edge, metres
	slopeFlat     = 0.010  // plateau gradient
	slopeSteep    = 0.052  // valley-side gradient
	slopeBreakX   = 1850.0 // start of the break, metres from the west edge
	slopeBreakW   = 300.0  // width of the break, metres
	terrainPeriod = 7680.0
	undulAmp      = 1.5
	undulX        = 2300.0
	undulY        = 1900.0
)

// steepInt is ∫ smoothstep((x − a)/w) dx from a, in metres.
func steepInt(x float64) float64 {
	u := (x - slopeBreakX) / slopeBreakW
	switch {
	case u <= 0:
		return 0
	case u >= 1:
		return slopeBreakW * (0.5 + (u - 1))
	}
	return slopeBreakW * (u*u*u - u*u*u*u/2)
}

func fold(x float64) (xf, sign float64) {
	x = math.Mod(x, terrainPeriod)
	if x < 0 {
		x += terrainPeriod
	}
	if x > terrainPeriod/2 {
		return terrainPeriod - x, -1
	}
	return x, 1
}

// elevation returns the terrain height (metres) at local (x, y).
func elevation(x, y float64) float64 {
	xf, _ := fold(x)
	z := terrainBase - slopeFlat*xf - (slopeSteep-slopeFlat)*steepInt(xf)
	return z + undulAmp*math.Sin(2*math.Pi*y/undulY)*math.Cos(2*math.Pi*x/undulX)
}

// gradient returns the slope (rise over run, 0.05 = 5 %) at local (x, y),
// analytically.
func gradient(x, y float64) float64 {
	xf, sign := fold(x)
	u := (xf - slopeBreakX) / slopeBreakW
	s := slopeFlat
	switch {
	case u >= 1:
		s = slopeSteep
	case u > 0:
		s += (slopeSteep - slopeFlat) * smooth(u)
	}
	gx := -sign*s - undulAmp*2*math.Pi/undulX*math.Sin(2*math.Pi*y/undulY)*math.Sin(2*math.Pi*x/undulX)
	gy := undulAmp * 2 * math.Pi / undulY * math.Cos(2*math.Pi*y/undulY) * math.Cos(2*math.Pi*x/undulX)
	return math.Hypot(gx, gy)
}

// meanSlopePct is the analytic mean slope (percent) of a talhão over its
// 10 m pixels: the truth the slope stage should approach.
func (sc *scene) meanSlopePct(f *field) float64 {
	b := bounds(f.ring)
	var sum float64
	n := 0
	for y := math.Floor(b[1]/pixelM)*pixelM + pixelM/2; y < b[3]; y += pixelM {
		for x := math.Floor(b[0]/pixelM)*pixelM + pixelM/2; x < b[2]; x += pixelM {
			if inRing(f.ring, x, y) {
				sum += gradient(x, y)
				n++
			}
		}
	}
	return 100 * sum / float64(n)
}

// demArcSec is the DEM resolution: 1 arc-second, as NASADEM.
const demArcSec = 1.0 / 3600

// writeDEM writes dem.tif: the terrain on a 1 arc-second lon/lat grid
// (EPSG:4326, pixel centres on whole arc-seconds as in NASADEM), covering
// the scene with a 10 arc-second margin, Float32 metres, as a COG.
func (sc *scene) writeDEM() error {
	lo0, la0, lo1, la1 := math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)
	for _, c := range sc.corners {
		lo0, la0 = math.Min(lo0, c[0]), math.Min(la0, c[1])
		lo1, la1 = math.Max(lo1, c[0]), math.Max(la1, c[1])
	}
	west := math.Floor(lo0*3600-10) / 3600
	north := math.Ceil(la1*3600+10) / 3600
	w := int(math.Ceil((lo1*3600+10)-west*3600)) + 1
	h := int(math.Ceil(north*3600-(la0*3600-10))) + 1
	gt := [6]float64{west - demArcSec/2, demArcSec, 0, north + demArcSec/2, 0, -demArcSec}

	pr, err := newProjector(sc.epsg)
	if err != nil {
		return err
	}
	defer pr.close()
	xs, ys := make([]float64, w*h), make([]float64, w*h)
	for i := 0; i < h; i++ {
		for j := 0; j < w; j++ {
			xs[i*w+j] = west + float64(j)*demArcSec
			ys[i*w+j] = north - float64(i)*demArcSec
		}
	}
	if err := pr.fromLL.TransformEx(xs, ys, nil, nil); err != nil {
		return fmt.Errorf("transform DEM grid to UTM: %w", err)
	}
	z := make([]float32, w*h)
	for k := range z {
		z[k] = float32(elevation(xs[k]-sc.x0, sc.y0-ys[k]))
	}
	srs, err := godal.NewSpatialRefFromEPSG(4326)
	if err != nil {
		return fmt.Errorf("open EPSG:4326: %w", err)
	}
	defer srs.Close()
	return writeCOG(filepath.Join(sc.o.Out, DEMFile), z, w, h, gt, srs, -9999, 256, godal.Average)
}
