package series

import (
	"fmt"
	"math"
	"path/filepath"
	"testing"

	"github.com/airbusgeo/godal"
	"github.com/manejo/manejo/grid"
	"github.com/manejo/manejo/zarc"
	"github.com/paulmach/orb"
)

// assetSpec is one asset of a test scene.
type assetSpec struct {
	key        string
	factor     int // resolution = base × factor
	dtype      godal.DataType
	background float64
	rb         map[string]any // raster:bands[0]; nil for none
}

// sceneSpec is a test scene: a base grid of 16×16 pixels and cells at
// chosen base pixels with DNs per asset.
type sceneSpec struct {
	collection string
	props      map[string]any
	srs        string
	x0, y0     float64
	res        float64
	assets     []assetSpec
	cells      []cellSpec
}

type cellSpec struct {
	col, row int // base pixel (may be outside 0..15 for outside-scene)
	dn       map[string]float64
}

// build writes the scene's rasters and returns its STAC item and the cell
// centres (lon/lat) in spec order.
func (s sceneSpec) build(t testing.TB, dir, id, datetime string) (map[string]any, []orb.Point) {
	t.Helper()
	assets := map[string]any{}
	for _, a := range s.assets {
		f := a.factor
		if f == 0 {
			f = 1
		}
		r := raster{srs: s.srs, originX: s.x0, originY: s.y0, res: s.res * float64(f), w: 16 / f, h: 16 / f,
			dtype: a.dtype, background: a.background, set: map[[2]int]float64{}}
		for _, c := range s.cells {
			if v, ok := c.dn[a.key]; ok && c.col >= 0 && c.row >= 0 {
				r.set[[2]int{c.col / f, c.row / f}] = v
			}
		}
		path := filepath.Join(dir, fmt.Sprintf("%s_%s.tif", id, a.key))
		writeTIF(t, path, r)
		as := map[string]any{"href": rel(t, dir, path), "type": "image/tiff; application=geotiff; profile=cloud-optimized"}
		if a.rb != nil {
			as["raster:bands"] = []any{a.rb}
		}
		assets[a.key] = as
	}
	var pts []orb.Point
	for _, c := range s.cells {
		// 0.3 px into the pixel, off its centre, to catch half-pixel shifts.
		x := s.x0 + (float64(c.col)+0.3)*s.res
		y := s.y0 - (float64(c.row)+0.7)*s.res
		pts = append(pts, toLonLat(t, s.srs, x, y))
	}
	var b orb.Bound
	for i, x := range []float64{s.x0, s.x0 + 16*s.res} {
		for j, y := range []float64{s.y0, s.y0 - 16*s.res} {
			p := toLonLat(t, s.srs, x, y)
			if i == 0 && j == 0 {
				b = orb.Bound{Min: p, Max: p}
			}
			b = b.Extend(p)
		}
	}
	return item(id, s.collection, datetime, s.props, b, assets), pts
}

