package series

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/manejo/manejo/grid"
	"github.com/manejo/manejo/zarc"
)

// tableRow is one parsed row of an observation table.
type tableRow struct {
	field, point string
	lon, lat     float64
	border       *bool
	crop         string
	unknownCrop  error // the crop column's value is no crop ParseCrop knows
	area, slope  *float64
	flags        [2]*int // plantio_contorno, terraceamento
	obs          Obs
}

// tableField gathers the rows of one talhão.
type tableField struct {
	crop        zarc.Crop
	unknownCrop error
	cropRow     int
	area, slope *float64
	flags       [2]*int
	propRow     int
	points      map[string]*tablePoint
	seen        map[obsKey]int // → row
	obs         []Obs
	errs        []error
	nErr        int
	// scenes are the talhão's distinct collection and date pairs; over is
	// set when points × scenes passed the budget (obs and seen dropped).
	scenes map[sceneKey]bool
	over   bool
}

type sceneKey struct {
	collection string
	date       time.Time
}

type tablePoint struct {
	lon, lat float64
	border   bool
	row      int
}

type obsKey struct {
	point, collection string
	date              time.Time
}

// tableBuilder turns rows into a Table.
type tableBuilder struct {
	source string
	cols   tableCols
	o      TableOptions
	fields map[string]*tableField
	rows   int
	orph   []error
	nOrph  int
}

func newTableBuilder(source string, cols tableCols, o TableOptions) *tableBuilder {
	if o.ParseCrop == nil {
		o.ParseCrop = defaultParseCrop
	}
	return &tableBuilder{source: source, cols: cols, o: o, fields: map[string]*tableField{}}
}

// fail records a bad row against its talhão (field "" : an orphan row).
func (tb *tableBuilder) fail(err *TableError, field string) {
	if field == "" {
		tb.nOrph++
		if len(tb.orph) < MaxTableErrors {
			tb.orph = append(tb.orph, err)
		}
		return
	}
	tf := tb.field(field)
	tf.nErr++
	if len(tf.errs) < MaxTableErrors {
		tf.errs = append(tf.errs, err)
	}
}

func (tb *tableBuilder) field(id string) *tableField {
	tf := tb.fields[id]
	if tf == nil {
		tf = &tableField{points: map[string]*tablePoint{}, seen: map[obsKey]int{}, scenes: map[sceneKey]bool{}}
		tb.fields[id] = tf
	}
	return tf
}

// add parses one data row and files it under its talhão.
func (tb *tableBuilder) add(row int, rec []string) {
	tb.rows++
	r, col, err := tb.parse(rec)
	if err != nil {
		tb.fail(&TableError{Source: tb.source, Row: row, Column: col, FieldID: r.field, Err: err}, r.field)
		return
	}
	tf := tb.field(r.field)
	tf.scenes[sceneKey{r.obs.Collection, r.obs.Date}] = true
	if tf.over { // refused for the budget: only its size is counted
		if tf.points[r.point] == nil {
			tf.points[r.point] = &tablePoint{row: row}
		}
		return
	}
	if col, err := tf.merge(r, row); err != nil {
		tb.fail(&TableError{Source: tb.source, Row: row, Column: col, FieldID: r.field, Err: err}, r.field)
	}
	if limit := tb.o.maxCellScenes(); limit > 0 && len(tf.points)*len(tf.scenes) > limit {
		tf.over, tf.obs, tf.seen = true, nil, nil
	}
}

// budgetError is the reason a talhão over the budget is refused, in the
// words of Sample's refusal.
func (tb *tableBuilder) budgetError(id string, tf *tableField) error {
	n, s := len(tf.points), len(tf.scenes)
	return &TableError{Source: tb.source, FieldID: id, Err: fmt.Errorf("talhão too large for the memory budget: %d points × %d scenes = %d point-scene pairs, over the cap of %d (--max-cell-scenes); split it or raise the cap",
		n, s, n*s, tb.o.maxCellScenes())}
}

