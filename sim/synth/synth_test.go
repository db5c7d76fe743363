package synth

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airbusgeo/godal"
	"github.com/manejo/manejo/grid"
	"github.com/manejo/manejo/internal/testkit"
	"github.com/manejo/manejo/sim/pheno"
	"github.com/manejo/manejo/zarc"
)

var (
	long     = flag.Bool("long", false, "test on the default archive (5-day revisit) instead of a 10-day one")
	seedFlag = flag.Int64("seed", 1, "seed of the archive the tests read")
)

// fixtureOptions are the default archive's (seed -seed, default 1); without -long every
// other date is left out to keep the package's tests short (T, C, slope and
// the designs do not depend on the revisit).
func fixtureOptions(out string) Options {
	o := Options{Out: out, Seed: *seedFlag}
	if !*long {
		o.RevisitDays = 10
	}
	return o
}

// The archive of fixtureOptions, generated once for the tests that read it.
var (
	fixOnce  sync.Once
	fixDir   string
	fixTruth Truth
	fixErr   error
	fixTime  time.Duration
)

func TestMain(m *testing.M) {
	code := m.Run()
	if fixDir != "" {
		os.RemoveAll(fixDir)
	}
	os.Exit(code)
}

// fixture returns the directory and truth of the default archive.
func fixture(t testing.TB) (string, Truth) {
	t.Helper()
	fixOnce.Do(func() {
		fixDir, fixErr = os.MkdirTemp("", "synth-fixture-")
		if fixErr != nil {
			return
		}
		t0 := time.Now()
		fixTruth, fixErr = Generate(context.Background(), fixtureOptions(fixDir))
		fixTime = time.Since(t0)
	})
	if fixErr != nil {
		t.Fatalf("Generate(default, seed 1): %v", fixErr)
	}
	return fixDir, fixTruth
}

func fieldByID(t *testing.T, tr Truth, id string) FieldTruth {
	t.Helper()
	for _, f := range tr.Fields {
		if f.ID == id {
			return f
		}
	}
	t.Fatalf("no talhão %s in the truth", id)
	return FieldTruth{}
}

func TestOptionsInvalid(t *testing.T) {
	tests := []struct {
		name string
		o    Options
	}{
		{"no out", Options{}},
		{"negative fields", Options{Out: "x", Fields: -1}},
		{"end before start", Options{Out: "x", Start: time.Date(2024, 1, 2, 0, 0, 0, 0, time.UTC), End: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)}},
		{"revisit", Options{Out: "x", RevisitDays: -5}},
		{"scene too small", Options{Out: "x", SceneSizePx: 256}},
		{"odd scene", Options{Out: "x", SceneSizePx: 513}},
		{"block size", Options{Out: "x", BlockSize: 300}},
		{"latitude", Options{Out: "x", Lon: 10, Lat: -85}},
		{"contract", Options{Out: "x", Contract: "2026-2027"}},
		{"tiles", Options{Out: "x", Tiles: -1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Generate(context.Background(), tc.o)
			if !errors.Is(err, ErrOptions) {
				t.Errorf("Generate(%+v) = %v, want ErrOptions", tc.o, err)
			}
		})
	}
	t.Run("too many talhões", func(t *testing.T) {
		_, err := Generate(context.Background(), Options{Out: t.TempDir(), Fields: 400, End: DefaultStart})
		if !errors.Is(err, ErrOptions) || !strings.Contains(err.Error(), "no room") {
			t.Errorf("Generate(400 talhões on 3.84 km) = %v, want ErrOptions: no room", err)
		}
	})
}