func TestProfilesExactValues(t *testing.T) {
	// Hand-computed expectations (DN → reflectance → index) in each case.
	s2assets := func(keys [5]string, rb bool) []assetSpec {
		var r map[string]any
		if rb {
			r = map[string]any{"nodata": 0, "data_type": "uint16", "scale": 0.0001, "offset": -0.1}
		}
		return []assetSpec{
			{key: keys[0], dtype: godal.UInt16, background: 1500, rb: r},
			{key: keys[1], dtype: godal.UInt16, background: 1600, rb: r},
			{key: keys[2], factor: 2, dtype: godal.UInt16, background: 1700, rb: r},
			{key: keys[3], factor: 2, dtype: godal.UInt16, background: 1800, rb: r},
			{key: keys[4], factor: 2, dtype: godal.Byte, background: 4},
		}
	}
	es := [5]string{"red", "nir", "swir16", "swir22", "scl"}
	bn := [5]string{"B04", "B08", "B11", "B12", "SCL"}
	s2cells := func(k [5]string) []cellSpec {
		return []cellSpec{
			// red 1200, nir 3600, swir16 2500, swir22 1500, SCL 4 (vegetation).
			{2, 3, map[string]float64{k[0]: 1200, k[1]: 3600, k[2]: 2500, k[3]: 1500, k[4]: 4}},
			// cloud (SCL 9): no value whatever the DNs.
			{9, 4, map[string]float64{k[0]: 1200, k[1]: 3600, k[2]: 2500, k[3]: 1500, k[4]: 9}},
			// red = nir = 1000 DN: zero reflectance after the baseline-04 offset.
			{5, 12, map[string]float64{k[0]: 1000, k[1]: 1000, k[2]: 2500, k[3]: 1500, k[4]: 5}},
			// outside the scene (west of it).
			{-3, 6, nil},
		}
	}
	const utm21 = "EPSG:32721"
	type want struct {
		ndvi, ndti float64
		mask       MaskReason
	}
	nan := math.NaN()
	cases := []struct {
		name string
		spec sceneSpec
		want []want
		// refl is the red, NIR, SWIR1, SWIR2 reflectance of the first
		// cell, when checked (coverage unmixes them).
		refl []float64
	}{
		{
			// Baseline 03.01: reflectance = DN/10000. red 0.12, nir 0.36 →
			// NDVI 0.24/0.48 = 0.5; swir 0.25, 0.15 → NDTI 0.1/0.4 = 0.25.
			// Cell c: red = nir = 0.1 → NDVI 0.
			name: "sentinel-2-l2a baseline 03.01, Earth Search keys",
			spec: sceneSpec{collection: "sentinel-2-l2a", props: map[string]any{"s2:processing_baseline": "03.01"},
				srs: utm21, x0: 600000, y0: 8700000, res: 10, assets: s2assets(es, false), cells: s2cells(es)},
			want: []want{{0.5, 0.25, ""}, {nan, nan, "cloud"}, {0, 0.25, ""}, {nan, nan, "outside-scene"}},
			refl: []float64{0.12, 0.36, 0.25, 0.15},
		},
		{
			// Baseline 05.10, no raster:bands: −1000 DN. red 0.02, nir 0.26
			// → 0.24/0.28 = 0.857143; swir 0.15, 0.05 → 0.5. Cell c:
			// red = nir = 0 → zero denominator, NDTI kept.
			name: "sentinel-2-l2a baseline 05.10, band-number keys",
			spec: sceneSpec{collection: "sentinel-2-l2a", props: map[string]any{"s2:processing_baseline": "05.10"},
				srs: utm21, x0: 600000, y0: 8700000, res: 10, assets: s2assets(bn, false), cells: s2cells(bn)},
			want: []want{{0.24 / 0.28, 0.5, ""}, {nan, nan, "cloud"}, {nan, 0.5, "ndvi:zero-denominator"}, {nan, nan, "outside-scene"}},
			refl: []float64{0.02, 0.26, 0.15, 0.05},
		},
		{
			// Baseline 05.10 but earthsearch:boa_offset_applied: no shift.
			name: "sentinel-2-l2a baseline 05.10, boa_offset_applied true",
			spec: sceneSpec{collection: "sentinel-2-l2a", props: map[string]any{"s2:processing_baseline": "05.10", "earthsearch:boa_offset_applied": true},
				srs: utm21, x0: 600000, y0: 8700000, res: 10, assets: s2assets(es, false), cells: s2cells(es)},
			want: []want{{0.5, 0.25, ""}, {nan, nan, "cloud"}, {0, 0.25, ""}, {nan, nan, "outside-scene"}},
		},
		{
			// raster:bands offset −0.1 on an item that does not say the
			// offset is applied (sentinel-2-c1-l2a style): shifted once, by
			// raster:bands, not twice.
			name: "sentinel-2-l2a raster:bands offset -0.1, boa_offset_applied false",
			spec: sceneSpec{collection: "sentinel-2-l2a", props: map[string]any{"s2:processing_baseline": "05.09", "earthsearch:boa_offset_applied": false},
				srs: utm21, x0: 600000, y0: 8700000, res: 10, assets: s2assets(es, true), cells: s2cells(es)},
			want: []want{{0.24 / 0.28, 0.5, ""}, {nan, nan, "cloud"}, {nan, 0.5, "ndvi:zero-denominator"}, {nan, nan, "outside-scene"}},
		},
		{
			// Earth Search sentinel-2-l2a as published: harmonized pixels
			// (boa_offset_applied true) and the raster:bands offset −0.1
			// they should not carry. The offset is not applied: red 0.12,
			// nir 0.36 → NDVI 0.5, as the 03.01 case (docs/series.md).
			name: "sentinel-2-l2a raster:bands offset -0.1, boa_offset_applied true",
			spec: sceneSpec{collection: "sentinel-2-l2a", props: map[string]any{"s2:processing_baseline": "05.09", "earthsearch:boa_offset_applied": true},
				srs: utm21, x0: 600000, y0: 8700000, res: 10, assets: s2assets(es, true), cells: s2cells(es)},
			want: []want{{0.5, 0.25, ""}, {nan, nan, "cloud"}, {0, 0.25, ""}, {nan, nan, "outside-scene"}},
		},
		{
			// Scene in UTM 22S (EPSG:32722) west of −54°: the talhão lies in
			// zone 21. Same DNs as the first case.
			name: "sentinel-2-l2a scene in another UTM zone",
			spec: sceneSpec{collection: "sentinel-2-l2a", props: map[string]any{"s2:processing_baseline": "03.01"},
				srs: "EPSG:32722", x0: 168000, y0: 8705000, res: 10, assets: s2assets(es, false), cells: s2cells(es)[:3]},
			want: []want{{0.5, 0.25, ""}, {nan, nan, "cloud"}, {0, 0.25, ""}},
		},
		{
			// Landsat C2 L2: DN × 0.0000275 − 0.2. red 10000 → 0.075, nir
			// 20000 → 0.35: NDVI 0.275/0.425; swir 15000 → 0.2125, 12000 →
			// 0.13: NDTI 0.0825/0.3425. QA 21824 clear; 22280 = bit 3 cloud.
			name: "landsat-c2-l2",
			spec: sceneSpec{collection: "landsat-c2-l2", srs: utm21, x0: 600000, y0: 8700000, res: 30,
				assets: []assetSpec{
					{key: "red", dtype: godal.UInt16, background: 9000},
					{key: "nir08", dtype: godal.UInt16, background: 9000},
					{key: "swir16", dtype: godal.UInt16, background: 9000},
					{key: "swir22", dtype: godal.UInt16, background: 9000},
					{key: "qa_pixel", dtype: godal.UInt16, background: 21824},
				},
				cells: []cellSpec{
					{2, 3, map[string]float64{"red": 10000, "nir08": 20000, "swir16": 15000, "swir22": 12000, "qa_pixel": 21824}},
					{9, 4, map[string]float64{"red": 10000, "nir08": 20000, "swir16": 15000, "swir22": 12000, "qa_pixel": 22280}},
					{5, 12, map[string]float64{"red": 0, "nir08": 20000, "swir16": 15000, "swir22": 12000, "qa_pixel": 21824}},
				}},
			want: []want{{0.275 / 0.425, 0.0825 / 0.3425, ""}, {nan, nan, "cloud"}, {nan, 0.0825 / 0.3425, "ndvi:nodata"}},
		},
		{
			// HLS S30: × 0.0001. red 500, nir 3000 → 0.25/0.35; swir 2000,
			// 1000 → 1/3. Fmask 64 (aerosol low) clear, 8 = bit 3 shadow.
			name: "HLSS30",
			spec: sceneSpec{collection: "HLSS30", srs: utm21, x0: 600000, y0: 8700000, res: 30,
				assets: []assetSpec{
					{key: "B04", dtype: godal.Int16, background: 900},
					{key: "B8A", dtype: godal.Int16, background: 900},
					{key: "B11", dtype: godal.Int16, background: 900},
					{key: "B12", dtype: godal.Int16, background: 900},
					{key: "Fmask", dtype: godal.Byte, background: 64},
				},
				cells: []cellSpec{
					{2, 3, map[string]float64{"B04": 500, "B8A": 3000, "B11": 2000, "B12": 1000, "Fmask": 64}},
					{9, 4, map[string]float64{"B04": 500, "B8A": 3000, "B11": 2000, "B12": 1000, "Fmask": 8}},
					{5, 12, map[string]float64{"B04": 500, "B8A": 3000, "B11": -9999, "B12": 1000, "Fmask": 0}},
				}},
			want: []want{{0.25 / 0.35, 1.0 / 3, ""}, {nan, nan, "shadow"}, {0.25 / 0.35, nan, "ndti:nodata"}},
		},
		{
			// HLS L30 keys B04 B05 B06 B07; Fmask 2 = bit 1 cloud.
			name: "HLSL30",
			spec: sceneSpec{collection: "HLSL30", srs: utm21, x0: 600000, y0: 8700000, res: 30,
				assets: []assetSpec{
					{key: "B04", dtype: godal.Int16, background: 900},
					{key: "B05", dtype: godal.Int16, background: 900},
					{key: "B06", dtype: godal.Int16, background: 900},
					{key: "B07", dtype: godal.Int16, background: 900},
					{key: "Fmask", dtype: godal.Byte, background: 0},
				},
				cells: []cellSpec{
					{2, 3, map[string]float64{"B04": 500, "B05": 3000, "B06": 2000, "B07": 1000, "Fmask": 0}},
					{9, 4, map[string]float64{"B04": 500, "B05": 3000, "B06": 2000, "B07": 1000, "Fmask": 2}},
					// swir1 = swir2 = 0 → NDTI denominator 0.
					{5, 12, map[string]float64{"B04": 500, "B05": 3000, "B06": 0, "B07": 0, "Fmask": 0}},
				}},
			want: []want{{0.25 / 0.35, 1.0 / 3, ""}, {nan, nan, "cloud"}, {0.25 / 0.35, nan, "ndti:zero-denominator"}},
		},
		{
			// MOD13Q1: NDVI × 0.0001, reliability 3 cloudy, 255 fill, −3000
			// NDVI fill.
			name: "modis-13Q1-061",
			spec: sceneSpec{collection: "modis-13Q1-061", srs: sinusoidal, x0: -6064553.374, y0: -1302586.208, res: 231.656,
				assets: []assetSpec{
					{key: "250m_16_days_NDVI", dtype: godal.Int16, background: 5000},
					{key: "250m_16_days_pixel_reliability", dtype: godal.Byte, background: 0},
				},
				cells: []cellSpec{
					{2, 3, map[string]float64{"250m_16_days_NDVI": 7500, "250m_16_days_pixel_reliability": 1}},
					{9, 4, map[string]float64{"250m_16_days_NDVI": 7500, "250m_16_days_pixel_reliability": 3}},
					{5, 12, map[string]float64{"250m_16_days_NDVI": -3000, "250m_16_days_pixel_reliability": 0}},
					{13, 13, map[string]float64{"250m_16_days_NDVI": 7500, "250m_16_days_pixel_reliability": 255}},
				}},
			want: []want{{0.75, nan, ""}, {nan, nan, "cloud"}, {nan, nan, "nodata"}, {nan, nan, "nodata"}},
		},
		{
			// MOD09A1: × 0.0001. red 800, nir 3200 → 0.6; b06 2400, b07
			// 1600 → 0.2. state 0x0001 cloudy, 0x0002 mixed, 0x0004 shadow,
			// 0x0003 "not set, assumed clear" passes.
			name: "modis-09A1-061",
			spec: sceneSpec{collection: "modis-09A1-061", srs: sinusoidal, x0: -6064553.374, y0: -1302586.208, res: 463.312,
				assets: []assetSpec{
					{key: "sur_refl_b01", dtype: godal.Int16, background: 900},
					{key: "sur_refl_b02", dtype: godal.Int16, background: 900},
					{key: "sur_refl_b06", dtype: godal.Int16, background: 900},
					{key: "sur_refl_b07", dtype: godal.Int16, background: 900},
					{key: "sur_refl_state_500m", dtype: godal.UInt16, background: 0},
				},
				cells: []cellSpec{
					{2, 3, map[string]float64{"sur_refl_b01": 800, "sur_refl_b02": 3200, "sur_refl_b06": 2400, "sur_refl_b07": 1600, "sur_refl_state_500m": 3}},
					{9, 4, map[string]float64{"sur_refl_b01": 800, "sur_refl_b02": 3200, "sur_refl_b06": 2400, "sur_refl_b07": 1600, "sur_refl_state_500m": 1}},
					{5, 12, map[string]float64{"sur_refl_b01": 800, "sur_refl_b02": 3200, "sur_refl_b06": 2400, "sur_refl_b07": 1600, "sur_refl_state_500m": 2}},
					{13, 13, map[string]float64{"sur_refl_b01": 800, "sur_refl_b02": 3200, "sur_refl_b06": 2400, "sur_refl_b07": 1600, "sur_refl_state_500m": 4}},
				}},
			want: []want{{0.6, 0.2, ""}, {nan, nan, "cloud"}, {nan, nan, "cloud"}, {nan, nan, "shadow"}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			it, pts := tc.spec.build(t, dir, "scene1", "2024-10-05T13:45:00Z")
			writeJSON(t, filepath.Join(dir, "catalog.json"), collection(it))
			g := fieldAround("f1", 0.0005, pts...)
			obs, st := sampleDir(t, filepath.Join(dir, "catalog.json"), []grid.Grid{g}, Options{Workers: 2})
			// A cell outside the scene gets no row (issue 19, defect 6):
			// it is counted instead.
			var wants []want
			outside := 0
			for _, w := range tc.want {
				if w.mask == MaskedOutsideScene {
					outside++
					continue
				}
				wants = append(wants, w)
			}
			if st.Skipped[SkipOutsideScene] != outside {
				t.Errorf("Skipped[outside-scene] = %d, want %d", st.Skipped[SkipOutsideScene], outside)
			}
			if len(obs) != len(wants) {
				t.Fatalf("got %d observations, want %d: %+v (stats %+v)", len(obs), len(wants), obs, st)
			}
			for i, w := range wants {
				o := obs[i]
				if o.CellID != cellID(i) {
					t.Fatalf("obs %d is cell %s, want %s", i, o.CellID, cellID(i))
				}
				if !near(float64(o.NDVI), w.ndvi) || !near(float64(o.NDTI), w.ndti) || o.Mask != w.mask {
					t.Errorf("cell %s: NDVI %v NDTI %v mask %q, want %v %v %q", o.CellID, o.NDVI, o.NDTI, o.Mask, w.ndvi, w.ndti, w.mask)
				}
				if want := zarc.Day(mustTime("2024-10-05")); !o.Date.Equal(want) {
					t.Errorf("date %v, want %v", o.Date, want)
				}
			}
			if tc.refl != nil {
				o := obs[0]
				got := []float32{o.Red, o.NIR, o.SWIR1, o.SWIR2}
				for b, w := range tc.refl {
					if !near(float64(got[b]), w) {
						t.Errorf("cell %s reflectances %v, want %v", o.CellID, got, tc.refl)
						break
					}
				}
				if c := obs[1]; !math.IsNaN(float64(c.Red)) || !math.IsNaN(float64(c.SWIR1)) {
					t.Errorf("cloudy cell reflectances %v %v %v %v, want NaN", c.Red, c.NIR, c.SWIR1, c.SWIR2)
				}
			}
			if st.ScenesRead != 1 {
				t.Errorf("ScenesRead = %d, want 1 (%+v)", st.ScenesRead, st)
			}
		})
	}
}

