package grid

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/paulmach/orb"
)

// benchFields returns n reproducible talhões around Sinop-MT: convex
// quadrilaterals, L-shapes and polygons with a hole, with areas
// log-uniform between 5 and 2000 ha (median about 100 ha), like a
// municipality's registry.
func benchFields(tb testing.TB, n int) []Field {
	tb.Helper()
	rng := rand.New(rand.NewPCG(2025, 6))
	fs := make([]Field, n)
	for i := range fs {
		ha := 5 * math.Pow(400, rng.Float64())
		lon := -56.2 + 1.2*rng.Float64()
		lat := -12.4 + 1.2*rng.Float64()
		var mp orb.MultiPolygon
		switch i % 3 {
		case 0:
			mp = irregular(lon, lat, ha)
		case 1:
			mp = lShape(lon, lat, ha)
		default:
			mp = square(lon, lat, ha)
			s := math.Sqrt(ha * 1e4)
			mx, my := metresPerDeg(lat)
			h := rectRing(lon+s/3/mx, lat+s/3/my, s/4, s/5)
			h.Reverse()
			mp[0] = append(mp[0], h)
		}
		fs[i] = Field{ID: "B" + string(rune('0'+i%10)) + "-" + itoa(i), Geometry: mp}
	}
	return fs
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var b []byte
	for ; i > 0; i /= 10 {
		b = append([]byte{byte('0' + i%10)}, b...)
	}
	return string(b)
}

// BenchmarkGrid grids 10,000 talhões per op (one core) and reports the
// time per talhão and the cells made.
func BenchmarkGrid(b *testing.B) {
	fs := benchFields(b, 10000)
	b.ReportAllocs()
	b.ResetTimer()
	cells := 0
	for b.Loop() {
		cells = 0
		for _, f := range fs {
			g, err := Build(f, Options{})
			if err != nil {
				b.Fatal(err)
			}
			cells += len(g.Cells)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(fs)), "ns/talhão")
	b.ReportMetric(float64(cells), "cells/op")
}

// BenchmarkBuild grids one talhão of each size.
func BenchmarkBuild(b *testing.B) {
	for _, ha := range []float64{50, 1000, 5000} {
		b.Run(itoa(int(ha))+"ha", func(b *testing.B) {
			f := Field{ID: "x", Geometry: lShape(-55.6, -11.8, ha)}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Build(f, Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkAreaHa(b *testing.B) {
	mp := irregular(-55.6, -11.8, 500)
	b.ReportAllocs()
	for b.Loop() {
		AreaHa(mp)
	}
}
