package stacapi

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airbusgeo/godal"
	"github.com/manejo/manejo/grid"
	"github.com/manejo/manejo/series"
	"github.com/manejo/manejo/storage"
	"github.com/paulmach/orb"
)

// dataHost is an https server of one GeoTIFF that records the
// Authorization header of every request; /redirect.tif answers 302 to
// another server's copy.
type dataHost struct {
	*httptest.Server
	mu     sync.Mutex
	auth   []string // path and Authorization of each request
	target string   // where /redirect.tif points
}

func newDataHost(t *testing.T, tif string) *dataHost {
	d := &dataHost{}
	d.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d.mu.Lock()
		d.auth = append(d.auth, r.URL.Path+" "+r.Header.Get("Authorization"))
		target := d.target
		d.mu.Unlock()
		if r.URL.Path == "/redirect.tif" {
			http.Redirect(w, r, target, http.StatusFound)
			return
		}
		http.ServeFile(w, r, tif)
	}))
	t.Cleanup(d.Close)
	return d
}

func (d *dataHost) requests() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.auth...)
}

// hlsTIF writes a 10 × 10 UInt16 GeoTIFF in EPSG:4326 over
// lon −55.7..−55.6, lat −11.9..−11.8, every pixel 1000 (HLS: 0.1).
func hlsTIF(t *testing.T) string {
	storage.InitGDAL()
	p := filepath.Join(t.TempDir(), "b.tif")
	ds, err := godal.Create(godal.GTiff, p, 1, godal.UInt16, 10, 10)
	if err != nil {
		t.Fatal(err)
	}
	sr, _ := godal.NewSpatialRef("EPSG:4326")
	defer sr.Close()
	if err := ds.SetSpatialRef(sr); err != nil {
		t.Fatal(err)
	}
	if err := ds.SetGeoTransform([6]float64{-55.7, 0.01, 0, -11.8, 0, -0.01}); err != nil {
		t.Fatal(err)
	}
	buf := make([]uint16, 100)
	for i := range buf {
		buf[i] = 1000
	}
	if err := ds.Bands()[0].Write(0, 0, buf, 10, 10); err != nil {
		t.Fatal(err)
	}
	if err := ds.Close(); err != nil {
		t.Fatal(err)
	}
	return p
}

// hlsItem is an HLSS30_2.0 item whose five assets are the file at href.
func hlsItem(id, href string, day int) *series.Item {
	as := map[string]series.Asset{}
	for _, k := range []string{"B04", "B8A", "B11", "B12", "Fmask"} {
		as[k] = series.Asset{Href: href, Band: 1}
	}
	return &series.Item{ID: id, Collection: "HLSS30_2.0", Datetime: time.Date(2024, 1, day, 13, 0, 0, 0, time.UTC),
		BBox: orb.Bound{Min: orb.Point{-55.7, -11.9}, Max: orb.Point{-55.6, -11.8}}, Assets: as}
}

// TestEarthdataBearer: the Earthdata token reaches the Earthdata data host
// on every request GDAL makes, and no other host: not a second data host
// of the same catalog, and not the host a data-host redirect leads to (as
// LP DAAC redirects to signed S3 URLs). The token appears in no problem
// or error.
func TestEarthdataBearer(t *testing.T) {
	tif := hlsTIF(t)
	nasa, other := newDataHost(t, tif), newDataHost(t, tif)
	nasa.mu.Lock()
	nasa.target = other.URL + "/b.tif" // GDAL's requests go through cgo, unseen by the race detector
	nasa.mu.Unlock()
	const token = "edl-token-3f9a"
	items := []*series.Item{
		hlsItem("HLS.S30.T21LXG.2024001", nasa.URL+"/b.tif", 1),
		hlsItem("HLS.S30.T21LXG.2024002", other.URL+"/b.tif", 2),
		hlsItem("HLS.S30.T21LXG.2024003", nasa.URL+"/redirect.tif", 3),
	}
	nasaHost := strings.TrimPrefix(nasa.URL, "https://")
	acc := &Access{EarthdataToken: token, EarthdataHosts: []string{nasaHost}}
	cat, err := series.NewCatalog(items, nasa.URL, []string{nasa.URL + "/", other.URL + "/"})
	if err != nil {
		t.Fatal(err)
	}
	if err := acc.Apply(context.Background(), cat); err != nil {
		t.Fatal(err)
	}
	poly := orb.Polygon{orb.Ring{{-55.66, -11.86}, {-55.64, -11.86}, {-55.64, -11.84}, {-55.66, -11.84}, {-55.66, -11.86}}}
	g := grid.Grid{Field: grid.Field{ID: "T1", Geometry: orb.MultiPolygon{poly}}, EPSG: 32721,
		Cells: []grid.Cell{{FieldID: "T1", ID: "a", Centre: orb.Point{-55.65, -11.85}}}}
	// The loopback servers' certificate is httptest's own: GDAL 3.6 did
	// not take CURL_CA_BUNDLE as an open option, so TLS checks are off here.
	opts := series.Options{Workers: 1, GDALConfig: []string{"GDAL_HTTP_UNSAFESSL=YES", "GDAL_HTTP_MAX_RETRY=0",
		"CPL_VSIL_CURL_NON_CACHED=/vsicurl/" + nasa.URL + ":/vsicurl/" + other.URL}}
	obs, st, err := series.Sample(context.Background(), cat, []grid.Grid{g}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(obs) != 3 {
		t.Fatalf("%d observations (stats %+v), want one per item", len(obs), st)
	}
	for _, p := range st.Problems {
		if strings.Contains(p.Error(), token) {
			t.Errorf("problem shows the token: %v", p)
		}
	}
	nreq, oreq := nasa.requests(), other.requests()
	if len(nreq) == 0 || len(oreq) == 0 {
		t.Fatalf("requests: Earthdata host %d, other %d; want both read", len(nreq), len(oreq))
	}
	redirected := 0
	for i, a := range nreq {
		path, auth, _ := strings.Cut(a, " ")
		if auth != "Bearer "+token {
			t.Errorf("Earthdata host request %d (%s): Authorization %q, want the bearer token", i, path, auth)
		}
		if path == "/redirect.tif" {
			redirected++
		}
	}
	for i, a := range oreq {
		if path, auth, _ := strings.Cut(a, " "); auth != "" {
			t.Errorf("other host request %d (%s): Authorization %q, want none", i, path, auth)
		}
	}
	if redirected == 0 {
		t.Errorf("no request for /redirect.tif reached the Earthdata host")
	}
	t.Logf("Earthdata host: %d requests (%d redirected to the other host), all with the bearer; other host: %d requests, none with it", len(nreq), redirected, len(oreq))

	// Control: with the other host named an Earthdata host too, it does
	// see the token, so the recording above would catch a leak.
	items[1] = hlsItem("HLS.S30.T21LXG.2024002", other.URL+"/b.tif", 2)
	acc = &Access{EarthdataToken: token, EarthdataHosts: []string{strings.TrimPrefix(other.URL, "https://")}}
	cat, _ = series.NewCatalog(items[1:2], other.URL, []string{other.URL + "/"})
	if err := acc.Apply(context.Background(), cat); err != nil {
		t.Fatal(err)
	}
	if _, _, err := series.Sample(context.Background(), cat, []grid.Grid{g}, opts); err != nil {
		t.Fatal(err)
	}
	if got := other.requests(); !strings.HasSuffix(got[len(got)-1], " Bearer "+token) {
		t.Errorf("control: the other host named as Earthdata got %q, want the bearer", got[len(got)-1])
	}
}
