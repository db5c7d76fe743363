package series

import (
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/manejo/manejo/grid"
	"github.com/manejo/manejo/internal/testkit"
	"github.com/paulmach/orb"
)

// realdata is the repository's copy of the real data the tests read (testdata/realdata/README.md).
var realdata = filepath.Join("..", "testdata", "realdata")

func needRealdata(t testing.TB, sub string) string {
	t.Helper()
	p := filepath.Join(realdata, sub)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("real data %s missing (%v): it is part of the repository", p, err)
	}
	return p
}

func TestRealSTACItems(t *testing.T) {
	dir := needRealdata(t, "stac-items")
	cases := []struct {
		file       string
		id         string
		collection string
		epsg       int
		baseline   string
		applied    *bool
		keys       []string // asset keys that must be there
		profile    string   // built-in profile that reads it
		// Red asset radiometry the pipeline will use.
		scale, offset float64
		source        string
	}{
		{
			file: "earthsearch-v1_sentinel-2-l2a_S2A_39QTA_20230628_0_L2A.json", id: "S2A_39QTA_20230628_0_L2A",
			collection: "sentinel-2-l2a", epsg: 32639, baseline: "05.09", applied: new(bool),
			keys: []string{"red", "nir", "swir16", "swir22", "scl"}, profile: "sentinel-2-l2a",
			// The real Earth Search item carries raster:bands scale 0.0001
			// offset −0.1 and earthsearch:boa_offset_applied: true: its
			// pixels are harmonized, so the offset is not applied again
			// (docs/series.md, the Earth Search rule).
			scale: 0.0001, offset: 0, source: "raster:bands scale, offset already applied",
		},
		{
			file: "planetary-computer_sentinel-2-l2a_S2B_MSIL2A_20190629T212529_R043_T06VVN_20201006T080531.json",
			id:   "S2B_MSIL2A_20190629T212529_R043_T06VVN_20201006T080531", collection: "sentinel-2-l2a", epsg: 32606, baseline: "02.12",
			keys: []string{"B04", "B08", "B11", "B12", "SCL"}, profile: "sentinel-2-l2a",
			scale: 0.0001, offset: 0, source: "profile",
		},
		{
			file: "earthsearch-v0_sentinel-s2-l2a-cogs_S2A_28QCH_20200714_0_L2A.json", id: "S2A_28QCH_20200714_0_L2A",
			collection: "sentinel-s2-l2a-cogs", epsg: 32628,
			keys: []string{"B04", "B08", "B11", "B12", "SCL"}, profile: "sentinel-s2-l2a-cogs",
			scale: 0.0001, offset: 0, source: "profile",
		},
		{
			file: "usgs-landsatlook_landsat-c2l2-sr_LC08_L2SP_028030_20200114_20200824_02_T1_SR.json",
			id:   "LC08_L2SP_028030_20200114_20200824_02_T1_SR", collection: "landsat-c2l2-sr", epsg: 32615,
			keys: []string{"red", "nir08", "swir16", "swir22", "qa_pixel"}, profile: "landsat-c2l2-sr",
			scale: 0.0000275, offset: -0.2, source: "profile",
		},
	}
	*cases[0].applied = true
	for _, tc := range cases {
		t.Run(tc.id, func(t *testing.T) {
			cat, errs := LoadCatalog(context.Background(), filepath.Join(dir, tc.file), CatalogOptions{})
			if len(errs) > 0 || cat == nil || len(cat.Items) != 1 {
				t.Fatalf("LoadCatalog: %v", errs)
			}
			it := cat.Items[0]
			if it.ID != tc.id || it.Collection != tc.collection || it.EPSG != tc.epsg || it.ProcessingBaseline != tc.baseline {
				t.Errorf("item %s %s epsg %d baseline %q, want %s %s %d %q", it.ID, it.Collection, it.EPSG, it.ProcessingBaseline, tc.id, tc.collection, tc.epsg, tc.baseline)
			}
			if (it.BOAOffsetApplied == nil) != (tc.applied == nil) || (it.BOAOffsetApplied != nil && *it.BOAOffsetApplied != *tc.applied) {
				t.Errorf("boa_offset_applied %v, want %v", it.BOAOffsetApplied, tc.applied)
			}
			for _, k := range tc.keys {
				a, ok := it.Assets[k]
				if !ok {
					t.Errorf("asset %s missing", k)
					continue
				}
				rules, err := parseRules([]string{a.Href})
				if err != nil {
					t.Fatalf("asset %s href %s: %v", k, a.Href, err)
				}
				if _, err := gdalPath(a.Href, rules); err != nil {
					t.Errorf("asset %s href %s: %v", k, a.Href, err)
				}
			}
			p := Profiles()[tc.profile]
			red, ra, ok := firstKey(it, p.Red)
			if !ok {
				t.Fatalf("profile %s finds no red asset", tc.profile)
			}
			r := AssetRadiometry(p, it, ra)
			if !near(r.Scale, tc.scale) || !near(r.Offset, tc.offset) || r.Source != tc.source {
				t.Errorf("%s radiometry %v×DN%+v from %s, want %v×DN%+v from %s", red, r.Scale, r.Offset, r.Source, tc.scale, tc.offset, tc.source)
			}
			if it.BBox.Min[0] >= it.BBox.Max[0] || it.Geometry == nil {
				t.Errorf("bbox %v geometry %v", it.BBox, it.Geometry)
			}
		})
	}
}