func TestDeterministic(t *testing.T) {
	o := Options{Seed: 7, Fields: 8, Start: time.Date(2024, 9, 1, 0, 0, 0, 0, time.UTC), End: time.Date(2024, 11, 30, 0, 0, 0, 0, time.UTC)}
	var trees []map[string]string
	for i, w := range []int{1, 2} { // worker count must not matter
		o.Out, o.Workers = filepath.Join(t.TempDir(), "run"), w
		if _, err := Generate(context.Background(), o); err != nil {
			t.Fatalf("run %d: %v", i, err)
		}
		trees = append(trees, testkit.HashTree(t, o.Out))
	}
	a, b := trees[0], trees[1]
	if len(a) != len(b) || len(a) < 19*5+5 {
		t.Fatalf("runs wrote %d and %d files, want the same ≥ %d", len(a), len(b), 19*5+5)
	}
	names := make([]string, 0, len(a))
	for k := range a {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if a[k] != b[k] {
			t.Errorf("%s differs between two runs with seed 7: %s vs %s", k, a[k], b[k])
		}
	}
	o.Seed, o.Out = 8, filepath.Join(t.TempDir(), "other")
	if _, err := Generate(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	if c := testkit.HashTree(t, o.Out); c[CatalogFile] == a[CatalogFile] || c[TruthFile] == a[TruthFile] {
		t.Error("seeds 7 and 8 gave the same catalog or truth")
	}
}

// TestCOG checks every asset of a few items and the DEM: COG layout, CRS,
// tiles, overviews, nodata, type, and the grid the STAC item announces.
func TestCOG(t *testing.T) {
	dir, tr := fixture(t)
	t.Logf("default archive: %d items, built in %v", len(tr.Items), fixTime)
	type want struct {
		file  string
		dtype godal.DataType
		size  int
		res   float64
		epsg  string
		nd    float64
	}
	var cases []want
	for _, i := range []int{0, len(tr.Items) / 2, len(tr.Items) - 1} {
		it := tr.Items[i]
		d := filepath.Join(dir, itemDir(it.ID))
		cases = append(cases,
			want{filepath.Join(d, "B04.tif"), godal.UInt16, 384, 10, "32721", 0},
			want{filepath.Join(d, "B08.tif"), godal.UInt16, 384, 10, "32721", 0},
			want{filepath.Join(d, "B11.tif"), godal.UInt16, 192, 20, "32721", 0},
			want{filepath.Join(d, "B12.tif"), godal.UInt16, 192, 20, "32721", 0},
			want{filepath.Join(d, "SCL.tif"), godal.Byte, 192, 20, "32721", 0})
	}
	cases = append(cases, want{filepath.Join(dir, DEMFile), godal.Float32, 0, 1.0 / 3600, "4326", -9999})
	for _, c := range cases {
		rel, _ := filepath.Rel(dir, c.file)
		t.Run(rel, func(t *testing.T) {
			ds, err := godal.Open(c.file)
			if err != nil {
				t.Fatal(err)
			}
			defer ds.Close()
			if got := ds.Metadata("LAYOUT", godal.Domain("IMAGE_STRUCTURE")); got != "COG" {
				t.Errorf("LAYOUT = %q, want COG", got)
			}
			if got := ds.Metadata("COMPRESSION", godal.Domain("IMAGE_STRUCTURE")); got != "DEFLATE" {
				t.Errorf("COMPRESSION = %q, want DEFLATE", got)
			}
			st := ds.Structure()
			if c.size > 0 && (st.SizeX != c.size || st.SizeY != c.size) {
				t.Errorf("size = %dx%d, want %dx%d", st.SizeX, st.SizeY, c.size, c.size)
			}
			if st.NBands != 1 || st.DataType != c.dtype {
				t.Errorf("bands %d of %v, want 1 of %v", st.NBands, st.DataType, c.dtype)
			}
			b := ds.Bands()[0]
			bs := b.Structure()
			if bs.BlockSizeX != 256 || bs.BlockSizeY != 256 {
				t.Errorf("block = %dx%d, want 256x256", bs.BlockSizeX, bs.BlockSizeY)
			}
			if n := len(b.Overviews()); n < 1 {
				t.Errorf("%d overviews, want ≥ 1", n)
			}
			if nd, ok := b.NoData(); !ok || nd != c.nd {
				t.Errorf("nodata = %v (set %v), want %v", nd, ok, c.nd)
			}
			if got := ds.SpatialRef().AuthorityCode(""); got != c.epsg {
				t.Errorf("EPSG = %s, want %s", got, c.epsg)
			}
			gt, err := ds.GeoTransform()
			if err != nil {
				t.Fatal(err)
			}
			if !testkit.Near(gt[1], c.res, 1e-12) || !testkit.Near(gt[5], -c.res, 1e-12) {
				t.Errorf("pixel = %v x %v, want %v", gt[1], gt[5], c.res)
			}
			if c.epsg == "32721" && (gt[0] != tr.Scene.OriginX || gt[3] != tr.Scene.OriginY) {
				t.Errorf("origin = %v,%v, want the scene's %v,%v", gt[0], gt[3], tr.Scene.OriginX, tr.Scene.OriginY)
			}
		})
	}
	// The GDAL tool agrees (when installed, as in CI).
	if _, err := exec.LookPath("gdalinfo"); err == nil {
		out, err := exec.Command("gdalinfo", cases[0].file).CombinedOutput()
		if err != nil {
			t.Fatalf("gdalinfo: %v\n%s", err, out)
		}
		for _, s := range []string{"LAYOUT=COG", "COMPRESSION=DEFLATE", "Block=256x256", "NoData Value=0", "Overviews: 192x192", `ID["EPSG",32721]`} {
			if !strings.Contains(string(out), s) {
				t.Errorf("gdalinfo %s lacks %q", cases[0].file, s)
			}
		}
	}
}

func TestCatalog(t *testing.T) {
	dir, tr := fixture(t)
	b, err := os.ReadFile(filepath.Join(dir, CatalogFile))
	if err != nil {
		t.Fatal(err)
	}
	var cat struct {
		Type     string `json:"type"`
		Features []struct {
			ID         string         `json:"id"`
			Collection string         `json:"collection"`
			BBox       []float64      `json:"bbox"`
			Properties map[string]any `json:"properties"`
			Geometry   struct {
				Type        string         `json:"type"`
				Coordinates [][][2]float64 `json:"coordinates"`
			} `json:"geometry"`
			Assets map[string]struct {
				Href        string           `json:"href"`
				RasterBands []map[string]any `json:"raster:bands"`
				ProjShape   []int            `json:"proj:shape"`
			} `json:"assets"`
		} `json:"features"`
	}
	if err := json.Unmarshal(b, &cat); err != nil {
		t.Fatalf("parse catalog: %v", err)
	}
	if cat.Type != "FeatureCollection" || len(cat.Features) != len(tr.Items) {
		t.Fatalf("catalog: %s with %d items, want FeatureCollection with %d", cat.Type, len(cat.Features), len(tr.Items))
	}
	if n, want := len(tr.Items), 1460/tr.RevisitDays+1; n != want {
		t.Errorf("%d items over 2022-07-01..2026-06-30 every %d days, want %d", n, tr.RevisitDays, want)
	}
	kinds := map[string]int{}
	prev := ""
	for i, f := range cat.Features {
		it := tr.Items[i]
		p := f.Properties
		dt, _ := p["datetime"].(string)
		if f.ID != it.ID || f.Collection != "sentinel-2-l2a" || !strings.HasPrefix(dt, it.Date.Format(dateLayout)) || dt <= prev {
			t.Errorf("item %d: %s %s %s, want %s on %s in datetime order", i, f.ID, f.Collection, dt, it.ID, it.Date.Format(dateLayout))
		}
		prev = dt
		if p["s2:processing_baseline"] != it.Baseline || p["proj:epsg"] != 32721.0 || p["earthsearch:boa_offset_applied"] != it.BOAOffsetApplied {
			t.Errorf("item %s: properties %v disagree with the truth %+v", f.ID, p, it)
		}
		if cc, ok := p["eo:cloud_cover"].(float64); !ok || cc < 0 || cc > 100 {
			t.Errorf("item %s: eo:cloud_cover %v", f.ID, p["eo:cloud_cover"])
		}
		if len(f.BBox) != 4 || f.BBox[0] > -55.6 || f.BBox[2] < -55.6 || f.BBox[1] > -11.8 || f.BBox[3] < -11.8 || f.Geometry.Type != "Polygon" || len(f.Geometry.Coordinates[0]) != 5 {
			t.Errorf("item %s: bbox %v / geometry %s does not hold the scene centre", f.ID, f.BBox, f.Geometry.Type)
		}
		for _, key := range []string{"red", "nir", "swir16", "swir22", "scl"} {
			a, ok := f.Assets[key]
			if !ok {
				t.Fatalf("item %s: no asset %s", f.ID, key)
			}
			if filepath.IsAbs(a.Href) || strings.Contains(a.Href, "://") {
				t.Errorf("item %s %s: href %s is not relative", f.ID, key, a.Href)
			}
			if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(a.Href))); err != nil {
				t.Errorf("item %s %s: %v", f.ID, key, err)
			}
			hasScale := len(a.RasterBands) == 1 && a.RasterBands[0]["offset"] != nil
			if key != "scl" && hasScale != it.RasterBandsOffset {
				t.Errorf("item %s %s: raster:bands offset present %v, truth %v", f.ID, key, hasScale, it.RasterBandsOffset)
			}
			if hasScale && (a.RasterBands[0]["scale"] != 0.0001 || a.RasterBands[0]["offset"] != -0.1) {
				t.Errorf("item %s %s: raster:bands %v, want scale 0.0001 offset -0.1", f.ID, key, a.RasterBands[0])
			}
		}
		// The offset in the data is exactly what a correct reader infers.
		wantOff := 0
		if it.Baseline >= "04.00" && !it.BOAOffsetApplied {
			wantOff = 1000
		}
		if it.DNOffset != wantOff {
			t.Errorf("item %s: DN offset %d, but baseline %s applied=%v implies %d", it.ID, it.DNOffset, it.Baseline, it.BOAOffsetApplied, wantOff)
		}
		switch {
		case it.Baseline < "04.00":
			kinds["pre-04.00"]++
		case it.Baseline == "04.00":
			kinds["04.00 offset in data, no raster:bands"]++
		case it.BOAOffsetApplied:
			kinds["05.xx offset applied"]++
		default:
			kinds["05.xx raster:bands offset"]++
		}
	}
	if len(kinds) != 4 {
		t.Errorf("baseline kinds %v, want all four", kinds)
	}
	for k, n := range kinds {
		if n < 10 {
			t.Errorf("only %d items of kind %q", n, k)
		}
	}
	t.Logf("item kinds: %v", kinds)
}

