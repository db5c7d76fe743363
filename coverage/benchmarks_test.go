package coverage

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/manejo/manejo/sim/pheno"
	"github.com/manejo/manejo/zarc"
)

// BenchmarkAssess measures Assess per talhão: four years of Sentinel-2
// passes (every 5 days) for talhões of 10, 40 and 160 cells.
func BenchmarkAssess(b *testing.B) {
	contract, _ := ParseSeason("2026/2027", MonthDay{})
	for _, n := range []int{10, 40, 160} {
		rng := rand.New(rand.NewPCG(3, uint64(n)))
		f := newSynthField(rng, synthOptions{start: day("2022-07-01"), end: day("2026-07-31"), revisit: 5, nCells: n, crop: pheno.Soja, cloudScale: 1})
		b.Run(fmt.Sprintf("cells=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				c := Assess(f.cells, contract, nil, zarc.Soja, Params{})
				if len(c.Seasons) != 3 {
					b.Fatal("seasons")
				}
			}
		})
	}
}

// BenchmarkSmooth measures the robust Whittaker smoother on a four-year
// daily grid.
func BenchmarkSmooth(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 5))
	f := newSynthField(rng, synthOptions{start: day("2022-07-01"), end: day("2026-07-31"), revisit: 5, nCells: 1, crop: pheno.Soja, cloudScale: 1})
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		smoothNDVI(f.cells[0], defaultLambda, defaultRobustIter)
	}
}

// BenchmarkCellCover measures one cell's straw cover for one season with
// the unmixing and with the median NDTI (four years of passes per cell).
func BenchmarkCellCover(b *testing.B) {
	rng := rand.New(rand.NewPCG(9, 9))
	f := newSynthField(rng, synthOptions{start: day("2022-07-01"), end: day("2026-07-31"), revisit: 5, nCells: 1, crop: pheno.Soja, cloudScale: 1})
	sow := day("2025-10-20")
	for _, est := range []Estimator{EstimatorUnmix, EstimatorMedian} {
		b.Run(string(est), func(b *testing.B) {
			p := Params{Estimator: est}
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				CellCover(f.cells[0], sow, p)
			}
		})
	}
}
