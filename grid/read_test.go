package grid

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/manejo/manejo/internal/testkit"
	"github.com/manejo/manejo/zarc"
)

const demoTalhoes = "../testdata/demo/talhoes.geojson"

// demoAreas are the geodesic areas of the demo talhões (PROJ
// geod_polygonarea, 4 decimals).
var demoAreas = map[string]float64{
	"MT-SIN-001": 30.0000, "MT-SIN-002": 98.9991, "MT-SIN-003": 100.0010,
	"MT-SIN-004": 250.0018, "MT-SIN-005": 1199.9999,
}

func TestReadDemo(t *testing.T) {
	fs, errs := Read(context.Background(), demoTalhoes, ReadOptions{})
	if len(errs) > 0 || len(fs) != 5 {
		t.Fatalf("Read(demo) = %d fields, errors %v; want 5, none", len(fs), errs)
	}
	for _, f := range fs {
		want, ok := demoAreas[f.ID]
		if !ok {
			t.Errorf("unexpected id %q", f.ID)
			continue
		}
		if got := AreaHa(f.Geometry); math.Abs(got-want) > 1e-4+1e-4*want {
			t.Errorf("%s: %.4f ha, want %.4f", f.ID, got, want)
		}
		if math.Abs(refAreaHa(f.Geometry)-want) > 5e-5 {
			t.Errorf("%s: PROJ says %.5f ha, table %.4f", f.ID, refAreaHa(f.Geometry), want)
		}
		if err := Validate(f); err != nil {
			t.Error(err)
		}
		if f.PlantioContorno == nil || f.Terraceamento == nil {
			t.Errorf("%s: declarations not read", f.ID)
		}
	}
	if fs[1].Crop != zarc.Milho || fs[0].Crop != zarc.Soja || len(fs[4].Geometry[0]) != 2 {
		t.Errorf("crop/hole not read: %v %v, %d rings", fs[0].Crop, fs[1].Crop, len(fs[4].Geometry[0]))
	}
}

func TestReadGeoJSONFeatures(t *testing.T) {
	sq := `{"type":"Polygon","coordinates":[[[-55.6,-11.8],[-55.59,-11.8],[-55.59,-11.79],[-55.6,-11.79],[-55.6,-11.8]]]}`
	feat := func(props, geom string) string {
		return `{"type":"Feature","properties":` + props + `,"geometry":` + geom + `}`
	}
	fc := `{"type":"FeatureCollection","features":[` + strings.Join([]string{
		feat(`{"id":"A","crop":"milho","plantioContorno":true,"terraceamento":0,"cpfProdutor":"12345678909","cnpjPropriedade":12345678000195}`, sq), // 1 ok
		feat(`{"id":42}`, sq), // 2 numeric id
		`{"type":"Feature","id":"F3","properties":null,"geometry":` + sq + `}`, // 3 Feature id member
		feat(`{"name":"no id"}`, sq),                                            // 4
		feat(`{"id":"B","crop":"arroz"}`, sq),                                   // 5 bad crop
		feat(`{"id":"C"}`, `{"type":"LineString","coordinates":[[0,0],[1,1]]}`), // 6 line
		feat(`{"id":"D"}`, sq),                                                  // 7 duplicate
		feat(`{"id":"D"}`, sq),                                                  // 8 duplicate
		feat(`{"id":"E","terraceamento":2}`, sq),                                // 9 bad flag
		feat(`{"id":"F"}`, `null`),                                              // 10 no geometry
		feat(`{"id":"G"}`, `{"type":"Polygon","coordinates":"x"}`),              // 11 bad coordinates
		feat(`{"id":"H","crop":"Soja "}`, `{"type":"MultiPolygon","coordinates":[[[[-55.6,-11.8],[-55.59,-11.8],[-55.59,-11.79],[-55.6,-11.8]]]]}`), // 12 ok
	}, ",") + `]}`
	path := filepath.Join(t.TempDir(), "t.geojson")
	if err := os.WriteFile(path, []byte(fc), 0o644); err != nil {
		t.Fatal(err)
	}
	fs, errs := Read(context.Background(), path, ReadOptions{})
	var ids []string
	for _, f := range fs {
		ids = append(ids, f.ID)
	}
	if got := strings.Join(ids, ","); got != "A,42,F3,H" {
		t.Errorf("ids = %s, want A,42,F3,H", got)
	}
	a := fs[0]
	if a.Crop != zarc.Milho || a.PlantioContorno == nil || *a.PlantioContorno != 1 || a.Terraceamento == nil || *a.Terraceamento != 0 ||
		a.CPFProdutor != "12345678909" || a.CNPJPropriedade != "12345678000195" || a.Source != path {
		t.Errorf("talhão A = %+v", a)
	}
	if fs[3].Crop != zarc.Soja || len(fs[3].Geometry) != 1 {
		t.Errorf("talhão H = %+v", fs[3])
	}
	want := []struct {
		index int
		id    string
		msg   string
	}{
		{4, "", `no id (property "id")`},
		{5, "B", `crop "arroz": want one of soja, milho, algodao`},
		{6, "C", "geometry LineString, want Polygon or MultiPolygon"},
		{7, "D", `id "D" is used by features 7, 8`},
		{8, "D", `id "D" is used by features 7, 8`},
		{9, "E", "terraceamento 2: want 0 or 1"},
		{10, "F", "no geometry"},
		{11, "G", "parse geometry"},
	}
	if len(errs) != len(want) {
		t.Fatalf("errors = %v, want %d", errs, len(want))
	}
	for i, w := range want {
		var fe *FieldError
		if !errors.As(errs[i], &fe) || fe.Index != w.index || fe.ID != w.id || !strings.Contains(errs[i].Error(), w.msg) || !strings.Contains(errs[i].Error(), path) {
			t.Errorf("error %d = %v, want feature %d id %q %q", i, errs[i], w.index, w.id, w.msg)
		}
		if strings.Contains(errs[i].Error(), "12345678909") {
			t.Errorf("error %d leaks a CPF: %v", i, errs[i])
		}
	}
}