func TestTruthConsistent(t *testing.T) {
	dir, tr := fixture(t)
	disk, err := ReadTruth(filepath.Join(dir, TruthFile))
	if err != nil {
		t.Fatal(err)
	}
	if a, _ := json.Marshal(disk); string(a) != string(must(json.Marshal(tr))) {
		t.Error("truth.json does not read back as the Truth Generate returned")
	}
	if tr.Contract != "2026/2027" || strings.Join(tr.Assessed, " ") != "2023/2024 2024/2025 2025/2026" {
		t.Errorf("contract %s assessed %v", tr.Contract, tr.Assessed)
	}
	for _, f := range tr.Fields {
		t.Run(f.ID, func(t *testing.T) {
			var prevMain time.Time
			for _, c := range f.Cycles {
				if !(c.Sowing.Before(c.Emergence.Time) && c.Emergence.Before(c.Peak.Time) && !c.Peak.After(c.Harvest.Time) && !c.Senesce.After(c.Harvest.Time)) {
					t.Errorf("cycle %+v out of order", c)
				}
				if c.Season != seasonName(agriYear(c.Sowing.Time)) {
					t.Errorf("cycle sown %s in season %s", c.Sowing.Format(dateLayout), c.Season)
				}
				if c.Main {
					if m := c.Sowing.Month(); m < time.September || m > time.November {
						t.Errorf("main %s sown %s, outside September–November", c.Crop, c.Sowing.Format(dateLayout))
					}
					if !prevMain.IsZero() && c.Sowing.Sub(prevMain) < 300*24*time.Hour {
						t.Errorf("two main crops %s and %s less than 300 days apart", prevMain.Format(dateLayout), c.Sowing.Format(dateLayout))
					}
					prevMain = c.Sowing.Time
				}
			}
			// Tillage: inside the archive, never on a standing cash crop.
			for _, ti := range append(append([]TillageTruth{}, f.Tillage...), headTill(f)...) {
				if ti.Date.Before(tr.Start.Time) || ti.Date.After(tr.End.Time) {
					t.Errorf("tillage %s outside the archive", ti.Date.Format(dateLayout))
				}
				for _, c := range f.Cycles {
					if (c.Crop == pheno.Soja || c.Crop == pheno.Milho || c.Crop == pheno.Safrinha) && ti.Date.After(c.Sowing.Time) && ti.Date.Before(c.Harvest.Time) {
						t.Errorf("tillage %s on standing %s (%s–%s)", ti.Date.Format(dateLayout), c.Crop, c.Sowing.Format(dateLayout), c.Harvest.Format(dateLayout))
					}
				}
			}
			// T from the last talhão event.
			if len(f.Tillage) == 0 {
				if !f.T.Censored || f.T.Years != nil || f.T.YearsMin != 4 || f.T.Level != nil {
					t.Errorf("T = %+v, want censored at ≥ 4 years without a level", f.T)
				}
			} else {
				last := f.Tillage[len(f.Tillage)-1].Date
				y := FullYears(last.Time, tr.AsOf.Time)
				if f.T.Censored || f.T.Years == nil || *f.T.Years != y || *f.T.Level != zarc.TLevel(float64(y)) || !f.T.LastEvent.Equal(last.Time) {
					t.Errorf("T = %+v, want %d years from %s", f.T, y, last.Format(dateLayout))
				}
			}
			// Seasons and C.
			var sum float64
			n := 0
			for _, s := range f.Seasons {
				if !s.WindowStart.Equal(s.Sowing.AddDate(0, 0, -30)) || s.Season != seasonName(agriYear(s.Sowing.Time)) {
					t.Errorf("season %+v: window or name wrong", s)
				}
				if s.StrawPct < 0 || s.StrawPct > 100 {
					t.Errorf("season %s straw %v%%", s.Season, s.StrawPct)
				}
				if s.Assessed {
					sum += s.StrawPct
					n++
				}
			}
			if n != 3 || f.C.Value == nil || !testkit.Near(*f.C.Value, sum/3, 0.006) || *f.C.Level != zarc.CLevel(*f.C.Value) {
				t.Errorf("C = %+v, want the mean %.2f of %d assessed seasons", f.C, sum/3, n)
			}
			if f.Clouds.LossPct < 30 || f.Clouds.LossPct > 60 {
				t.Errorf("cloud loss %.1f%%, want 30–60 %%", f.Clouds.LossPct)
			}
			if f.Clouds.ResiduePct <= 0 || f.Clouds.ResiduePct > 8 {
				t.Errorf("unflagged residue %.2f%% of clear observations, want rare but present (0–8 %%)", f.Clouds.ResiduePct)
			}
			if len(f.Clouds.MaskedPct) != len(tr.Items) {
				t.Errorf("%d per-item cloud entries for %d items", len(f.Clouds.MaskedPct), len(tr.Items))
			}
			if !testkit.Near(f.AreaHa, float64(f.Pixels)/100, 0.02*f.AreaHa) {
				t.Errorf("area %.2f ha but %d pixels of 0.01 ha", f.AreaHa, f.Pixels)
			}
		})
	}
	// The designs: what every stage can rely on.
	f1, f2, f3, f4, f6 := fieldByID(t, tr, "SYN-001"), fieldByID(t, tr, "SYN-002"), fieldByID(t, tr, "SYN-003"), fieldByID(t, tr, "SYN-004"), fieldByID(t, tr, "SYN-006")
	if f1.AreaHa < 250 || !f1.MODIS.Eligible || f3.AreaHa > 25 || f2.Shape != "L" {
		t.Errorf("designs: SYN-001 %.0f ha eligible %v, SYN-003 %.0f ha, SYN-002 %s", f1.AreaHa, f1.MODIS.Eligible, f3.AreaHa, f2.Shape)
	}
	if f2.T.Years == nil || *f2.T.Years != 3 || *f2.T.Level != 2 || f3.T.Years == nil || *f3.T.Years != 1 {
		t.Errorf("designed T: SYN-002 %+v (want 3, level 2), SYN-003 %+v (want 1)", f2.T, f3.T)
	}
	if len(f4.Tillage) != 0 || len(f4.Headland) != 1 || !f4.T.Censored || f4.Headland[0].AreaPct < 10 || f4.Headland[0].AreaPct > 25 {
		t.Errorf("SYN-004: tillage %v, headland %+v, T %+v: want only a headland strip and T censored", f4.Tillage, f4.Headland, f4.T)
	}
	if len(f6.Tillage) != 4 || *f6.C.Level != 1 {
		t.Errorf("SYN-006: %d tillages, C %+v: want yearly tillage and C level 1", len(f6.Tillage), f6.C)
	}
	levels := map[int]bool{}
	for _, f := range tr.Fields {
		levels[*f.C.Level] = true
	}
	if !levels[1] || !levels[2] || !levels[3] {
		t.Errorf("C levels of the designed talhões %v, want 1, 2 and 3", levels)
	}
	var flat, steep int
	for _, f := range tr.Fields {
		switch s := f.Slope.MeanPct; {
		case s < 2:
			flat++
		case s > 4:
			steep++
		default:
			t.Errorf("%s mean slope %.2f%%, too close to the 3 %% threshold", f.ID, s)
		}
		if f.Slope.ContourRequired != (f.Slope.MeanPct >= 3) {
			t.Errorf("%s contour_required %v with %.2f%%", f.ID, f.Slope.ContourRequired, f.Slope.MeanPct)
		}
	}
	if flat < 2 || steep < 2 {
		t.Errorf("%d flat and %d steep talhões, want both", flat, steep)
	}
	// sowing.csv holds exactly the declared seasons.
	b, err := os.ReadFile(filepath.Join(dir, SowingFile))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	want := []string{"field_id,season,sowing_date,crop"}
	for _, f := range tr.Fields {
		for _, s := range f.Seasons {
			if s.Declared {
				want = append(want, f.ID+","+s.Season+","+s.Sowing.Format(dateLayout)+","+f.Crop)
			}
		}
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") || len(lines) < 5 {
		t.Errorf("sowing.csv:\n%s\nwant:\n%s", b, strings.Join(want, "\n"))
	}
}

