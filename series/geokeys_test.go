package series

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/airbusgeo/godal"
)

// crsCase is a GeoTIFF CRS (EPSG code, WKT or PROJ string) and the GTiff
// creation options of its file (byte order, BigTIFF).
type crsCase struct {
	name, srs string
	opts      []string
}

// crsCases are CRSs a cache keyed too coarsely would confuse: the same UTM
// zone on three datums, a custom Transverse Mercator (no EPSG code) on
// GRS80 and on one ellipsoid with two datum shifts (TOWGS84), and the
// other byte order and BigTIFF.
var crsCases = []crsCase{
	{"utm21s", "EPSG:32721", nil},
	{"sirgas-utm21s", "EPSG:31981", nil},
	{"sad69-utm21s", "EPSG:29191", nil},
	{"custom-tm", customTM + "+ellps=GRS80", nil},
	{"custom-tm-towgs84-a", customTM + "+ellps=aust_SA +towgs84=-57,1,-41,0,0,0,0", nil},
	{"custom-tm-towgs84-b", customTM + "+ellps=aust_SA +towgs84=-67,4,-38,0,0,0,0", nil},
	{"utm21s-bigtiff-be", "EPSG:32721", []string{"BIGTIFF=YES", "ENDIANNESS=BIG"}},
	{"custom-tm-bigtiff", customTM + "+ellps=GRS80", []string{"BIGTIFF=YES"}},
}

// customTM is a Transverse Mercator of no EPSG code (central meridian
// 54° W, UTM's other parameters), to be completed with a datum.
const customTM = "+proj=tmerc +lat_0=0 +lon_0=-54 +k=0.9996 +x_0=500000 +y_0=10000000 +units=m +no_defs "

// writeCRSTIF writes a small georeferenced GeoTIFF in the CRS of c.
func writeCRSTIF(tb testing.TB, path string, c crsCase) {
	tb.Helper()
	registerGDAL()
	ds, err := godal.Create(godal.GTiff, path, 1, godal.UInt16, 8, 8, godal.CreationOption(append([]string{"TILED=YES", "BLOCKXSIZE=16", "BLOCKYSIZE=16"}, c.opts...)...))
	if err != nil {
		tb.Fatal(err)
	}
	sr, err := godal.NewSpatialRef(c.srs)
	if err != nil {
		tb.Fatalf("%s: %v", c.name, err)
	}
	defer sr.Close()
	if err := ds.SetSpatialRef(sr); err != nil {
		tb.Fatal(err)
	}
	if err := ds.SetGeoTransform([6]float64{600000, 10, 0, 8700000, 0, -10}); err != nil {
		tb.Fatal(err)
	}
	if err := ds.Close(); err != nil {
		tb.Fatal(err)
	}
}

// gdalWKT is what GDAL itself gives for the file, as open did before the
// cache: a fresh open, ds.Projection().
func gdalWKT(tb testing.TB, path string) string {
	tb.Helper()
	ds, err := godal.Open(path, godal.RasterOnly(), godal.Drivers(openDrivers...), godal.ConfigOption("GDAL_DISABLE_READDIR_ON_OPEN=EMPTY_DIR"))
	if err != nil {
		tb.Fatal(err)
	}
	defer ds.Close()
	return ds.Projection()
}