func TestReadIDField(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.json")
	os.WriteFile(path, []byte(`{"type":"Feature","id":"x","properties":{"talhao":"T-9"},"geometry":{"type":"Polygon","coordinates":[[[-55.6,-11.8],[-55.59,-11.8],[-55.59,-11.79],[-55.6,-11.8]]]}}`), 0o644)
	fs, errs := Read(context.Background(), path, ReadOptions{IDField: "talhao"})
	if len(errs) != 0 || len(fs) != 1 || fs[0].ID != "T-9" {
		t.Errorf("Read(--id-field talhao) = %+v, %v", fs, errs)
	}
}

// TestReadDocuments reproduces the grid side of defect 10 of issue 19: a CPF
// given as a JSON number lost its leading zero (01234567890 → 1234567890)
// and was then dropped as invalid without a word; --id-field cpfProdutor put
// CPFs into file names, run.json and Parquet. Numbers get their leading
// zeros back; a CPF/CNPJ id field, or an id written as a CPF/CNPJ, is
// refused without echoing the number.
func TestReadDocuments(t *testing.T) {
	sq := `{"type":"Polygon","coordinates":[[[-55.6,-11.8],[-55.59,-11.8],[-55.59,-11.79],[-55.6,-11.79],[-55.6,-11.8]]]}`
	feat := func(props string) string {
		return `{"type":"Feature","properties":` + props + `,"geometry":` + sq + `}`
	}
	fc := `{"type":"FeatureCollection","features":[` + strings.Join([]string{
		feat(`{"id":"A","cpfProdutor":1234567890,"cnpjPropriedade":191000100}`), // 1: leading zeros lost
		feat(`{"id":"B","cpfProdutor":1.2345678909e10}`),                        // 2: exponent, 11 digits
		feat(`{"id":"C","cpfProdutor":123456789012}`),                           // 3: 12 digits
		feat(`{"id":"D","cpfProdutor":-5}`),                                     // 4
		feat(`{"id":"012.345.678-90"}`),                                         // 5: id is a CPF
		feat(`{"id":"00.000.000/0001-91"}`),                                     // 6: id is a CNPJ
		feat(`{"id":"01234567890"}`),                                            // 7: bare digits are an id
	}, ",") + `]}`
	path := filepath.Join(t.TempDir(), "t.geojson")
	if err := os.WriteFile(path, []byte(fc), 0o644); err != nil {
		t.Fatal(err)
	}
	fs, errs := Read(context.Background(), path, ReadOptions{})
	got := map[string]Field{}
	for _, f := range fs {
		got[f.ID] = f
	}
	if a := got["A"]; a.CPFProdutor != "01234567890" || a.CNPJPropriedade != "00000191000100" {
		t.Errorf("A: cpf %q cnpj %q, want the leading zeros back", a.CPFProdutor, a.CNPJPropriedade)
	}
	if b := got["B"]; b.CPFProdutor != "12345678909" {
		t.Errorf("B: cpf %q", b.CPFProdutor)
	}
	if _, ok := got["01234567890"]; !ok || len(fs) != 3 {
		t.Errorf("fields %v, want A, B and 01234567890", got)
	}
	wantIdx := []int{3, 4, 5, 6}
	if len(errs) != len(wantIdx) {
		t.Fatalf("errors %v, want features %v", errs, wantIdx)
	}
	for i, e := range errs {
		var fe *FieldError
		if !errors.As(e, &fe) || fe.Index != wantIdx[i] {
			t.Errorf("error %d = %v, want feature %d", i, e, wantIdx[i])
		}
		for _, leak := range []string{"123456789012", "012.345.678", "0001-91"} {
			if strings.Contains(e.Error(), leak) {
				t.Errorf("error %v leaks a document number", e)
			}
		}
		if fe.Index >= 5 && (!errors.Is(e, ErrPersonalID) || fe.ID != "") {
			t.Errorf("feature %d: %v, want ErrPersonalID without the id", fe.Index, e)
		}
	}

	for _, name := range []string{"cpfProdutor", "cnpjPropriedade", "cpfProdut", "CPF", "cnpj_dono"} {
		fs, errs := Read(context.Background(), path, ReadOptions{IDField: name})
		if len(fs) != 0 || len(errs) != 1 || !errors.Is(errs[0], ErrPersonalID) || !errors.Is(errs[0], ErrSource) {
			t.Errorf("--id-field %s: %d fields, %v; want one ErrPersonalID", name, len(fs), errs)
		}
	}
	if err := CheckIDField("talhao"); err != nil {
		t.Error(err)
	}
}