func headTill(f FieldTruth) []TillageTruth {
	var out []TillageTruth
	for _, h := range f.Headland {
		out = append(out, h.TillageTruth)
	}
	return out
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestGridOfTalhoes reads talhoes.geojson with the grid stage: both cell
// classes appear and SYN-001 is MODIS-eligible under the real gridding.
func TestGridOfTalhoes(t *testing.T) {
	dir, tr := fixture(t)
	fields, errs := grid.Read(context.Background(), filepath.Join(dir, FieldsFile), grid.ReadOptions{})
	if len(errs) > 0 || len(fields) != len(tr.Fields) {
		t.Fatalf("grid.Read: %d talhões, errors %v", len(fields), errs)
	}
	classes := map[bool]int{}
	for i, f := range fields {
		ft := tr.Fields[i]
		g, err := grid.Build(f, grid.Options{})
		if err != nil {
			t.Fatalf("grid.Build(%s): %v", f.ID, err)
		}
		if f.ID != ft.ID || string(f.Crop) != ft.Crop || !testkit.Near(g.AreaHa, ft.AreaHa, 0.001*ft.AreaHa) {
			t.Errorf("%s: crop %s area %.3f ha, truth %s %s %.3f ha", f.ID, f.Crop, g.AreaHa, ft.ID, ft.Crop, ft.AreaHa)
		}
		if (ft.PlantioContorno == nil) != (f.PlantioContorno == nil) || (ft.PlantioContorno != nil && *ft.PlantioContorno != *f.PlantioContorno) {
			t.Errorf("%s: plantioContorno %v, truth %v", f.ID, f.PlantioContorno, ft.PlantioContorno)
		}
		classes[g.AreaHa >= 100]++
		// Two cell centres may share a MODIS pixel, so the grid's points
		// are not bounded by the truth's whole pixels; eligibility of the
		// designed MODIS talhão must agree.
		if f.ID == "SYN-001" && (!g.MODISEligible || !ft.MODIS.Eligible) {
			t.Errorf("SYN-001 MODIS-eligible: grid.Build %v (%d points, %s), truth %+v", g.MODISEligible, g.MODISPoints, g.MODISReason, ft.MODIS)
		}
		t.Logf("%s %.1f ha: %d cells of %.1f ha, MODIS %v (%d points)", f.ID, g.AreaHa, len(g.Cells), g.CellSizeHa, g.MODISEligible, g.MODISPoints)
		// The headland strip is seen by border cells only (IN 2.3 III).
		for _, h := range ft.Headland {
			pr, err := newProjector(tr.EPSG)
			if err != nil {
				t.Fatal(err)
			}
			var d design
			for _, x := range designs() {
				if x.id == f.ID {
					d = x
				}
			}
			edge := tr.Scene.OriginY - (bounds(d.ring)[1] + h.WidthM) // northing of the strip's south side
			inStrip := 0
			for _, c := range g.Cells {
				_, y, err := pr.toUTM(c.Centre[0], c.Centre[1])
				if err != nil {
					t.Fatal(err)
				}
				if y > edge {
					inStrip++
					if !c.Border {
						t.Errorf("%s cell %s: centre in the headland strip but not a border cell", f.ID, c.ID)
					}
				}
			}
			pr.close()
			if inStrip == 0 {
				t.Errorf("%s: no cell centre in the %.0f m headland strip", f.ID, h.WidthM)
			}
			t.Logf("%s: %d of %d cells in the headland strip", f.ID, inStrip, len(g.Cells))
		}
	}
	if classes[true] < 1 || classes[false] < 1 {
		t.Errorf("talhões ≥ 100 ha: %d, < 100 ha: %d; want both", classes[true], classes[false])
	}
}

// readPixel reads one pixel of a single-band raster.
func readPixel(t *testing.T, name string, col, row int) float64 {
	t.Helper()
	ds, err := godal.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer ds.Close()
	buf := make([]float64, 1)
	if err := ds.Bands()[0].Read(col, row, buf, 1, 1); err != nil {
		t.Fatal(err)
	}
	return buf[0]
}

// TestPixelDN spot-checks stored DNs against the pheno reflectance of the
// talhão on a clear pixel, on items with and without the +1000 offset.
func TestPixelDN(t *testing.T) {
	dir, tr := fixture(t)
	o, _ := fixtureOptions(dir).withDefaults()
	sc, err := newScene(o)
	if err != nil {
		t.Fatal(err)
	}
	f := sc.fields[0] // SYN-001: pixel (col 90, row 90) is well inside
	col, row := 90, 90
	p := row*sc.n + col
	if int(sc.cls[p]) != f.surf {
		t.Fatalf("pixel %d,%d is not in %s", col, row, f.ID)
	}
	q := (row/2)*(sc.n/2) + col/2
	checked := map[int]int{}
	for ti, it := range tr.Items {
		sk := sc.newSky(ti)
		if a, s, c, nd := sk.at(q); a != 0 || s != 0 || c != 0 || nd || checked[it.DNOffset] >= 3 {
			continue
		}
		checked[it.DNOffset]++
		d := filepath.Join(dir, itemDir(it.ID))
		refl := make([]pheno.Reflectance, len(sc.surfaces))
		for i, fn := range sc.surfaces {
			refl[i] = fn(it.Date.Time)
		}
		red, nir, _ := sc.pixel10(ti, p, refl)
		R := f.sc.Reflectance(it.Date.Time)
		for _, b := range []struct {
			file string
			want uint16
			r    float64
		}{{"B04.tif", toDN(red, it.DNOffset), R.Red}, {"B08.tif", toDN(nir, it.DNOffset), R.NIR}} {
			got := readPixel(t, filepath.Join(d, b.file), col, row)
			if uint16(got) != b.want {
				t.Errorf("%s %s (%d,%d) = %v, want %d", it.ID, b.file, col, row, got, b.want)
			}
			// Independent of the renderer: the reflectance a reader derives
			// is pheno's, within the ±4 % pixel gain and the noise.
			r := (got - float64(it.DNOffset)) / 1e4
			if !testkit.Near(r, b.r, 0.04*b.r+0.0035) {
				t.Errorf("%s %s: reflectance %.4f, pheno %.4f (baseline %s, offset %d)", it.ID, b.file, r, b.r, it.Baseline, it.DNOffset)
			}
		}
		// 20 m SWIR: the mean of four 10 m pixels of the same talhão.
		for _, b := range []struct {
			file string
			r    float64
		}{{"B11.tif", R.SWIR1}, {"B12.tif", R.SWIR2}} {
			got := readPixel(t, filepath.Join(d, b.file), col/2, row/2)
			if r := (got - float64(it.DNOffset)) / 1e4; !testkit.Near(r, b.r, 0.04*b.r+0.0035) {
				t.Errorf("%s %s: reflectance %.4f, pheno %.4f", it.ID, b.file, r, b.r)
			}
		}
		if scl := readPixel(t, filepath.Join(d, "SCL.tif"), col/2, row/2); scl != SCLVegetation && scl != SCLNotVeg {
			t.Errorf("%s SCL at a clear talhão pixel = %v, want 4 or 5", it.ID, scl)
		}
	}
	if checked[0] == 0 || checked[1000] == 0 {
		t.Errorf("checked %v clear items by DN offset, want both 0 and 1000", checked)
	}
}

// TestSCLMatchesClouds checks that the SCL file of a cloudy item flags the
// clouds the truth counts over each talhão.
func TestSCLMatchesClouds(t *testing.T) {
	dir, tr := fixture(t)
	o, _ := fixtureOptions(dir).withDefaults()
	sc, err := newScene(o)
	if err != nil {
		t.Fatal(err)
	}
	codes := map[uint8]int{}
	for ti, it := range tr.Items {
		if it.CloudCover < 20 || it.CloudCover > 80 || len(codes) > 6 {
			continue
		}
		ds, err := godal.Open(filepath.Join(dir, itemDir(it.ID), "SCL.tif"))
		if err != nil {
			t.Fatal(err)
		}
		m := sc.n / 2
		buf := make([]uint8, m*m)
		if err := ds.Bands()[0].Read(0, 0, buf, m, m); err != nil {
			t.Fatal(err)
		}
		ds.Close()
		sk := sc.newSky(ti)
		for q, v := range buf {
			codes[v]++
			if _, _, _, nd := sk.at(q); nd != (v == SCLNoData) {
				t.Fatalf("%s SCL pixel %d = %d, swath model says nodata %v", it.ID, q, v, nd)
			} else if nd {
				continue
			}
			masked := v == SCLShadow || v == SCLCloudMedium || v == SCLCloudHigh || v == SCLCirrus
			if f := sk.flag(q); (f != 0) != masked {
				t.Fatalf("%s SCL pixel %d = %d, cloud model says %d", it.ID, q, v, f)
			}
		}
	}
	for _, c := range []uint8{SCLShadow, SCLVegetation, SCLNotVeg, SCLWater, SCLCloudMedium, SCLCloudHigh} {
		if codes[c] == 0 {
			t.Errorf("SCL class %d never seen on partly cloudy items (%v)", c, codes)
		}
	}
}

// TestPhenologyInRasters reads the talhão means on clear dates: soybean at
// its peak is green, a freshly tilled field shows bare soil (low NDTI).
func TestPhenologyInRasters(t *testing.T) {
	dir, tr := fixture(t)
	mean := func(f FieldTruth, it ItemTruth) (ndvi, ndti float64, ok bool) {
		b := fieldBox(t, dir, f.ID, tr)
		read := func(file string, res int) []float64 {
			ds, err := godal.Open(filepath.Join(dir, itemDir(it.ID), file))
			if err != nil {
				t.Fatal(err)
			}
			defer ds.Close()
			k := res / 10
			w, h := (b[2]-b[0])/k, (b[3]-b[1])/k
			buf := make([]float64, w*h)
			if err := ds.Bands()[0].Read(b[0]/k, b[1]/k, buf, w, h); err != nil {
				t.Fatal(err)
			}
			return buf
		}
		for _, v := range read("SCL.tif", 20) { // only wholly clear boxes
			if v != SCLVegetation && v != SCLNotVeg {
				return 0, 0, false
			}
		}
		rd := func(file string, res int) float64 {
			buf := read(file, res)
			var s float64
			for _, v := range buf {
				s += (v - float64(it.DNOffset)) / 1e4
			}
			return s / float64(len(buf))
		}
		r, n, s1, s2 := rd("B04.tif", 10), rd("B08.tif", 10), rd("B11.tif", 20), rd("B12.tif", 20)
		return (n - r) / (n + r), (s1 - s2) / (s1 + s2), true
	}
	var peaks, tilled int
	for _, f := range tr.Fields {
		for _, it := range tr.Items {
			for _, c := range f.Cycles {
				if c.Crop == pheno.Soja && !it.Date.Before(c.Peak.Time) && it.Date.Before(c.Senesce.Time) {
					if ndvi, _, ok := mean(f, it); ok {
						peaks++
						if ndvi < 0.75 {
							t.Errorf("%s soybean at full canopy on %s: NDVI %.3f, want ≥ 0.75", f.ID, it.Date.Format(dateLayout), ndvi)
						}
					}
				}
			}
			for _, ti := range f.Tillage {
				// Bare until the crop that follows emerges.
				end := ti.Date.AddDate(0, 0, 12)
				for _, c := range f.Cycles {
					if c.Sowing.After(ti.Date.Time) {
						end = c.Emergence.Time
						break
					}
				}
				if it.Date.After(ti.Date.Time) && it.Date.Before(end) {
					if ndvi, ndti, ok := mean(f, it); ok {
						tilled++
						if ndti > 0.1 || ndvi > 0.3 {
							t.Errorf("%s days after tillage %s on %s: NDVI %.3f NDTI %.3f, want bare soil", f.ID, ti.Date.Format(dateLayout), it.Date.Format(dateLayout), ndvi, ndti)
						}
					}
				}
			}
		}
	}
	if peaks < 3 || tilled < 1 {
		t.Errorf("clear dates checked: %d at soybean peak, %d after tillage; want ≥ 3 and ≥ 1", peaks, tilled)
	}
	t.Logf("clear dates checked: %d at soybean peak, %d after tillage", peaks, tilled)
}

// fieldBox returns a box of 10 m pixels (col0, row0, col1, row1, even
// numbers) inside the talhão, 100 m from its bounding box, from the
// talhão's pixel layout.
func fieldBox(t *testing.T, dir, id string, tr Truth) [4]int {
	for _, d := range designs() {
		if d.id == id {
			b := bounds(d.ring)
			c := func(v float64) int { return int(v/20) * 2 }
			return [4]int{c(b[0] + 100), c(b[1] + 100), c(b[0]+300) + 2, c(b[1]+300) + 2}
		}
	}
	t.Fatalf("no design %s", id)
	return [4]int{}
}

// TestDEMSlope recomputes the mean slope of two talhões from dem.tif (Horn
// on the 1 arc-second grid, metres from the WGS84 ellipsoid) and compares
// it with the truth.
func TestDEMSlope(t *testing.T) {
	dir, tr := fixture(t)
	ds, err := godal.Open(filepath.Join(dir, DEMFile))
	if err != nil {
		t.Fatal(err)
	}
	defer ds.Close()
	st := ds.Structure()
	gt, _ := ds.GeoTransform()
	z := make([]float32, st.SizeX*st.SizeY)
	if err := ds.Bands()[0].Read(0, 0, z, st.SizeX, st.SizeY); err != nil {
		t.Fatal(err)
	}
	bb := tr.Scene.BBox
	if gt[0] > bb[0] || gt[3] < bb[3] || gt[0]+float64(st.SizeX)*gt[1] < bb[2] || gt[3]+float64(st.SizeY)*gt[5] > bb[1] {
		t.Fatalf("DEM %v (%dx%d) does not cover the scene %v", gt, st.SizeX, st.SizeY, bb)
	}
	fields, _ := grid.Read(context.Background(), filepath.Join(dir, FieldsFile), grid.ReadOptions{})
	for _, f := range fields {
		ft := fieldByID(t, tr, f.ID)
		var sum float64
		n := 0
		for i := 1; i < st.SizeY-1; i++ {
			lat := gt[3] + (float64(i)+0.5)*gt[5]
			dy := -gt[5] * math.Pi / 180 * 6371000
			dx := gt[1] * math.Pi / 180 * 6371000 * math.Cos(lat*math.Pi/180)
			for j := 1; j < st.SizeX-1; j++ {
				lon := gt[0] + (float64(j)+0.5)*gt[1]
				if !inRing(f.Geometry[0][0], lon, lat) {
					continue
				}
				at := func(di, dj int) float64 { return float64(z[(i+di)*st.SizeX+j+dj]) }
				gx := ((at(-1, 1) + 2*at(0, 1) + at(1, 1)) - (at(-1, -1) + 2*at(0, -1) + at(1, -1))) / (8 * dx)
				gy := ((at(1, -1) + 2*at(1, 0) + at(1, 1)) - (at(-1, -1) + 2*at(-1, 0) + at(-1, 1))) / (8 * dy)
				sum += math.Hypot(gx, gy)
				n++
			}
		}
		got := 100 * sum / float64(n)
		if !testkit.Near(got, ft.Slope.MeanPct, 0.15) {
			t.Errorf("%s: mean slope from dem.tif %.2f%%, truth %.2f%%", f.ID, got, ft.Slope.MeanPct)
		}
	}
}

func FuzzSeasonStartYear(f *testing.F) {
	for _, s := range []string{"2026/2027", "2026/2026", "x/y", "", "2026/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		y, err := seasonStartYear(s)
		if err != nil {
			return
		}
		if got, err := seasonStartYear(seasonName(y)); err != nil || got != y {
			t.Errorf("round trip of %q: %d → %q → %d, %v", s, y, seasonName(y), got, err)
		}
	})
}