// merge checks a row against the talhão's earlier rows and keeps it.
func (tf *tableField) merge(r tableRow, row int) (string, error) {
	if p := tf.points[r.point]; p == nil {
		tf.points[r.point] = &tablePoint{lon: r.lon, lat: r.lat, border: r.border != nil && *r.border, row: row}
	} else {
		if math.Abs(p.lon-r.lon) > 1e-9 || math.Abs(p.lat-r.lat) > 1e-9 {
			return "lon", fmt.Errorf("point %s at (%v, %v), but at (%v, %v) on row %d", r.point, r.lon, r.lat, p.lon, p.lat, p.row)
		}
		if r.border != nil && *r.border != p.border {
			return "border", fmt.Errorf("point %s border %t, but %t on row %d", r.point, *r.border, p.border, p.row)
		}
	}
	if r.crop != "" {
		if tf.crop != "" && zarc.Crop(r.crop) != tf.crop {
			return "crop", fmt.Errorf("crop %s, but %s on row %d", r.crop, tf.crop, tf.cropRow)
		}
		tf.crop, tf.cropRow = zarc.Crop(r.crop), row
	}
	if r.unknownCrop != nil && tf.unknownCrop == nil {
		tf.unknownCrop = r.unknownCrop
	}
	for _, x := range []struct {
		name string
		v    *float64
		dst  **float64
	}{{"area_ha", r.area, &tf.area}, {"slope_pct", r.slope, &tf.slope}} {
		if x.v == nil {
			continue
		}
		if *x.dst != nil && **x.dst != *x.v {
			return x.name, fmt.Errorf("%v, but %v on row %d", *x.v, **x.dst, tf.propRow)
		}
		*x.dst, tf.propRow = x.v, row
	}
	for i, name := range []string{"plantio_contorno", "terraceamento"} {
		if v := r.flags[i]; v != nil {
			if tf.flags[i] != nil && *tf.flags[i] != *v {
				return name, fmt.Errorf("%d, but %d on row %d", *v, *tf.flags[i], tf.propRow)
			}
			tf.flags[i], tf.propRow = v, row
		}
	}
	k := obsKey{r.point, r.obs.Collection, r.obs.Date}
	if prev, dup := tf.seen[k]; dup {
		return "", fmt.Errorf("point %s, %s, collection %s: already on row %d", r.point, r.obs.Date.Format(time.DateOnly), r.obs.Collection, prev)
	}
	tf.seen[k] = row
	tf.obs = append(tf.obs, r.obs)
	return "", nil
}

// parse reads the cells of one row; on error it also names the column.
func (tb *tableBuilder) parse(rec []string) (tableRow, string, error) {
	c := tb.cols
	get := func(role int) string {
		if !c.has(role) || c[role] >= len(rec) {
			return ""
		}
		return strings.TrimSpace(rec[c[role]])
	}
	var r tableRow
	r.field = get(colField)
	switch {
	case r.field == "":
		return r, "field_id", errors.New("empty: every row needs its talhão id")
	case grid.DocumentShaped(r.field):
		r.field = "" // personal data: never echoed
		return r, "field_id", errors.New("written as a CPF or CNPJ; personal data must not name a talhão")
	}
	if r.point = get(colPoint); r.point == "" {
		return r, "point_id", errors.New("empty: every row needs its point id")
	}
	var err error
	if r.lon, err = parseNum(get(colLon)); err != nil || r.lon < -180 || r.lon > 180 {
		return r, "lon", orRange(err, "longitude %v outside −180..180", r.lon)
	}
	if r.lat, err = parseNum(get(colLat)); err != nil || r.lat < -90 || r.lat > 90 {
		return r, "lat", orRange(err, "latitude %v outside −90..90", r.lat)
	}
	day, err := parseDay(get(colDate))
	if err != nil {
		return r, "date", err
	}
	if col, err := tb.talhaoProps(&r, get); err != nil {
		return r, col, err
	}
	r.obs = Obs{FieldID: r.field, CellID: r.point, Date: day, Collection: get(colCollection), ItemID: get(colItem)}
	if r.obs.Collection == "" {
		if r.obs.Collection = tb.o.Collection; r.obs.Collection == "" {
			return r, "collection", errors.New("no collection: add a collection column or name it (manejo analyse --collection)")
		}
	}
	clear, err := parseBool(get(colClear), true)
	if err != nil {
		return r, "clear", err
	}
	mask := MaskReason(get(colMask))
	partial := strings.HasPrefix(string(mask), "ndti:") || strings.HasPrefix(string(mask), "ndvi:")
	switch {
	case mask != "" && !partial && clear && get(colClear) != "":
		return r, "mask_reason", fmt.Errorf("%q, but clear is true", mask)
	case mask != "" && !partial:
		clear = false
	}
	col, err := readIndices(&r.obs, clear, strings.HasPrefix(string(mask), "ndvi:"), get)
	if err == nil && mask != "" {
		r.obs.Mask = mask
		if partial {
			maskIndex(&r.obs, mask)
		}
	}
	return r, col, err
}