// The SINM key of a talhão (issue 18) is read from chaveClassificacaoNM
// (or its Shapefile form chaveClass): a string or an integer; a key with
// spaces or control characters fails its talhão without being echoed.
func TestReadClassificationKey(t *testing.T) {
	sq := `{"type":"Polygon","coordinates":[[[-55.6,-11.8],[-55.59,-11.8],[-55.59,-11.79],[-55.6,-11.79],[-55.6,-11.8]]]}`
	feat := func(props string) string {
		return `{"type":"Feature","properties":` + props + `,"geometry":` + sq + `}`
	}
	fc := `{"type":"FeatureCollection","features":[` + strings.Join([]string{
		feat(`{"id":"A","chaveClassificacaoNM":" 7c1e-key-A "}`),
		feat(`{"id":"B","chaveClass":"key-B"}`),
		feat(`{"id":"C","chaveClassificacaoNM":123456}`),
		feat(`{"id":"D"}`),
		feat(`{"id":"E","chaveClassificacaoNM":"key E\u001b[2J"}`),
		feat(`{"id":"F","chaveClassificacaoNM":1.5}`),
		feat(`{"id":"G","chaveClassificacaoNM":{"k":1}}`),
	}, ",") + `]}`
	path := filepath.Join(t.TempDir(), "t.geojson")
	if err := os.WriteFile(path, []byte(fc), 0o644); err != nil {
		t.Fatal(err)
	}
	fs, errs := Read(context.Background(), path, ReadOptions{})
	got := map[string]string{}
	for _, f := range fs {
		got[f.ID] = f.ChaveClassificacaoNM
	}
	want := map[string]string{"A": "7c1e-key-A", "B": "key-B", "C": "123456", "D": ""}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("keys = %v, want %v", got, want)
	}
	if len(errs) != 3 {
		t.Fatalf("errors %v, want E, F and G", errs)
	}
	for _, e := range errs {
		if !strings.Contains(e.Error(), "chaveClassificacaoNM") || strings.Contains(e.Error(), "key E") {
			t.Errorf("%v: want the property named and the key not repeated", e)
		}
	}
}

func TestReadSourceErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.geojson")
	os.WriteFile(bad, []byte(`{"type":"FeatureCollection","features":[`), 0o644)
	pts := filepath.Join(dir, "pts.geojson")
	os.WriteFile(pts, []byte(`{"type":"Point","coordinates":[0,0]}`), 0o644)
	for _, src := range []string{filepath.Join(dir, "missing.geojson"), filepath.Join(dir, "missing.gpkg"), bad, pts} {
		fs, errs := Read(context.Background(), src, ReadOptions{})
		if len(fs) != 0 || len(errs) != 1 || !errors.Is(errs[0], ErrSource) || !strings.Contains(errs[0].Error(), src) {
			t.Errorf("Read(%s) = %d fields, %v; want one ErrSource naming it", src, len(fs), errs)
		}
	}
}

