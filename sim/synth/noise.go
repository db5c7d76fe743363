package synth

import (
	"math"
	"time"

	"github.com/manejo/manejo/sim/pheno"
)

// mix is the splitmix64 finalizer: a fast, well-mixed 64-bit hash.
func mix(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// hash combines a seed, a stream and an index into 64 random bits.
func hash(seed, stream, i uint64) uint64 {
	return mix(seed ^ mix(stream<<40^i))
}

// unit maps 64 random bits to [0, 1).
func unit(h uint64) float64 { return float64(h>>11) / (1 << 53) }

// valueNoise is smooth 2-D noise in [0, 1): random values on a square
// lattice of the given spacing (metres), interpolated with smoothstep.
type valueNoise struct {
	seed, stream uint64
	spacing      float64
}

func newValueNoise(seed int64, stream uint64, spacing float64) valueNoise {
	return valueNoise{uint64(seed), stream, spacing}
}

func (v valueNoise) lattice(i, j int) float64 {
	return unit(hash(v.seed, v.stream, uint64(uint32(i))<<32|uint64(uint32(j))))
}

func (v valueNoise) at(x, y float64) float64 {
	fx, fy := x/v.spacing, y/v.spacing
	i, j := int(math.Floor(fx)), int(math.Floor(fy))
	u, w := smooth(fx-float64(i)), smooth(fy-float64(j))
	a := v.lattice(i, j) + u*(v.lattice(i+1, j)-v.lattice(i, j))
	b := v.lattice(i, j+1) + u*(v.lattice(i+1, j+1)-v.lattice(i, j+1))
	return a + w*(b-a)
}

func smooth(t float64) float64 { return t * t * (3 - 2*t) }

// wetness is 0 in the dry season and 1 at the height of the rains, from the
// monthly cloud climatology of pheno, lagged by a month (vegetation follows
// the rain).
func wetness(d time.Time) float64 {
	w := (pheno.CloudProb(d.AddDate(0, -1, 0)) - 0.08) / (0.75 - 0.08)
	return math.Max(0, math.Min(1, w))
}

func mixRefl(g, st, so float64) pheno.Reflectance {
	a, b, c := pheno.GreenEndmember, pheno.StrawEndmember, pheno.SoilEndmember
	return pheno.Reflectance{
		Red:   g*a.Red + st*b.Red + so*c.Red,
		NIR:   g*a.NIR + st*b.NIR + so*c.NIR,
		SWIR1: g*a.SWIR1 + st*b.SWIR1 + so*c.SWIR1,
		SWIR2: g*a.SWIR2 + st*b.SWIR2 + so*c.SWIR2,
	}
}

// Background land covers outside the talhões, as endmember mixtures.

// forest: semi-deciduous Amazon–Cerrado transition forest, a little less
// green in the dry season.
func forest(d time.Time) pheno.Reflectance {
	g := 0.82 + 0.1*wetness(d)
	return mixRefl(g, 1-g, 0)
}

// pasture: brachiaria pasture, green in the rains, dry in the dry season,
// with some bare ground.
func pasture(d time.Time) pheno.Reflectance {
	g := 0.25 + 0.5*wetness(d)
	return mixRefl(g, 0.85*(1-g), 0.15*(1-g))
}

// bare: roads, yards and degraded ground.
func bare(d time.Time) pheno.Reflectance {
	g := 0.03 + 0.07*wetness(d)
	return mixRefl(g, 0.1, 0.9-g)
}

// waterRefl is a clear, slightly turbid reservoir.
var waterRefl = pheno.Reflectance{Red: 0.03, NIR: 0.02, SWIR1: 0.008, SWIR2: 0.005}