// maskIndex drops the index a one-index mask reason names (and its bands).
func maskIndex(o *Obs, mask MaskReason) {
	nan := float32(math.NaN())
	if strings.HasPrefix(string(mask), "ndti:") {
		o.NDTI, o.SWIR1, o.SWIR2 = nan, nan, nan
		return
	}
	o.NDVI, o.Red, o.NIR = nan, nan, nan
}

// talhaoProps reads the per-point and per-talhão columns of a row.
func (tb *tableBuilder) talhaoProps(r *tableRow, get func(int) string) (string, error) {
	if s := get(colBorder); s != "" {
		b, err := parseBool(s, false)
		if err != nil {
			return "border", err
		}
		r.border = &b
	}
	if s := get(colCrop); s != "" {
		crop, err := tb.o.ParseCrop(s)
		if err != nil { // kept: the talhão is read with its crop unknown
			r.unknownCrop, crop = err, zarc.Crop(strings.ToLower(s))
		}
		r.crop = string(crop)
	}
	for _, x := range []struct {
		role int
		dst  **float64
		max  float64
	}{{colArea, &r.area, math.Inf(1)}, {colSlope, &r.slope, 100}} {
		s := get(x.role)
		if s == "" {
			continue
		}
		v, err := parseNum(s)
		if err != nil || v < 0 || v > x.max {
			return columnNames[x.role], orRange(err, "%v outside 0..%v", v, x.max)
		}
		*x.dst = &v
	}
	for i, role := range []int{colContour, colTerrace} {
		switch s := get(role); s {
		case "":
		case "0", "1":
			r.flags[i] = new(int(s[0] - '0'))
		default:
			return columnNames[role], fmt.Errorf("%q: want 0 or 1", s)
		}
	}
	return "", nil
}

func orRange(err error, format string, a ...any) error {
	if err != nil {
		return err
	}
	return fmt.Errorf(format, a...)
}

// readIndices sets the reflectances, NDVI, NDTI and mask of a reading.
func readIndices(o *Obs, clear, noNDVI bool, get func(int) string) (string, error) {
	nan := float32(math.NaN())
	o.NDVI, o.NDTI, o.Red, o.NIR, o.SWIR1, o.SWIR2 = nan, nan, nan, nan, nan, nan
	if !clear {
		o.Mask = MaskedNotClear
		return "", nil
	}
	var refl [4]float64
	for i, role := range []int{colRed, colNIR, colSWIR16, colSWIR22} {
		refl[i] = math.NaN()
		s := get(role)
		if s == "" {
			continue
		}
		v, err := parseNum(s)
		if err != nil || v < reflMin || v > reflMax {
			return columnNames[role], orRange(err, "%v outside %v..%v: want a surface reflectance 0–1 (a DN must be scaled first)", v, reflMin, reflMax)
		}
		refl[i] = v
	}
	nd, why, col, err := index(get, colNDVI, refl[1], refl[0])
	if err != nil {
		return col, err
	}
	if math.IsNaN(nd) && why == "" && !noNDVI {
		return "ndvi", errors.New("empty in a clear row: give ndvi (or red and nir), or set clear to false")
	}
	nt, whyT, col, err := index(get, colNDTI, refl[2], refl[3])
	if err != nil {
		return col, err
	}
	switch {
	case why != "":
		o.Mask = why
		return "", nil
	case whyT != "":
		o.Mask = whyT.only("ndti")
	}
	if !math.IsNaN(nd) {
		o.NDVI, o.Red, o.NIR = float32(nd), float32(refl[0]), float32(refl[1])
	}
	if !math.IsNaN(nt) {
		o.NDTI, o.SWIR1, o.SWIR2 = float32(nt), float32(refl[2]), float32(refl[3])
	}
	return "", nil
}