// TestReadOGR converts the demo talhões with ogr2ogr to GeoPackage in
// SIRGAS 2000 / UTM 21S (projected), Shapefile in SIRGAS 2000 geographic
// (EPSG:4674, latitude-first by authority), KML and a pre-RFC 7946 GeoJSON
// with a UTM "crs" member, and reads them back:
// same talhões, same attributes, same areas.
func TestReadOGR(t *testing.T) {
	if _, err := exec.LookPath("ogr2ogr"); err != nil {
		t.Skip("ogr2ogr not installed (apt-get install gdal-bin)")
	}
	ref, errs := Read(context.Background(), demoTalhoes, ReadOptions{})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	dir := t.TempDir()
	for _, c := range []struct {
		name string
		args []string
		tol  float64 // relative area tolerance
	}{
		{"talhoes.gpkg", []string{"-f", "GPKG", "-t_srs", "EPSG:31981"}, 1e-6},
		{"talhoes.shp", []string{"-f", "ESRI Shapefile", "-t_srs", "EPSG:4674"}, 1e-6},
		{"talhoes.kml", []string{"-f", "KML"}, 1e-6},
		// legacy GeoJSON with a "crs" member in UTM: read through OGR
		{"talhoes-utm.geojson", []string{"-f", "GeoJSON", "-t_srs", "EPSG:31981"}, 1e-6},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(dir, c.name)
			args := append(append([]string{}, c.args...), out, demoTalhoes)
			if b, err := exec.Command("ogr2ogr", args...).CombinedOutput(); err != nil {
				t.Fatalf("ogr2ogr %v: %v\n%s", args, err, b)
			}
			fs, errs := Read(context.Background(), out, ReadOptions{})
			if len(errs) > 0 || len(fs) != len(ref) {
				t.Fatalf("Read(%s) = %d fields, %v", c.name, len(fs), errs)
			}
			for i, f := range fs {
				r := ref[i]
				if f.ID != r.ID || f.Crop != r.Crop || *f.PlantioContorno != *r.PlantioContorno || *f.Terraceamento != *r.Terraceamento {
					t.Errorf("%s: %+v, want %+v", c.name, f, r)
				}
				if a, b := AreaHa(f.Geometry), AreaHa(r.Geometry); !testkit.Near(a, b, c.tol*b) {
					t.Errorf("%s %s: %.6f ha, GeoJSON %.6f", c.name, f.ID, a, b)
				}
				if d := math.Hypot(f.Geometry[0][0][0][0]-r.Geometry[0][0][0][0], f.Geometry[0][0][0][1]-r.Geometry[0][0][0][1]); d > 1e-7 {
					// rings may start elsewhere (shapefile winding); check the bound instead
					fb, rb := f.Geometry.Bound(), r.Geometry.Bound()
					if math.Abs(fb.Min[0]-rb.Min[0]) > 1e-7 || math.Abs(fb.Min[1]-rb.Min[1]) > 1e-7 {
						t.Errorf("%s %s: bound %v, GeoJSON %v (axis order?)", c.name, f.ID, fb, rb)
					}
				}
			}
		})
	}
}

// TestReadHTTP serves the demo talhões over HTTP and reads them through
// GDAL's /vsicurl/, as GeoJSON (orb parser) and as GeoPackage (OGR).
func TestReadHTTP(t *testing.T) {
	dir := t.TempDir()
	b, err := os.ReadFile(demoTalhoes)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "talhoes.geojson"), b, 0o644)
	srcs := []string{"talhoes.geojson"}
	if _, err := exec.LookPath("ogr2ogr"); err == nil {
		if out, err := exec.Command("ogr2ogr", "-f", "GPKG", filepath.Join(dir, "talhoes.gpkg"), demoTalhoes).CombinedOutput(); err != nil {
			t.Fatalf("ogr2ogr: %v %s", err, out)
		}
		srcs = append(srcs, "talhoes.gpkg")
	}
	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	defer srv.Close()
	for _, s := range srcs {
		url := srv.URL + "/" + s
		fs, errs := Read(context.Background(), url, ReadOptions{})
		if len(errs) > 0 || len(fs) != 5 || fs[0].Source != url {
			t.Errorf("Read(%s) = %d fields, %v", url, len(fs), errs)
		}
	}
	if _, errs := Read(context.Background(), srv.URL+"/missing.geojson", ReadOptions{}); len(errs) != 1 || !errors.Is(errs[0], ErrSource) {
		t.Errorf("Read(missing URL) errors = %v, want ErrSource", errs)
	}
}

