package slope_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/paulmach/orb"

	"github.com/manejo/manejo/grid"
	"github.com/manejo/manejo/slope"
)

// A 1 arc-second DEM in EPSG:4326 (as NASADEM) rising 5 m every 100 m
// northward, and a talhão of about 30 ha on it.
func ExampleDEM_Field() {
	dir, err := os.MkdirTemp("", "slope-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	const n, arcsec = 120, 1.0 / 3600
	gt := [6]float64{-47.9, arcsec, 0, -15.7, 0, -arcsec}
	z := make([]float32, n*n)
	for r := range n {
		lat := gt[3] + (float64(r)+0.5)*gt[5]
		_, dyM := slope.PixelSizeM(lat, arcsec, arcsec, slope.WGS84)
		for c := range n {
			z[r*n+c] = float32(1000 + 0.05*dyM*float64(n-r))
		}
	}
	path := filepath.Join(dir, "dem.tif")
	if err := slope.WriteCOG(context.Background(), path, z, n, n, gt, 4326, -32768); err != nil {
		log.Fatal(err)
	}
	dem, err := slope.Open(context.Background(), path)
	if err != nil {
		log.Fatal(err)
	}
	defer dem.Close()
	one := 1
	f := grid.Field{ID: "GO-001", PlantioContorno: &one, Geometry: orb.MultiPolygon{{{
		{-47.89, -15.71}, {-47.885, -15.71}, {-47.885, -15.705}, {-47.89, -15.705}, {-47.89, -15.71},
	}}}}
	res, err := dem.Field(context.Background(), f)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s: mean %.2f%%, declividadeMedia %d, contour required %t, plantioContorno %d\n",
		res.FieldID, res.MeanPct, res.DeclividadeMedia, res.ContourRequired, *res.PlantioContorno)
	// Output: GO-001: mean 5.00%, declividadeMedia 5, contour required true, plantioContorno 1
}

// The unrounded mean decides contour planting; the rounded integer goes to
// SINM, with a warning when the two disagree about the 3 % line.
func ExampleNewResult() {
	for _, mean := range []float64{2.4, 2.7, 3.2} {
		r := slope.NewResult("t", slope.Stats{MeanPct: mean})
		fmt.Printf("%.1f%% → declividadeMedia %d, contour %t, warnings %d\n", mean, r.DeclividadeMedia, r.ContourRequired, len(r.Warnings))
	}
	// Output:
	// 2.4% → declividadeMedia 2, contour false, warnings 0
	// 2.7% → declividadeMedia 3, contour false, warnings 1
	// 3.2% → declividadeMedia 3, contour true, warnings 0
}

// Horn on a 30 m grid with a 3 % eastward plane; the border is NaN.
func ExampleHorn() {
	dem := []float32{
		0, 0.9, 1.8,
		0, 0.9, 1.8,
		0, 0.9, 1.8,
	}
	s, err := slope.Horn(dem, 3, 3, []float64{30}, []float64{30})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("centre %.2f%%, corner %v\n", s[4], s[0])
	// Output: centre 3.00%, corner NaN
}
