package export

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/manejo/manejo/grid"
	"github.com/paulmach/orb"
	"github.com/paulmach/orb/encoding/wkb"
)

// GeoParquet metadata (https://geoparquet.org/releases/v1.1.0/): the `geo`
// key of the file footer. The CRS is left out, which the specification
// defines as OGC:CRS84 (lon/lat WGS84), the axis order of every manejo
// geometry.
type geoMetadata struct {
	Version       string               `json:"version"`
	PrimaryColumn string               `json:"primary_column"`
	Columns       map[string]geoColumn `json:"columns"`
}

type geoColumn struct {
	Encoding      string      `json:"encoding"`
	GeometryTypes []string    `json:"geometry_types"`
	BBox          []float64   `json:"bbox,omitempty"`
	Covering      geoCovering `json:"covering"`
}

type geoCovering struct {
	BBox map[string][]string `json:"bbox"`
}

// geoParquetVersion is the GeoParquet specification version of cells.parquet.
const geoParquetVersion = "1.1.0"

// ErrBadGeometry reports a cell geometry that is not valid WKB.
var ErrBadGeometry = errors.New("export: invalid WKB geometry")

// geoCollector gathers the geometry types and the overall bounding box of the
// cells written, for the `geo` metadata written at Close.
type geoCollector struct {
	types map[string]bool
	bound orb.Bound
	any   bool
}

var wkbTypeNames = map[uint32]string{1: "Point", 2: "LineString", 3: "Polygon", 4: "MultiPoint",
	5: "MultiLineString", 6: "MultiPolygon", 7: "GeometryCollection"}

// add checks each row's WKB, records its type and fills a zero BBox from
// the geometry.
func (g *geoCollector) add(rows []CellRow) error {
	if g.types == nil {
		g.types = map[string]bool{}
	}
	for i := range rows {
		r := &rows[i]
		geom, err := wkb.Unmarshal(r.Geometry)
		if err != nil {
			return fmt.Errorf("field %s cell %s: %w: %v", r.FieldID, r.CellID, ErrBadGeometry, err)
		}
		name, ok := wkbTypeNames[wkbType(r.Geometry)]
		if !ok {
			return fmt.Errorf("field %s cell %s: %w: type %d", r.FieldID, r.CellID, ErrBadGeometry, wkbType(r.Geometry))
		}
		g.types[name] = true
		b := geom.Bound()
		if r.BBox == (BBox{}) {
			r.BBox = BBox{Xmin: b.Min[0], Ymin: b.Min[1], Xmax: b.Max[0], Ymax: b.Max[1]}
		}
		if !g.any {
			g.bound, g.any = b, true
		} else {
			g.bound = g.bound.Union(b)
		}
	}
	return nil
}

// wkbType reads the geometry type code of a WKB header (after a successful
// Unmarshal, so the header is at least 5 bytes long).
func wkbType(b []byte) uint32 {
	var t uint32
	if b[0] == 1 {
		t = uint32(b[1]) | uint32(b[2])<<8 | uint32(b[3])<<16 | uint32(b[4])<<24
	} else {
		t = uint32(b[4]) | uint32(b[3])<<8 | uint32(b[2])<<16 | uint32(b[1])<<24
	}
	return t % 1000
}

func (g *geoCollector) metadata() (string, error) {
	types := make([]string, 0, len(g.types))
	for t := range g.types {
		types = append(types, t)
	}
	slices.Sort(types)
	col := geoColumn{
		Encoding:      "WKB",
		GeometryTypes: types,
		Covering: geoCovering{BBox: map[string][]string{
			"xmin": {"bbox", "xmin"}, "ymin": {"bbox", "ymin"},
			"xmax": {"bbox", "xmax"}, "ymax": {"bbox", "ymax"},
		}},
	}
	if g.any {
		col.BBox = []float64{g.bound.Min[0], g.bound.Min[1], g.bound.Max[0], g.bound.Max[1]}
	}
	b, err := json.Marshal(geoMetadata{Version: geoParquetVersion, PrimaryColumn: "geometry",
		Columns: map[string]geoColumn{"geometry": col}})
	if err != nil {
		return "", fmt.Errorf("encode geo metadata: %w", err)
	}
	return string(b), nil
}

// NewCellRow converts one grid cell to its cells.parquet row: the clipped
// polygon as little-endian WKB (rings closed), its bounding box, centre and
// area.
func NewCellRow(c grid.Cell) (CellRow, error) {
	poly := make(orb.Polygon, len(c.Polygon))
	for i, ring := range c.Polygon {
		if len(ring) > 0 && ring[0] != ring[len(ring)-1] {
			ring = append(slices.Clip(ring), ring[0])
		}
		poly[i] = ring
	}
	if len(poly) == 0 || len(poly[0]) < 4 {
		return CellRow{}, fmt.Errorf("field %s cell %s: %w: polygon without a closed outer ring", c.FieldID, c.ID, ErrBadGeometry)
	}
	for _, v := range []float64{c.Centre[0], c.Centre[1], c.AreaHa} {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return CellRow{}, fmt.Errorf("field %s cell %s: non-finite centre or area", c.FieldID, c.ID)
		}
	}
	g, err := wkb.Marshal(poly)
	if err != nil {
		return CellRow{}, fmt.Errorf("field %s cell %s: encode WKB: %w", c.FieldID, c.ID, err)
	}
	b := poly.Bound()
	return CellRow{
		FieldID: c.FieldID, CellID: c.ID, Row: int32(c.Row), Col: int32(c.Col),
		Geometry:  g,
		BBox:      BBox{Xmin: b.Min[0], Ymin: b.Min[1], Xmax: b.Max[0], Ymax: b.Max[1]},
		CentreLon: c.Centre[0], CentreLat: c.Centre[1], AreaHa: c.AreaHa,
		Border: c.Border, Fallback: c.Fallback, MODIS: c.MODIS,
	}, nil
}

// cellRows converts the cells of grids to cells.parquet rows, in grid order.
func cellRows(grids []grid.Grid) ([]CellRow, error) {
	n := 0
	for _, g := range grids {
		n += len(g.Cells)
	}
	rows := make([]CellRow, 0, n)
	for _, g := range grids {
		for _, c := range g.Cells {
			if c.FieldID == "" {
				c.FieldID = g.Field.ID
			}
			r, err := NewCellRow(c)
			if err != nil {
				return nil, err
			}
			rows = append(rows, r)
		}
	}
	return rows, nil
}

// WriteCellsParquet writes the cells of grids as one GeoParquet 1.1 file
// (cells.parquet) to w, for `manejo grid --out cells.parquet`. The optional
// Options (at most one is used) carry the manejo version.
func WriteCellsParquet(w io.Writer, grids []grid.Grid, o ...Options) error {
	rows, err := cellRows(grids)
	if err != nil {
		return fmt.Errorf("write cells: %w", err)
	}
	var opt Options
	if len(o) > 0 {
		opt = o[0]
	}
	return Write(w, rows, opt)
}