// FuzzParseGeoJSON feeds arbitrary bytes to the GeoJSON reader: it must
// not panic, every field must carry a unique non-empty id, a known crop
// and a polygonal geometry, Validate and AreaHa must not panic, and a valid
// talhão has a positive finite area.
func FuzzParseGeoJSON(f *testing.F) {
	b, err := os.ReadFile(demoTalhoes)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add([]byte(`{"type":"Feature","id":7,"properties":{"crop":"milho"},"geometry":{"type":"Polygon","coordinates":[[[-55.6,-11.8,400],[-55.59,-11.8,401],[-55.59,-11.79,402],[-55.6,-11.8,400]]]}}`))
	f.Add([]byte(`{"type":"FeatureCollection","features":[{"type":"Feature","properties":{"id":"a"},"geometry":{"type":"MultiPolygon","coordinates":[]}},{"type":"Feature","properties":{"id":"a"},"geometry":null}]}`))
	f.Add([]byte(`{"type":"FeatureCollection","crs":{"type":"name","properties":{"name":"urn:ogc:def:crs:OGC:1.3:CRS84"}},"features":[{"type":"Feature","properties":{"id":"x","plantioContorno":"sim"},"geometry":{"type":"Polygon","coordinates":[[[0,0],[1,0],[0,1],[0,0]],[[0.1,0.1],[0.2,0.1],[0.1,0.2],[0.1,0.1]]]}}]}`))
	f.Add([]byte(`{"type":"FeatureCollection","features":[{"type":"Feature","properties":{"id":"b"},"geometry":{"type":"GeometryCollection","geometries":[]}}]}`))
	sq := `"geometry":{"type":"Polygon","coordinates":[[[-55.6,-11.8],[-55.59,-11.8],[-55.59,-11.79],[-55.6,-11.8]]]}`
	for _, props := range []string{
		`{"id":"c","crop":"Milho","cpfProdutor":"529.982.247-25","cnpjPropriedade":"11.222.333/0001-81","plantioContorno":"sim","terraceamento":false}`,
		`{"id":9,"crop":null,"cpfProdutor":1234567890,"cnpjPropriedade":1.1222333000181e13,"plantioContorno":1,"terraceamento":"0"}`,
		`{"id":"123.456.789-09","cpfProdutor":{"x":1},"plantioContorno":0.5}`,
		`{"id":"d","plantioCon":"nao","terraceame":"1","cpfProdut":"x","crop":7}`,
	} {
		f.Add([]byte(`{"type":"Feature","properties":` + props + `,` + sq + `}`))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		recs, err := parseGeoJSON(data)
		if err != nil {
			return
		}
		fs, errs := assemble("fuzz", recs, ReadOptions{IDField: DefaultIDField})
		if len(fs)+len(errs) != len(recs) {
			t.Fatalf("%d fields + %d errors from %d features", len(fs), len(errs), len(recs))
		}
		seen := map[string]bool{}
		for _, fl := range fs {
			if fl.ID == "" || seen[fl.ID] {
				t.Fatalf("empty or repeated id %q", fl.ID)
			}
			seen[fl.ID] = true
			if fl.Crop != zarc.Soja && fl.Crop != zarc.Milho {
				t.Fatalf("crop %q", fl.Crop)
			}
			if documentShaped(fl.ID) {
				t.Fatalf("id %q written as a CPF/CNPJ was kept", fl.ID)
			}
			for _, v := range []*int{fl.PlantioContorno, fl.Terraceamento} {
				if v != nil && *v != 0 && *v != 1 {
					t.Fatalf("declared flag %d", *v)
				}
			}
			a := AreaHa(fl.Geometry)
			if Validate(fl) == nil && !(a > 0 && !math.IsInf(a, 0)) {
				t.Fatalf("valid talhão %s has area %v", fl.ID, a)
			}
		}
		for _, e := range errs {
			var fe *FieldError
			if !errors.As(e, &fe) || fe.Index < 1 || fe.Index > len(recs) {
				t.Fatalf("error %v is not a FieldError with a feature number", e)
			}
			if errors.Is(e, ErrPersonalID) && fe.ID != "" {
				t.Fatalf("error %v names the document it refuses", e)
			}
		}
	})
}

func ExampleRead() {
	fields, errs := Read(context.Background(), "../testdata/demo/talhoes.geojson", ReadOptions{})
	for _, f := range fields {
		fmt.Printf("%s %s %.1f ha\n", f.ID, f.Crop, AreaHa(f.Geometry))
	}
	fmt.Println(len(errs), "errors")
	// Output:
	// MT-SIN-001 soja 30.0 ha
	// MT-SIN-002 milho 99.0 ha
	// MT-SIN-003 soja 100.0 ha
	// MT-SIN-004 soja 250.0 ha
	// MT-SIN-005 soja 1200.0 ha
	// 0 errors
}
