package usworld

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// Sensor is the platform of a reading.
type Sensor uint8

// The platforms of the real set.
const (
	L7 Sensor = iota
	L8
	S2A
	S2B
)

// Collection is the STAC collection the analyse table names: Landsat 7 and
// 8 share landsat-c2-l2, told apart by the item id.
func (s Sensor) Collection() string {
	if s == L7 || s == L8 {
		return "landsat-c2-l2"
	}
	return "sentinel-2-l2a"
}

// ItemID is a scene id in the style of the real products.
func (s Sensor) ItemID(d time.Time, path int) string {
	ymd := d.Format("20060102")
	switch s {
	case L7:
		return fmt.Sprintf("LE07_L2SP_%03d031_%s_02_T1", path, ymd)
	case L8:
		return fmt.Sprintf("LC08_L2SP_%03d031_%s_02_T1", path, ymd)
	case S2A:
		return "S2A_MSIL2A_" + ymd + "T170000_R069_T15TVG"
	}
	return "S2B_MSIL2A_" + ymd + "T170000_R069_T15TVG"
}

func (s Sensor) String() string { return [...]string{"L7", "L8", "S2A", "S2B"}[s] }

// scene is one acquisition over a field.
type scene struct {
	date   time.Time
	sensor Sensor
	path   int
}

// schedule lists a field's acquisitions in [from, to]. Landsat 7 and 8 each
// revisit every 16 days, 8 days apart (combined 8 days); a field in the
// sidelap of two WRS-2 paths (about a quarter of the Corn Belt at 40–44° N)
// is seen from the neighbouring path 7 days later. Sentinel-2A every 10
// days from its start of operations (mid-2015), with 2B every 5 days
// combined from July 2017 (ESA mission guide). Landsat 8 from April 2013;
// Landsat 7 operated SLC-off to 2022.
func schedule(st *site, from, to time.Time) []scene {
	var out []scene
	s2b := date(2017, time.July, 15)
	for d := from; !d.After(to); d = d.AddDate(0, 0, 1) {
		k := int(day(d))
		if k%16 == st.phase8 {
			out = append(out, scene{d, L8, st.path})
		}
		if k%16 == (st.phase8+8)%16 {
			out = append(out, scene{d, L7, st.path})
		}
		if st.sidelap && k%16 == (st.phase8+7)%16 {
			out = append(out, scene{d, L8, st.path + 1})
		}
		if st.sidelap && k%16 == (st.phase8+15)%16 {
			out = append(out, scene{d, L7, st.path + 1})
		}
		if k%10 == st.phase2 && !d.Before(date(2015, time.July, 1)) {
			out = append(out, scene{d, S2A, 0})
		}
		if k%10 == (st.phase2+5)%10 && !d.Before(s2b) {
			out = append(out, scene{d, S2B, 0})
		}
	}
	return out
}

// calibration is each sensor's surface reflectance against Landsat 8 OLI's:
// reading = gain·ρ + offset per band.
type calibration [4]struct{ gain, off spec }

// drawCalibration draws the cross-sensor differences of one world. ETM+
// against OLI: the inverse of Roy et al. 2016 (Remote Sens. Environ.
// 185:57, Table 2, surface reflectance OLS ETM+→OLI: red 0.0061 + 0.9047x,
// NIR 0.0412 + 0.8462x, SWIR1 0.0254 + 0.8937x, SWIR2 0.0172 + 0.9071x),
// with ± 1 % of gain. MSI against OLI: Claverie et al. 2018 (Remote Sens.
// Environ. 219:145, HLS) find bandpass differences of about 1 % and
// residual differences of a few per cent after their adjustment; the
// atmospheric corrections (Sen2Cor vs LaSRC; Doxani et al. 2018, Remote
// Sens. 10:352) differ by about 0.01 in the SWIR: gains 0.97–1.03 in the
// SWIR and 0.98–1.02 in red and NIR, offsets ± 0.005.
func drawCalibration(rng *rand.Rand, on bool) calibration {
	var c calibration
	for s := range c {
		c[s].gain = spec{1, 1, 1, 1}
	}
	if !on {
		return c
	}
	roy := [4][2]float64{{0.0061, 0.9047}, {0.0412, 0.8462}, {0.0254, 0.8937}, {0.0172, 0.9071}}
	for b := range 4 {
		g := 1 / roy[b][1] * uniform(rng, 0.99, 1.01)
		c[L7].gain[b], c[L7].off[b] = g, -roy[b][0]/roy[b][1]
	}
	var s2 struct{ gain, off spec }
	for b := range 4 {
		lo, hi := 0.98, 1.02
		if b >= 2 {
			lo, hi = 0.97, 1.03
		}
		s2.gain[b], s2.off[b] = uniform(rng, lo, hi), uniform(rng, -0.005, 0.005)
	}
	c[S2A], c[S2B] = s2, s2
	return c
}

func (c calibration) apply(s Sensor, r spec) spec {
	for b := range r {
		r[b] = c[s].gain[b]*r[b] + c[s].off[b]
	}
	return r
}

// slcGap reports whether point (x, y) (metres) falls in a Landsat 7 SLC-off
// gap of a scene. Since May 2003 ETM+ scans leave wedge-shaped gaps between
// its 16-line (480 m) scans, from none at the scene's centre line to about
// 14 pixels at its edges: about 22 % of a scene is missing (USGS, Landsat 7
// SLC-off products; Storey et al. 2005). A field's share gap/(16 + gap)
// depends on its place across track (share drawn 0–0.45, mean ≈ 0.22); the
// stripes run along scan, about 10° from east–west, and their phase moves
// from one acquisition to the next.
func slcGap(st *site, x, y, phase float64) bool {
	yp := -x*math.Sin(st.slcAngle) + y*math.Cos(st.slcAngle)
	period := 16 / (1 - st.slcShare) * 30 // metres
	f := yp/period + phase
	return f-math.Floor(f) < st.slcShare
}
