package grid

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/airbusgeo/godal"
	"github.com/manejo/manejo/storage"
	"github.com/manejo/manejo/zarc"
	"github.com/paulmach/orb"
	"github.com/paulmach/orb/geojson"
)

// ErrSource reports a talhões source that could not be read at all (missing
// file, unknown format, network error); Read returns it alone.
var ErrSource = errors.New("grid: cannot read talhões")

// DefaultIDField is the property holding the talhão id unless
// ReadOptions.IDField says otherwise.
const DefaultIDField = "id"

// ReadOptions tune Read. The zero value means the defaults.
type ReadOptions struct {
	// IDField is the property holding the talhão id; "" means "id". For
	// GeoJSON, a Feature's own "id" member is used when the property is
	// absent.
	IDField string
}

// FieldError is the error of one talhão (feature) of a source: Read and
// the CLI report it and go on with the others.
type FieldError struct {
	Source string
	Index  int    // 1-based feature number in the source (across layers)
	ID     string // talhão id, "" when it could not be read
	Err    error
}

func (e *FieldError) Error() string {
	if e.ID != "" {
		return fmt.Sprintf("%s: talhão %s (feature %d): %v", e.Source, e.ID, e.Index, e.Err)
	}
	return fmt.Sprintf("%s: feature %d: %v", e.Source, e.Index, e.Err)
}

func (e *FieldError) Unwrap() error { return e.Err }

// Read reads the talhões of src: a GeoJSON file (.geojson, .json; RFC 7946
// lon/lat, parsed with orb) or any vector format GDAL's OGR opens
// (GeoPackage, Shapefile, KML...), whose layers are reprojected to WGS84
// lon/lat (traditional GIS axis order). src may be a local path,
// s3://bucket/key (GDAL /vsis3/, AWS credentials from the environment) or
// http(s):// (GDAL /vsicurl/), or already a GDAL /vsi path. A GeoJSON file
// whose legacy "crs" member names something other than WGS84 lon/lat goes
// through OGR, which honours it.
//
// Properties read: the id (ReadOptions.IDField), crop ("soja" or "milho",
// default soja), cpfProdutor, cnpjPropriedade, plantioContorno and
// terraceamento (0/1 or booleans), chaveClassificacaoNM (the SINM key; a
// string or integer, no control characters or spaces). A feature with a bad property, a
// geometry other than Polygon/MultiPolygon, or no id gives a *FieldError
// and is left out; every occurrence of an id used more than once is left
// out too. Geometry checks beyond the type are Validate's. A source that
// cannot be read gives one error wrapping ErrSource and no fields.
func Read(ctx context.Context, src string, o ReadOptions) ([]Field, []error) {
	if o.IDField == "" {
		o.IDField = DefaultIDField
	}
	if err := CheckIDField(o.IDField); err != nil {
		return nil, []error{fmt.Errorf("read %s: %w: %w", src, ErrSource, err)}
	}
	path := storage.GDALPath(src)
	var (
		recs []record
		err  error
	)
	if isGeoJSON(src) {
		recs, err = streamGeoJSON(path, path != src)
		if errors.Is(err, errForeignCRS) {
			recs, err = readOGR(ctx, path)
		}
	} else {
		recs, err = readOGR(ctx, path)
	}
	if err != nil {
		return nil, []error{fmt.Errorf("read %s: %w: %w", src, ErrSource, err)}
	}
	return assemble(src, recs, o)
}

// ErrPersonalID reports a talhão id that is, or looks like, a CPF or CNPJ.
// Ids go into payload file names, run.json, the Parquet datasets and logs,
// where personal data must not (docs/grid.md): such an id is refused.
var ErrPersonalID = errors.New("grid: talhão id is a CPF/CNPJ")

// CheckIDField refuses an id property that holds CPF/CNPJ numbers: one of
// the document properties Read takes (cpfProdutor, cnpjPropriedade, or
// their Shapefile forms) or any name containing "cpf" or "cnpj". The CLI
// calls it on --id-field (a usage error); Read calls it too.
func CheckIDField(name string) error {
	n := strings.ToLower(strings.TrimSpace(name))
	if strings.Contains(n, "cpf") || strings.Contains(n, "cnpj") {
		return fmt.Errorf("%w: id field %q holds CPF/CNPJ numbers, personal data that would appear in file names, run.json and Parquet; choose another property as --id-field", ErrPersonalID, name)
	}
	return nil
}

