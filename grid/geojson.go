package grid

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/manejo/manejo/internal/jsonstream"
	"github.com/paulmach/orb/geojson"
)

// MaxFeatureBytes caps the JSON text of one GeoJSON feature (or of any
// other member of the document), whitespace outside strings not counted.
// The file is read feature by feature (internal/jsonstream), so memory
// grows with the largest feature and the parsed talhões, not with the file
// (issue 19 defect 12: a 200 MB file padded with whitespace took 657 MB
// when read whole); a feature over the cap stops the source with an error
// naming it. 64 MiB holds a MultiPolygon of some two million vertices.
const MaxFeatureBytes int64 = 64 << 20

// parseGeoJSON splits a FeatureCollection (or a single Feature) held in
// memory into records; see readGeoJSON.
func parseGeoJSON(data []byte) ([]record, error) {
	return readGeoJSON(bytes.NewReader(data))
}

// readGeoJSON streams a FeatureCollection (or a single Feature) from r into
// records, each feature decoded on its own so one bad feature spoils only
// itself. Only one feature's text is in memory at a time. Member names
// match case-insensitively, as encoding/json does. A syntax error, a
// feature over MaxFeatureBytes or anything after the top-level object
// fails the whole source; a legacy "crs" other than WGS84 lon/lat is
// errForeignCRS (the caller then reads the file through OGR).
func readGeoJSON(r io.Reader) ([]record, error) {
	g := jsonstream.NewDecoder(r, MaxFeatureBytes)
	if err := g.Expect('{'); err != nil {
		return nil, fmt.Errorf("parse GeoJSON: %w", err)
	}
	var (
		typ     string
		recs    []record
		members = map[string]json.RawMessage{}
	)
	for g.More() {
		tok, err := g.Token()
		if err != nil {
			return nil, fmt.Errorf("parse GeoJSON: %w", err)
		}
		key, _ := tok.(string)
		switch {
		case strings.EqualFold(key, "features"):
			if recs, err = features(g); err != nil {
				return nil, err
			}
		case strings.EqualFold(key, "crs"):
			raw, err := g.Value("crs")
			if err != nil {
				return nil, fmt.Errorf("parse GeoJSON: %w", err)
			}
			if err := checkCRS(raw); err != nil {
				return nil, err
			}
		default:
			raw, err := g.Value("member " + key)
			if err != nil {
				return nil, fmt.Errorf("parse GeoJSON: %w", err)
			}
			members[key] = raw
			if strings.EqualFold(key, "type") {
				_ = json.Unmarshal(raw, &typ)
			}
		}
	}
	if err := g.Expect('}'); err != nil {
		return nil, fmt.Errorf("parse GeoJSON: %w", err)
	}
	if err := g.End(); err != nil {
		return nil, fmt.Errorf("parse GeoJSON: %w", err)
	}
	switch typ {
	case "FeatureCollection":
		return recs, nil
	case "Feature":
		doc, _ := json.Marshal(members)
		return []record{parseFeature(doc)}, nil
	}
	return nil, fmt.Errorf("parse GeoJSON: type %q, want FeatureCollection or Feature", typ)
}

// features reads the features array (or null), one feature at a time.
func features(g *jsonstream.Decoder) ([]record, error) {
	tok, err := g.Token()
	if err != nil {
		return nil, fmt.Errorf("parse GeoJSON: %w", err)
	}
	if tok == nil {
		return nil, nil
	}
	if tok != json.Delim('[') {
		return nil, fmt.Errorf("parse GeoJSON: features is %v, want an array", tok)
	}
	var recs []record
	for g.More() {
		raw, err := g.Value(fmt.Sprintf("feature %d", len(recs)+1))
		if err != nil {
			return nil, fmt.Errorf("parse GeoJSON: %w", err)
		}
		recs = append(recs, parseFeature(raw))
	}
	if err := g.Expect(']'); err != nil {
		return nil, fmt.Errorf("parse GeoJSON: %w", err)
	}
	return recs, nil
}

// checkCRS accepts a legacy crs member naming WGS84 lon/lat.
func checkCRS(raw json.RawMessage) error {
	var crs *struct {
		Properties struct {
			Name string `json:"name"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(raw, &crs); err != nil {
		return fmt.Errorf("parse GeoJSON: crs: %w", err)
	}
	if crs == nil {
		return nil
	}
	n := strings.ToUpper(crs.Properties.Name)
	if !strings.HasSuffix(n, "CRS84") && !strings.HasSuffix(n, ":4326") && n != "EPSG:4326" {
		return errForeignCRS
	}
	return nil
}

// parseFeature decodes one feature into a record.
func parseFeature(raw []byte) record {
	var r record
	var ft struct {
		ID         any             `json:"id"`
		Type       string          `json:"type"`
		Properties map[string]any  `json:"properties"`
		Geometry   json.RawMessage `json:"geometry"`
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(&ft); err != nil {
		r.err = fmt.Errorf("parse feature: %w", err)
		return r
	}
	r.id, r.props = ft.ID, ft.Properties
	if ft.Type != "Feature" {
		r.err = fmt.Errorf("type %q, want Feature", ft.Type)
		return r
	}
	if len(ft.Geometry) == 0 || string(ft.Geometry) == "null" {
		r.err = errors.New("no geometry")
		return r
	}
	g, err := geojson.UnmarshalGeometry(ft.Geometry)
	if err != nil {
		r.err = fmt.Errorf("parse geometry: %w", err)
		return r
	}
	r.geom = g.Geometry()
	return r
}
