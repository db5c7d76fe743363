package tillage

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/manejo/manejo/sim/pheno"
)

// benchSeries is a pheno cell series of the given number of 5-day
// observations (≈ 45 % lost to clouds).
func benchSeries(tb testing.TB, n int) []Obs {
	tb.Helper()
	rng := rand.New(rand.NewPCG(3, 3))
	start := time.Date(2015, 7, 1, 0, 0, 0, 0, time.UTC)
	end := start.AddDate(0, 0, 5*(n-1))
	s := pheno.Random(rng, start, end, pheno.Options{TillageProb: 0.3})
	return toObs(s.Observe(rng, pheno.Revisit(start, end, 5), pheno.ObsOptions{}))
}

// BenchmarkDetectCell reports the detection time per observation (ns/obs)
// for one cell's series of 256, 1024 and 4096 observations (3.5, 14 and 56
// years at a 5-day revisit).
func BenchmarkDetectCell(b *testing.B) {
	p := DefaultParams()
	for _, n := range []int{256, 1024, 4096} {
		obs := benchSeries(b, n)
		b.Run(fmt.Sprintf("obs=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				DetectCell(obs, p)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(obs)), "ns/obs")
		})
	}
}

// BenchmarkDetect is one talhão of 50 cells with 4 years of 5-day
// observations each.
func BenchmarkDetect(b *testing.B) {
	obs := benchSeries(b, 292)
	cells := make([]Cell, 50)
	for i := range cells {
		cells[i] = Cell{ID: fmt.Sprint(i), Border: i%5 == 0, Obs: obs}
	}
	p := DefaultParams()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		Detect(cells, p)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(50*len(obs)), "ns/obs")
}