// sinopPoints reads the labelled points 1–12 of samples_sinop_crop.csv.
func sinopPoints(t *testing.T) []orb.Point {
	recs := testkit.ReadCSV(t, filepath.Join(needRealdata(t, "sits-sinop-mod13q1"), "samples_sinop_crop.csv"))
	var pts []orb.Point
	for _, r := range recs[1:13] {
		lon, _ := strconv.ParseFloat(r[1], 64)
		lat, _ := strconv.ParseFloat(r[2], 64)
		pts = append(pts, orb.Point{lon, lat})
	}
	return pts
}

// gdalLocationInfo runs `gdallocationinfo -valonly -wgs84 file` with the
// points on stdin: bands values per point.
func gdalLocationInfo(t *testing.T, file string, pts []orb.Point, bands int) []float64 {
	var in strings.Builder
	for _, p := range pts {
		fmt.Fprintf(&in, "%.6f %.6f\n", p[0], p[1])
	}
	cmd := exec.Command("gdallocationinfo", "-valonly", "-wgs84", file)
	cmd.Stdin = strings.NewReader(in.String())
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("gdallocationinfo %s: %v", file, err)
	}
	lines := strings.Fields(string(out))
	if len(lines) != len(pts)*bands {
		t.Fatalf("gdallocationinfo gave %d values for %d points", len(lines), len(pts))
	}
	v := make([]float64, len(lines))
	for i, l := range lines {
		v[i], err = strconv.ParseFloat(l, 64)
		if err != nil {
			t.Fatalf("gdallocationinfo value %q: %v", l, err)
		}
	}
	return v
}

func TestSinopMOD13Q1MatchesGdallocationinfo(t *testing.T) {
	cube := needRealdata(t, filepath.Join("sits-sinop-mod13q1", "tif_23dates"))
	if _, err := exec.LookPath("gdallocationinfo"); err != nil {
		t.Skip("gdallocationinfo not installed")
	}
	pts := sinopPoints(t)
	g := grid.Grid{Field: grid.Field{ID: "sinop"}, MODISEligible: true}
	var b orb.Bound = orb.MultiPoint(pts).Bound().Pad(0.001)
	g.Field.Geometry = orb.MultiPolygon{{orb.Ring{b.Min, {b.Max[0], b.Min[1]}, b.Max, {b.Min[0], b.Max[1]}, b.Min}}}
	for i, p := range pts {
		g.Cells = append(g.Cells, grid.Cell{FieldID: "sinop", ID: fmt.Sprintf("p%02d", i+1), Centre: p, MODIS: true})
	}
	// The cube has no pixel-reliability band: read it unmasked.
	prof := Profiles()["modis-13Q1-061"]
	prof.QAOptional = true
	// The catalog's hrefs point into the repository's testdata/realdata,
	// outside the catalog's folder: allowed explicitly.
	obs, st := sampleDirAllow(t, filepath.Join("testdata", "sinop", "catalog.json"), []string{"../testdata/realdata"}, []grid.Grid{g},
		Options{Profiles: map[string]*Profile{"modis-13Q1-061": prof}})
	if st.Scenes != 23 || st.ScenesRead != 23 || len(obs) != 23*12 {
		t.Fatalf("scenes %d read %d obs %d, want 23, 23, 276 (%+v)", st.Scenes, st.ScenesRead, len(obs), st)
	}
	byKey := map[string]Obs{}
	for _, o := range obs {
		byKey[o.CellID+o.Date.Format("2006-01-02")] = o
	}
	files, _ := filepath.Glob(filepath.Join(cube, "MODIS_Sinop_NDVI_*.tif"))
	if len(files) != 23 {
		t.Fatalf("%d NDVI files, want 23", len(files))
	}
	// One gdallocationinfo run over a VRT stacking the 23 files (band i =
	// file i): it prints, per point, one line per band.
	vrt := filepath.Join(t.TempDir(), "stack.vrt")
	if out, err := exec.Command("gdalbuildvrt", append([]string{"-q", "-separate", vrt}, files...)...).CombinedOutput(); err != nil {
		t.Fatalf("gdalbuildvrt: %v %s", err, out)
	}
	all := gdalLocationInfo(t, vrt, pts, len(files))
	var p7 []float64
	for fi, f := range files {
		date := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(f), "MODIS_Sinop_NDVI_"), ".tif")
		for i := range pts {
			w := all[i*len(files)+fi]
			o, ok := byKey[fmt.Sprintf("p%02d", i+1)+date]
			if !ok {
				t.Fatalf("no observation for point %d on %s", i+1, date)
			}
			// Read without QA: every observation is flagged no-qa, values kept.
			if o.Mask != FlaggedNoQA || math.Abs(float64(o.NDVI)-w*0.0001) > 1e-6 {
				t.Errorf("point %d %s: NDVI %v mask %q, gdallocationinfo %v × 0.0001 flagged no-qa", i+1, date, o.NDVI, o.Mask, w)
			}
			if i == 6 {
				p7 = append(p7, float64(o.NDVI))
			}
		}
	}
	// Point 7 (Soy_Corn) as listed in the cube's README.
	readme := []float64{3221, 4473, 3528, 6031, 7612, 9093, 9075, 9075, 7468, 4270, 2223, 4795, 8871, 8750, 7953, 7399, 5815, 3968, 3972, 3070, 3094, 2924, 2824}
	for i, w := range readme {
		if math.Abs(p7[i]-w*0.0001) > 1e-6 {
			t.Errorf("point 7 date %d: NDVI %v, README %v", i, p7[i], w*0.0001)
		}
	}
	gp := st.Gaps["sinop"]
	if gp.Scenes != 23 || gp.UsableDates != 23 || gp.LargestGapDays != 16 || gp.RevisitDays != 16 || gp.Coarse {
		t.Errorf("gap %+v, want 23 scenes and usable dates, 16-day gaps, not coarse", gp)
	}
}

