package grid

import (
	"encoding/csv"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/airbusgeo/godal"
	"github.com/paulmach/orb"
)

// TestModisGridRealMOD13Q1 checks the sinusoidal grid constants against a
// real MOD13Q1 NDVI subset over Sinop-MT on the native grid
// (testdata/realdata/sits-sinop-mod13q1/cog_12dates_larger): for each of the
// labelled points inside it, the pixel manejo computes must be the pixel of
// the real raster holding the point, edge for edge (1 mm). The older
// tif_23dates cube is not used: its origin sits 0.91 and 0.92 pixel off the
// MODIS grid and its pixel is rounded to 231.656 m (a resampled subset).
func TestModisGridRealMOD13Q1(t *testing.T) {
	dir := filepath.Join("..", "testdata", "realdata", "sits-sinop-mod13q1")
	godal.RegisterAll()
	rasters, _ := filepath.Glob(filepath.Join(dir, "cog_12dates_larger", "*.tif"))
	if len(rasters) == 0 {
		t.Fatalf("no COG in %s", dir)
	}
	rasters = rasters[:1]
	f, err := os.Open(filepath.Join(dir, "samples_sinop_crop.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	wgs, _ := godal.NewSpatialRefFromEPSG(4326)
	defer wgs.Close()
	checked := 0
	for _, path := range rasters {
		ds, err := godal.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		gt, err := ds.GeoTransform()
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(gt[1]-modisPixelM) > 1e-6 || math.Abs(-gt[5]-modisPixelM) > 1e-6 {
			t.Errorf("%s: pixel %g × %g m, manejo uses %g", path, gt[1], gt[5], modisPixelM)
		}
		tr, err := godal.NewTransform(wgs, ds.SpatialRef())
		if err != nil {
			t.Fatal(err)
		}
		st := ds.Structure()
		for _, r := range rows[1:] {
			lon, _ := strconv.ParseFloat(r[1], 64)
			lat, _ := strconv.ParseFloat(r[2], 64)
			x, y := []float64{lon}, []float64{lat}
			if err := tr.TransformEx(x, y, nil, nil); err != nil {
				t.Fatal(err)
			}
			col := math.Floor((x[0] - gt[0]) / gt[1])
			row := math.Floor((y[0] - gt[3]) / gt[5])
			if col < 0 || row < 0 || int(col) >= st.SizeX || int(row) >= st.SizeY {
				continue // point outside this raster
			}
			wx0, wy1 := gt[0]+col*gt[1], gt[3]+row*gt[5]
			x0, y0, x1, y1 := modisPixelBounds(orb.Point{lon, lat})
			if math.Abs(x0-wx0) > 1e-3 || math.Abs(y1-wy1) > 1e-3 || math.Abs(x1-x0-gt[1]) > 1e-6 || math.Abs(y1-y0+gt[5]) > 1e-6 {
				t.Errorf("point %s (%g, %g): manejo pixel x %.3f..%.3f y %.3f..%.3f, %s pixel x %.3f y %.3f", r[0], lon, lat, x0, x1, y0, y1, filepath.Base(path), wx0, wy1)
			}
			checked++
		}
		tr.Close()
		ds.Close()
	}
	if checked < 6 {
		t.Errorf("checked %d points, want at least the 6 samples of the larger cube", checked)
	}
	t.Logf("%d labelled points: manejo's MODIS pixel = the MOD13Q1 raster pixel", checked)
}