// index reads a normalized difference from its column, or computes it
// from the bands a and b (NaN when neither is there); a given index must
// agree with its bands.
func index(get func(int) string, role int, a, b float64) (float64, MaskReason, string, error) {
	name := columnNames[role]
	fromBands := math.NaN()
	var why MaskReason
	if !math.IsNaN(a) && !math.IsNaN(b) {
		if den := a + b; den > 0 {
			fromBands = (a - b) / den
		} else {
			why = MaskedZeroDenominator
		}
	}
	s := get(role)
	if s == "" {
		return fromBands, why, "", nil
	}
	v, err := parseNum(s)
	if err != nil || v < -1 || v > 1 {
		return 0, "", name, orRange(err, "%v outside −1..1", v)
	}
	if !math.IsNaN(fromBands) && math.Abs(v-fromBands) > indexTolerance {
		return 0, "", name, fmt.Errorf("%v, but its bands give %.4f", v, fromBands)
	}
	return v, "", "", nil
}

// table assembles the talhões that had no bad row.
func (tb *tableBuilder) table() Table {
	t := Table{Rows: tb.rows, SlopePct: map[string]float64{}, Refused: map[string][]error{}, UnknownCrop: map[string]error{},
		NDTI: tb.cols.has(colNDTI) || (tb.cols.has(colSWIR16) && tb.cols.has(colSWIR22))}
	ids := make([]string, 0, len(tb.fields))
	for id := range tb.fields {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var all []Obs
	for _, id := range ids {
		tf := tb.fields[id]
		if tf.over {
			t.Refused[id] = append([]error{tb.budgetError(id, tf)}, tf.errs...)
			continue
		}
		if tf.nErr > 0 {
			errs := tf.errs
			if more := tf.nErr - len(errs); more > 0 {
				errs = append(errs, fmt.Errorf("%s: %d more bad row(s) of talhão %s", tb.source, more, id))
			}
			t.Refused[id] = errs
			continue
		}
		t.Grids = append(t.Grids, tf.grid(id, tb.source))
		if tf.unknownCrop != nil {
			t.UnknownCrop[id] = tf.unknownCrop
		}
		if tf.slope != nil {
			t.SlopePct[id] = *tf.slope
		}
		all = append(all, tf.obs...)
	}
	t.Obs = collapse(all)
	return t
}

// grid is the talhão as a grid whose cells are its points, by point id.
func (tf *tableField) grid(id, source string) grid.Grid {
	g := grid.Grid{Field: grid.Field{ID: id, Crop: zarc.Soja, Source: source}}
	switch {
	case tf.unknownCrop != nil:
		g.Field.Crop = "" // unknown: what needs the crop is held back
	case tf.crop != "":
		g.Field.Crop = tf.crop
	}
	if tf.area != nil {
		g.AreaHa = *tf.area
	}
	g.Field.PlantioContorno, g.Field.Terraceamento = tf.flags[0], tf.flags[1]
	pts := make([]string, 0, len(tf.points))
	for p := range tf.points {
		pts = append(pts, p)
	}
	sort.Strings(pts)
	for _, p := range pts {
		pt := tf.points[p]
		g.Cells = append(g.Cells, pointOf(id, p, pt.lon, pt.lat, pt.border))
	}
	return g
}