// TestOpenCRSSameAsGDAL opens two files of each CRS case, all first copies
// before all second ones, through the reader (which reuses a WKT by
// GeoTIFF tags), and wants each file's WKT — the CRS its cells are
// projected to — equal to GDAL's own for that file, and the cases told
// apart: a cache that took one file's CRS for another's would move cells.
func TestOpenCRSSameAsGDAL(t *testing.T) {
	dir := t.TempDir()
	r := &reader{localCfg: []string{"GDAL_DISABLE_READDIR_ON_OPEN=EMPTY_DIR"}, log: &ioLog{}, wkts: newWKTCache()}
	seen := map[string]string{}
	for copyN := range 2 {
		for _, c := range crsCases {
			p := filepath.Join(dir, fmt.Sprintf("%s-%d.tif", c.name, copyN))
			writeCRSTIF(t, p, c)
			if tags, err := readGeoTags(p); err != nil || tags == "" {
				t.Fatalf("%s: GeoTIFF tags not read (%v): the cache would not be exercised", p, err)
			}
			f, reason, err := r.open(p)
			if err != nil {
				t.Fatalf("%s: %s %v", p, reason, err)
			}
			got := f.wkt
			f.ds.Close()
			if want := gdalWKT(t, p); got != want {
				t.Errorf("%s: CRS\n%s\nwant GDAL's\n%s", p, got, want)
			}
			if prev, ok := seen[c.name]; ok && prev != got {
				t.Errorf("%s: copy %d has another CRS than copy 0", c.name, copyN)
			}
			seen[c.name] = got
		}
	}
	// The cases are distinct CRSs for GDAL (the two BigTIFF files repeat
	// a CRS of another case on purpose).
	distinct := map[string]string{}
	for _, c := range crsCases {
		if c.opts != nil {
			continue
		}
		if other, ok := distinct[seen[c.name]]; ok {
			t.Errorf("%s and %s have the same WKT: the case proves nothing", c.name, other)
		}
		distinct[seen[c.name]] = c.name
	}
	if !strings.Contains(seen["custom-tm-towgs84-b"], "TOWGS84[-67,4,-38,") {
		t.Errorf("custom-tm-towgs84-b lost its datum shift: %s", seen["custom-tm-towgs84-b"])
	}
}

// TestOpenCRSShiftMovesCells shows what a wrong CRS costs: the same point
// falls on another pixel of a custom-TM file depending on its datum shift.
func TestOpenCRSShiftMovesCells(t *testing.T) {
	dir := t.TempDir()
	r := &reader{localCfg: []string{"GDAL_DISABLE_READDIR_ON_OPEN=EMPTY_DIR"}, log: &ioLog{}, wkts: newWKTCache()}
	var px [][2]float64
	for _, c := range crsCases[4:6] {
		p := filepath.Join(dir, c.name+".tif")
		writeCRSTIF(t, p, c)
		f, _, err := r.open(p)
		if err != nil {
			t.Fatal(err)
		}
		f.ds.Close()
		x, y, err := r.toCRS(f.wkt, []float64{-57.94}, []float64{-11.77})
		if err != nil {
			t.Fatal(err)
		}
		px = append(px, [2]float64{x[0], y[0]})
	}
	if d := max(abs(px[0][0]-px[1][0]), abs(px[0][1]-px[1][1])); d < 5 {
		t.Errorf("the two datum shifts place the point %.2f m apart, want ≥ 5 m (half a pixel)", d)
	}
}

func abs(v float64) float64 { return max(v, -v) }