const sinusoidal = "+proj=sinu +lon_0=0 +x_0=0 +y_0=0 +R=6371007.181 +units=m +no_defs"

func TestMaskRules(t *testing.T) {
	ps := Profiles()
	cases := []struct {
		profile string
		qa      float64
		want    MaskReason
	}{
		// SCL: drop 0,1,2,3,8,9,10,11; keep 4 vegetation, 5 bare, 6 water, 7 unclassified.
		{"sentinel-2-l2a", 0, "nodata"}, {"sentinel-2-l2a", 1, "saturated"}, {"sentinel-2-l2a", 2, "dark"},
		{"sentinel-2-l2a", 3, "shadow"}, {"sentinel-2-l2a", 4, ""}, {"sentinel-2-l2a", 5, ""},
		{"sentinel-2-l2a", 6, ""}, {"sentinel-2-l2a", 7, ""}, {"sentinel-2-l2a", 8, "cloud"},
		{"sentinel-2-l2a", 9, "cloud"}, {"sentinel-2-l2a", 10, "cirrus"}, {"sentinel-2-l2a", 11, "snow"},
		// QA_PIXEL bits 0–5; 21824 = clear land (bits 6, 8, 10, 12, 14).
		{"landsat-c2-l2", 21824, ""}, {"landsat-c2-l2", 1, "nodata"}, {"landsat-c2-l2", 21824 | 1<<1, "cloud"},
		{"landsat-c2-l2", 21824 | 1<<2, "cirrus"}, {"landsat-c2-l2", 21824 | 1<<3, "cloud"},
		{"landsat-c2-l2", 21824 | 1<<4, "shadow"}, {"landsat-c2-l2", 21824 | 1<<5, "snow"},
		{"landsat-c2-l2", 1 << 7, ""}, // water bit is not a mask
		// Fmask bits 1–4; bit 0 (cirrus, reserved), 5 water, 6–7 aerosol pass.
		{"HLSS30", 0, ""}, {"HLSS30", 1, ""}, {"HLSS30", 2, "cloud"}, {"HLSS30", 4, "cloud-adjacent"},
		{"HLSS30", 8, "shadow"}, {"HLSS30", 16, "snow"}, {"HLSS30", 32, ""}, {"HLSS30", 64 | 128, ""},
		{"HLSL30", 255, "nodata"}, {"HLSL30", 2 | 32, "cloud"},
		// MOD13Q1 pixel_reliability: 0 good, 1 marginal, 2 snow kept; 3 cloudy, 255 fill dropped.
		{"modis-13Q1-061", 0, ""}, {"modis-13Q1-061", 1, ""}, {"modis-13Q1-061", 2, ""},
		{"modis-13Q1-061", 3, "cloud"}, {"modis-13Q1-061", 255, "nodata"}, {"modis-13Q1-061", -1, "nodata"},
		// MOD09 state: bits 0–1 (01 cloudy, 10 mixed), bit 2 shadow.
		{"modis-09A1-061", 0, ""}, {"modis-09A1-061", 1, "cloud"}, {"modis-09A1-061", 2, "cloud"},
		{"modis-09A1-061", 3, ""}, {"modis-09A1-061", 4, "shadow"}, {"modis-09A1-061", 8, ""},
		{"modis-09A1-061", math.NaN(), "nodata"},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%s/%v", tc.profile, tc.qa), func(t *testing.T) {
			if got := ps[tc.profile].maskReason(tc.qa); got != tc.want {
				t.Errorf("maskReason(%v) = %q, want %q", tc.qa, got, tc.want)
			}
		})
	}
}