// DocumentShaped reports whether an id is written as a CPF or a CNPJ (see
// documentShaped): such an id is refused wherever talhões are named.
func DocumentShaped(id string) bool { return documentShaped(id) }

// documentShaped reports whether id is written as a CPF (ddd.ddd.ddd-dd) or
// a CNPJ (dd.ddd.ddd/dddd-dd): punctuated document numbers are refused as
// ids whatever the property holding them. Bare digit strings are not, since
// numeric ids are common.
func documentShaped(id string) bool {
	shape := func(pat string) bool {
		if len(id) != len(pat) {
			return false
		}
		for i := 0; i < len(pat); i++ {
			if c := id[i]; (pat[i] == '9' && (c < '0' || c > '9')) || (pat[i] != '9' && c != pat[i]) {
				return false
			}
		}
		return true
	}
	return shape("999.999.999-99") || shape("99.999.999/9999-99")
}

// record is one feature before it becomes a Field.
type record struct {
	id    any // Feature.id member, GeoJSON only
	props map[string]any
	geom  orb.Geometry
	err   error
}

func isGeoJSON(src string) bool {
	ext := strings.ToLower(filepath.Ext(strings.SplitN(src, "?", 2)[0]))
	return ext == ".geojson" || ext == ".json"
}

// streamGeoJSON reads a GeoJSON file feature by feature (readGeoJSON):
// a local file directly, anything else through GDAL's /vsi readers.
func streamGeoJSON(path string, remote bool) ([]record, error) {
	var r io.ReadCloser
	if !remote && !strings.HasPrefix(path, "/vsi") {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		r = f
	} else {
		storage.InitGDAL()
		f, err := godal.VSIOpen(path)
		if err != nil {
			return nil, err
		}
		r = f
	}
	defer r.Close()
	return readGeoJSON(bufio.NewReaderSize(r, 1<<20))
}

var errForeignCRS = errors.New("GeoJSON crs is not WGS84 lon/lat")

// readOGR reads every layer of a vector dataset through OGR, reprojecting
// to WGS84 lon/lat.
func readOGR(ctx context.Context, path string) ([]record, error) {
	storage.InitGDAL()
	ds, err := godal.Open(path, godal.VectorOnly())
	if err != nil {
		return nil, err
	}
	defer ds.Close()
	wgs, err := godal.NewSpatialRefFromEPSG(4326) // godal sets OAMS_TRADITIONAL_GIS_ORDER
	if err != nil {
		return nil, err
	}
	defer wgs.Close()
	var recs []record
	for _, layer := range ds.Layers() {
		var trn *godal.Transform
		sr := layer.SpatialRef()
		if wkt, werr := sr.WKT(); werr == nil && wkt != "" && !sr.IsSame(wgs) {
			if trn, err = godal.NewTransform(sr, wgs); err != nil {
				return nil, fmt.Errorf("layer %s: transform to EPSG:4326: %w", layer.Name(), err)
			}
		}
		layer.ResetReading()
		for feat := layer.NextFeature(); feat != nil; feat = layer.NextFeature() {
			if err := ctx.Err(); err != nil {
				feat.Close()
				if trn != nil {
					trn.Close()
				}
				return nil, err
			}
			recs = append(recs, ogrRecord(feat, trn))
			feat.Close()
		}
		if trn != nil {
			trn.Close()
		}
	}
	return recs, nil
}