// TestProjectionFallsBackToGDAL covers the files the cache leaves to GDAL:
// no GeoTIFF CRS, a file replaced between the tags read and the open, an
// open that may read a sidecar.
func TestProjectionFallsBackToGDAL(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "nocrs.tif")
	writeTIF(t, p, raster{w: 4, h: 4, dtype: godal.Byte})
	if tags, err := readGeoTags(p); err != nil || tags != "" {
		t.Errorf("no CRS: tags %q, %v; want none", tags, err)
	}
	r := &reader{localCfg: []string{"GDAL_DISABLE_READDIR_ON_OPEN=EMPTY_DIR"}, log: &ioLog{}, wkts: newWKTCache()}
	if _, reason, err := r.open(p); reason != SkipNoCRS || err == nil {
		t.Errorf("no CRS: %q %v; want %q", reason, err, SkipNoCRS)
	}
	// The path names another file (another CRS) when GDAL opens it than
	// when the tags were read: GDAL's WKT of the file opened, not the
	// cached one of the tags read.
	c := newWKTCache()
	cfg := []string{"GDAL_DISABLE_READDIR_ON_OPEN=EMPTY_DIR"}
	a, b := filepath.Join(dir, "a.tif"), filepath.Join(dir, "b.tif")
	writeCRSTIF(t, a, crsCases[0])
	writeCRSTIF(t, b, crsCases[3])
	for range 2 { // a miss, then a hit on a's key
		g := c.tags(a, cfg)
		if g.key == "" {
			t.Fatal("no key for a")
		}
		ds, err := godal.Open(a, godal.RasterOnly(), godal.ConfigOption(cfg...))
		if err != nil {
			t.Fatal(err)
		}
		_ = c.projection(a, g, ds)
		ds.Close()
	}
	g := c.tags(a, cfg)
	writeCRSTIF(t, a+".new", crsCases[3])
	if err := os.Rename(a+".new", a); err != nil {
		t.Fatal(err)
	}
	ds, err := godal.Open(a, godal.RasterOnly(), godal.ConfigOption(cfg...))
	if err != nil {
		t.Fatal(err)
	}
	got := c.projection(a, g, ds)
	ds.Close()
	if want := gdalWKT(t, b); got != want {
		t.Errorf("file replaced after its tags were read: CRS\n%s\nwant the new file's\n%s", got, want)
	}
	for _, cfg := range [][]string{nil, {"GDAL_DISABLE_READDIR_ON_OPEN=EMPTY_DIR", "GDAL_DISABLE_READDIR_ON_OPEN=FALSE"}} {
		if noSidecars(cfg) {
			t.Errorf("%q: sidecars would be read; want the cache off", cfg)
		}
	}
	if !noSidecars([]string{"GDAL_DISABLE_READDIR_ON_OPEN=FALSE", "gdal_disable_readdir_on_open=empty_dir"}) {
		t.Error("the last setting (EMPTY_DIR) must win")
	}
}

// readGeoTags is geoTags of the file at path.
func readGeoTags(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	return geoTags(f)
}

// FuzzGeoTags feeds geoTags' parser arbitrary headers and directories:
// it must fail or succeed, never panic or allocate without bound.
func FuzzGeoTags(f *testing.F) {
	dir := f.TempDir()
	for _, c := range []crsCase{crsCases[0], crsCases[5], crsCases[7]} {
		p := filepath.Join(dir, c.name+".tif")
		writeCRSTIF(f, p, c)
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b[:min(len(b), 4096)])
	}
	f.Add([]byte("II*\x00\x08\x00\x00\x00\xff\xff"))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = geoTags(bytes.NewReader(b))
	})
}

// BenchmarkOpenProjection compares an open that asks GDAL for every
// file's WKT (before) with the open of the reader (after), on files of
// one CRS as a scene archive has them. Metric: cpu-ms/open (process CPU
// over the opens, so the ratio holds on a busy machine).
func BenchmarkOpenProjection(b *testing.B) {
	registerGDAL()
	dir := b.TempDir()
	var paths []string
	for i := range 64 {
		p := filepath.Join(dir, fmt.Sprintf("b%d.tif", i))
		writeCRSTIF(b, p, crsCases[0])
		paths = append(paths, p)
	}
	cfg := []string{"GDAL_DISABLE_READDIR_ON_OPEN=EMPTY_DIR"}
	for _, mode := range []string{"before", "after"} {
		b.Run(mode, func(b *testing.B) {
			c := newWKTCache()
			c0 := processCPU()
			for i := 0; i < b.N; i++ {
				p := paths[i%len(paths)]
				var g geoFile
				if mode == "after" {
					g = c.tags(p, cfg)
				}
				ds, err := godal.Open(p, godal.RasterOnly(), godal.Drivers(openDrivers...), godal.ConfigOption(cfg...))
				if err != nil {
					b.Fatal(err)
				}
				var wkt string
				if mode == "before" {
					wkt = ds.Projection()
				} else {
					wkt = c.projection(p, g, ds)
				}
				ds.Close()
				if wkt == "" {
					b.Fatal("no CRS")
				}
			}
			b.ReportMetric(float64(processCPU()-c0)/float64(time.Millisecond)/float64(b.N), "cpu-ms/open")
		})
	}
}

// processCPU is the CPU time (user + system) of the process so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