func TestAssetRadiometry(t *testing.T) {
	p := Profiles()["sentinel-2-l2a"]
	tr, fa := true, false
	cases := []struct {
		name          string
		baseline      string
		applied       *bool
		asset         Asset
		scale, offset float64
	}{
		{"baseline 02.12", "02.12", nil, Asset{}, 0.0001, 0},
		{"baseline 03.01", "03.01", nil, Asset{}, 0.0001, 0},
		{"baseline 04.00", "04.00", nil, Asset{}, 0.0001, -0.1},
		{"baseline 05.10", "05.10", nil, Asset{}, 0.0001, -0.1},
		{"baseline N0510", "N0510", nil, Asset{}, 0.0001, -0.1},
		{"baseline 05.10 applied false", "05.10", &fa, Asset{}, 0.0001, -0.1},
		{"baseline 05.10 applied true", "05.10", &tr, Asset{}, 0.0001, 0},
		{"raster:bands offset wins", "05.10", nil, Asset{Scale: new(0.0001), Offset: new(-0.1)}, 0.0001, -0.1},
		{"raster:bands offset 0 wins", "05.10", nil, Asset{Scale: new(0.0001), Offset: new(0.0)}, 0.0001, 0},
		{"raster:bands offset on an applied item is not applied", "05.09", &tr, Asset{Scale: new(0.0001), Offset: new(-0.1)}, 0.0001, 0},
		{"raster:bands offset on an item applied false", "05.09", &fa, Asset{Scale: new(0.0001), Offset: new(-0.1)}, 0.0001, -0.1},
		{"raster:bands scale only keeps the rule", "05.10", nil, Asset{Scale: new(0.0002)}, 0.0002, -0.2},
		{"no baseline", "", nil, Asset{}, 0.0001, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := AssetRadiometry(p, &Item{ProcessingBaseline: tc.baseline, BOAOffsetApplied: tc.applied}, tc.asset)
			if !near(r.Scale, tc.scale) || !near(r.Offset, tc.offset) {
				t.Errorf("AssetRadiometry = %v×DN%+v, want %v×DN%+v", r.Scale, r.Offset, tc.scale, tc.offset)
			}
		})
	}
}