func ogrRecord(feat *godal.Feature, trn *godal.Transform) record {
	var r record
	r.props = map[string]any{}
	for name, fld := range feat.Fields() {
		if !fld.IsSet() {
			continue
		}
		switch fld.Type() {
		case godal.FTInt, godal.FTInt64:
			r.props[name] = json.Number(strconv.FormatInt(fld.Int(), 10))
		case godal.FTReal:
			r.props[name] = json.Number(strconv.FormatFloat(fld.Float(), 'g', -1, 64))
		default:
			r.props[name] = fld.String()
		}
	}
	g := feat.Geometry()
	if g == nil || g.Empty() {
		r.err = errors.New("no geometry")
		return r
	}
	if trn != nil {
		if err := g.Transform(trn); err != nil {
			r.err = fmt.Errorf("reproject to EPSG:4326: %w", err)
			return r
		}
	}
	gj, err := g.GeoJSON(godal.SignificantDigits(12))
	if err != nil {
		r.err = fmt.Errorf("export geometry: %w", err)
		return r
	}
	og, err := geojson.UnmarshalGeometry([]byte(gj))
	if err != nil {
		r.err = fmt.Errorf("parse geometry: %w", err)
		return r
	}
	r.geom = og.Geometry()
	return r
}

// assemble turns records into Fields, checking properties and ids.
func assemble(src string, recs []record, o ReadOptions) ([]Field, []error) {
	var (
		fields []Field
		errs   []error
		index  []int // feature number of each field
	)
	seen := map[string][]int{}
	for i, r := range recs {
		n := i + 1
		id := idString(r.props[o.IDField])
		if id == "" && o.IDField == DefaultIDField {
			id = idString(r.id)
		}
		fail := func(err error) { errs = append(errs, &FieldError{Source: src, Index: n, ID: id, Err: err}) }
		if r.err != nil {
			fail(r.err)
			continue
		}
		if id == "" {
			fail(fmt.Errorf("no id (property %q)", o.IDField))
			continue
		}
		if documentShaped(id) {
			id = "" // never echoed
			fail(fmt.Errorf("%w: the id (property %q) is written as a CPF or CNPJ; personal data must not name a talhão", ErrPersonalID, o.IDField))
			continue
		}
		f := Field{ID: id, Source: src, Crop: zarc.Soja}
		switch g := r.geom.(type) {
		case orb.Polygon:
			f.Geometry = orb.MultiPolygon{g}
		case orb.MultiPolygon:
			f.Geometry = g
		case nil:
			fail(errors.New("no geometry"))
			continue
		default:
			fail(fmt.Errorf("geometry %s, want Polygon or MultiPolygon", g.GeoJSONType()))
			continue
		}
		if err := setProps(&f, r.props); err != nil {
			fail(err)
			continue
		}
		seen[id] = append(seen[id], n)
		fields = append(fields, f)
		index = append(index, n)
	}
	// Every occurrence of a duplicated id is an error: which one is the
	// real talhão cannot be told.
	out := fields[:0]
	for i, f := range fields {
		if ns := seen[f.ID]; len(ns) > 1 {
			errs = append(errs, &FieldError{Source: src, Index: index[i], ID: f.ID,
				Err: fmt.Errorf("id %q is used by features %s", f.ID, joinInts(ns))})
			continue
		}
		out = append(out, f)
	}
	sort.SliceStable(errs, func(a, b int) bool {
		var ea, eb *FieldError
		errors.As(errs[a], &ea)
		errors.As(errs[b], &eb)
		return ea.Index < eb.Index
	})
	return out, errs
}

func joinInts(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ", ")
}

// idString renders an id property: strings as they are (trimmed), integral
// numbers without a decimal point.
func idString(v any) string {
	switch t := v.(type) {
	case string:
		return strings.TrimSpace(t)
	case json.Number:
		if i, err := t.Int64(); err == nil {
			return strconv.FormatInt(i, 10)
		}
		return t.String()
	case float64:
		if t == math.Trunc(t) && math.Abs(t) < 1e15 {
			return strconv.FormatInt(int64(t), 10)
		}
		return strconv.FormatFloat(t, 'g', -1, 64)
	}
	return ""
}

// dbfName is name as a Shapefile's DBF stores it (10 characters).
func dbfName(name string) string {
	if len(name) > 10 {
		return name[:10]
	}
	return name
}