func FuzzDayJSON(f *testing.F) {
	for _, s := range []string{`"2024-02-29"`, `"2023-02-29"`, `2024`, `""`, `"2024-1-2"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var d Day
		if err := json.Unmarshal([]byte(s), &d); err != nil {
			return
		}
		b, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		var e Day
		if err := json.Unmarshal(b, &e); err != nil || !e.Equal(d.Time) {
			t.Errorf("round trip of %s: %s → %v, %v", s, b, e, err)
		}
	})
}

func TestLevelsAndYears(t *testing.T) {
	d := func(s string) time.Time { return must(time.Parse(dateLayout, s)) }
	tests := []struct {
		name     string
		a, b     time.Time
		years, l int
	}{
		{"same day", d("2024-09-10"), d("2024-09-10"), 0, 1},
		{"day before anniversary", d("2023-08-02"), d("2026-08-01"), 2, 1},
		{"anniversary", d("2023-08-01"), d("2026-08-01"), 3, 2},
		{"leap day", d("2020-02-29"), d("2025-02-28"), 4, 2},
		{"five", d("2021-07-01"), d("2026-08-01"), 5, 3},
		{"eight", d("2018-08-01"), d("2026-08-01"), 8, 4},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			y := FullYears(tc.a, tc.b)
			if y != tc.years || zarc.TLevel(float64(y)) != tc.l {
				t.Errorf("FullYears(%s, %s) = %d (level %d), want %d (level %d)", tc.a.Format(dateLayout), tc.b.Format(dateLayout), y, zarc.TLevel(float64(y)), tc.years, tc.l)
			}
		})
	}
	for _, c := range []struct {
		pct float64
		l   int
	}{{0, 1}, {29.99, 1}, {30, 2}, {59.99, 2}, {60, 3}, {89.99, 3}, {90, 4}, {100, 4}} {
		if got := zarc.CLevel(c.pct); got != c.l {
			t.Errorf("zarc.CLevel(%v) = %d, want %d", c.pct, got, c.l)
		}
	}
}