func TestRstoolboxSen2Baseline04(t *testing.T) {
	dir := needRealdata(t, "rstoolbox-sen2-l2a-para")
	tif, err := filepath.Abs(filepath.Join(dir, "sen2_L2A_12band_DN.tif"))
	if err != nil {
		t.Fatal(err)
	}
	// Bands B1 B2 B3 B4 B5 B6 B7 B8 B8A B9 B11 B12: red 4, nir 8, swir16
	// 11, swir22 12, all in one file ("manejo:band"). Processing baseline
	// ≥ 04.00 with the +1000 offset still in the DNs, no raster:bands, no
	// SCL: the −1000 DN comes from the baseline rule.
	asset := func(b int) map[string]any { return map[string]any{"href": tif, "manejo:band": b} }
	// Pixel (123,118) forest: centre of the pixel in EPSG:4326.
	const x0, y0, px = -56.3736858, -1.4586844, 0.0000898315
	forest := orb.Point{x0 + 123.5*px, y0 - 118.5*px}
	maxNDVI := orb.Point{x0 + 116.5*px, y0 - 144.5*px}
	water := orb.Point{x0 + 0.5*px, y0 - 0.5*px}
	b := orb.Bound{Min: orb.Point{-56.3737, -1.4800}, Max: orb.Point{-56.3515, -1.4587}}
	it := item("sen2-para", "sentinel-2-l2a", "2022-07-01T14:00:00Z", map[string]any{"s2:processing_baseline": "04.00"}, b,
		map[string]any{"red": asset(4), "nir": asset(8), "swir16": asset(11), "swir22": asset(12)})
	tmp := t.TempDir()
	writeJSON(t, filepath.Join(tmp, "item.json"), it)
	prof := Profiles()["sentinel-2-l2a"]
	prof.QAOptional = true
	g := fieldAround("para", 0.0001, forest, maxNDVI, water)
	obs, st := sampleDirAllow(t, filepath.Join(tmp, "item.json"), []string{dir}, []grid.Grid{g}, Options{Profiles: map[string]*Profile{"sentinel-2-l2a": prof}})
	if len(obs) != 3 {
		t.Fatalf("%d observations (%+v)", len(obs), st)
	}
	// README values, 4 decimals.
	want := [][2]float64{{0.7211, 0.3749}, {0.9142, 0.4544}, {-0.0538, 0.0877}}
	for i, w := range want {
		o := obs[i]
		if o.Mask != FlaggedNoQA || math.Abs(float64(o.NDVI)-w[0]) > 5e-5 || math.Abs(float64(o.NDTI)-w[1]) > 5e-5 {
			t.Errorf("cell %s: NDVI %.4f NDTI %.4f mask %q, want %.4f %.4f flagged no-qa (no SCL)", o.CellID, o.NDVI, o.NDTI, o.Mask, w[0], w[1])
		}
	}
}