func setProps(f *Field, p map[string]any) error {
	// Shapefiles truncate field names to 10 characters
	// (plantioContorno → plantioCon): accept the short form too.
	for _, name := range []string{"cpfProdutor", "cnpjPropriedade", "plantioContorno", "terraceamento", "chaveClassificacaoNM"} {
		if _, ok := p[name]; !ok {
			if v, ok := p[dbfName(name)]; ok {
				p[name] = v
			}
		}
	}
	if v, ok := p["crop"]; ok && v != nil {
		s, _ := v.(string)
		switch {
		case strings.TrimSpace(s) != "":
			c, err := zarc.ParseCrop(s)
			if err != nil {
				return err
			}
			f.Crop = c
		case s != "" || !isEmpty(v):
			return fmt.Errorf("crop %v: want a crop name (%s)", v, cropNames())
		}
	}
	var err error
	if f.CPFProdutor, err = textProp(p, "cpfProdutor", 11); err != nil {
		return err
	}
	if f.CNPJPropriedade, err = textProp(p, "cnpjPropriedade", 14); err != nil {
		return err
	}
	if f.PlantioContorno, err = flagProp(p, "plantioContorno"); err != nil {
		return err
	}
	if f.Terraceamento, err = flagProp(p, "terraceamento"); err != nil {
		return err
	}
	f.ChaveClassificacaoNM, err = keyProp(p, "chaveClassificacaoNM")
	return err
}

// keyProp reads the SINM classification key: a string (trimmed) or an
// integer. It goes into a URL path and a CSV, so a key holding spaces or
// control characters is refused. Errors never repeat the key.
func keyProp(p map[string]any, name string) (string, error) {
	var s string
	switch t := p[name].(type) {
	case nil:
		return "", nil
	case string:
		s = strings.TrimSpace(t)
	case json.Number:
		if _, err := t.Int64(); err != nil {
			return "", fmt.Errorf("%s: a number that is not an integer; write the key as a string", name)
		}
		s = t.String()
	default:
		return "", fmt.Errorf("%s: want a string", name)
	}
	for _, r := range s {
		if unicode.IsSpace(r) || !unicode.IsPrint(r) {
			return "", fmt.Errorf("%s: holds spaces or control characters (the key is not repeated here); a SINM key is one word", name)
		}
	}
	return s, nil
}

// cropNames lists the crops a talhão may name.
func cropNames() string {
	var names []string
	for _, c := range zarc.Crops() {
		names = append(names, string(c))
	}
	return strings.Join(names, ", ")
}

func isEmpty(v any) bool { s, ok := v.(string); return ok && strings.TrimSpace(s) == "" }

// textProp reads a document number (CPF/CNPJ) of width digits: a string,
// or a number. A number has lost its leading zeros (a CPF typed as a JSON
// number, or a numeric spreadsheet column: 01234567890 → 1234567890): a
// non-negative integer of at most width digits is given them back, so the
// check digits decide, as for a string. Anything else is an error. Values
// are never echoed in errors.
func textProp(p map[string]any, name string, width int) (string, error) {
	switch t := p[name].(type) {
	case nil:
		return "", nil
	case string:
		return strings.TrimSpace(t), nil
	case json.Number:
		f, err := strconv.ParseFloat(t.String(), 64)
		if err != nil || f < 0 || f != math.Trunc(f) || f >= math.Pow10(width) {
			return "", fmt.Errorf("%s: a number that is not a document of %d digits; write it as a string", name, width)
		}
		return fmt.Sprintf("%0*d", width, int64(f)), nil
	}
	return "", fmt.Errorf("%s: want a string", name)
}

// flagProp reads a 0/1 declaration (numbers 0 or 1, booleans, "0"/"1").
func flagProp(p map[string]any, name string) (*int, error) {
	v, ok := p[name]
	if !ok || v == nil {
		return nil, nil
	}
	var x int
	switch t := v.(type) {
	case bool:
		if t {
			x = 1
		}
	case json.Number:
		f, err := t.Float64()
		if err != nil || (f != 0 && f != 1) {
			return nil, fmt.Errorf("%s %s: want 0 or 1", name, t)
		}
		x = int(f)
	case string:
		switch strings.TrimSpace(strings.ToLower(t)) {
		case "":
			return nil, nil
		case "0", "false", "nao", "não":
			x = 0
		case "1", "true", "sim":
			x = 1
		default:
			return nil, fmt.Errorf("%s %q: want 0 or 1", name, t)
		}
	default:
		return nil, fmt.Errorf("%s %v: want 0 or 1", name, v)
	}
	return &x, nil
}
