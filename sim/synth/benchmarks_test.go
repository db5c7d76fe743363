package synth

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/manejo/manejo/storage"
)

// BenchmarkAcquisition renders and writes one acquisition (4 bands + SCL as
// COGs) for scene sizes of 384, 1024 and 4096 pixels; pixels/s counts the
// 10 m pixels.
func BenchmarkAcquisition(b *testing.B) {
	for _, n := range []int{384, 1024, 4096} {
		b.Run(fmt.Sprintf("%dpx", n), func(b *testing.B) {
			o, err := Options{Out: b.TempDir(), Seed: 1, SceneSizePx: n, Workers: 1,
				Start: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC), End: time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC)}.withDefaults()
			if err != nil {
				b.Fatal(err)
			}
			storage.InitGDAL()
			sc, err := newScene(o)
			if err != nil {
				b.Fatal(err)
			}
			r, err := sc.newRenderer()
			if err != nil {
				b.Fatal(err)
			}
			defer r.close()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := r.acquisition(i % len(sc.dates)); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n*n)*float64(b.N)/b.Elapsed().Seconds(), "pixels/s")
		})
	}
}

// BenchmarkGenerateYear builds one agricultural year of the default archive
// (73 acquisitions), all workers.
func BenchmarkGenerateYear(b *testing.B) {
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		tr, err := Generate(context.Background(), Options{Out: b.TempDir(), Seed: 1,
			Start: time.Date(2024, 7, 1, 0, 0, 0, 0, time.UTC), End: time.Date(2025, 6, 30, 0, 0, 0, 0, time.UTC)})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(len(tr.Items)), "items")
	}
}
