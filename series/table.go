package series

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/manejo/manejo/grid"
	"github.com/manejo/manejo/zarc"
	"github.com/paulmach/orb"
)

// An observation table is a series that did not come from Sample: a long
// table (CSV or Parquet), one row per point and date, that manejo analyse
// runs the T, C and cycle stages over (docs/series.md, "Observation
// tables"). Its columns, by name (case and surrounding spaces ignored):
//
//   - field_id, point_id, lon, lat, date: required. A point is a sampling
//     point of a talhão (a cell centre); date is YYYY-MM-DD (a timestamp's
//     UTC day is taken).
//   - ndvi and/or red, nir: NDVI, given or computed from the red and NIR
//     surface reflectances; ndti and/or swir16, swir22 likewise, optional
//     (without either, the series is NDVI-only, as MOD13Q1, and T and C
//     cannot be read). When a table has both an index and its bands, the
//     index is used and must agree with the bands.
//   - collection, item_id, clear (true/false; absent or empty means clear)
//     and mask_reason (why a reading is not clear; "ndti:..." masks the NDTI
//     only), optional per row; border (true/false: a headland point, IN 2.3
//     III), optional per point; crop, area_ha, slope_pct (the talhão's mean
//     slope), plantio_contorno and terraceamento (declared, 0 or 1),
//     optional per talhão.
//
// A row with a bad value refuses its talhão, with an error naming the row
// and the column; the other talhões go on. A table whose rows cannot all be
// told apart or attributed is refused whole, naming the row, since any
// talhão's series could be cut: a CSV syntax error (a stray quote, which
// would join the following lines into one cell up to the next quote or the
// end of the file), a cell holding a line break, a row naming no talhão
// (field_id empty, or written as a CPF/CNPJ). Rows whose cells are all
// empty carry nothing and are skipped.

// ErrTable marks an observation table that cannot be read at all (no such
// column, not CSV or Parquet); TableError wraps it too.
var ErrTable = errors.New("bad observation table")

// TableError is one bad value of an observation table.
type TableError struct {
	Source  string
	Row     int    // CSV line (the header is line 1) or Parquet row (1-based); 0 for the header
	Column  string // "" when the row as a whole is bad
	FieldID string // "" when the row names no talhão
	Err     error
}

func (e *TableError) Error() string {
	var b strings.Builder
	b.WriteString(e.Source)
	if e.Row > 0 {
		fmt.Fprintf(&b, " row %d", e.Row)
	}
	if e.Column != "" {
		fmt.Fprintf(&b, " column %s", e.Column)
	}
	if e.FieldID != "" {
		fmt.Fprintf(&b, " (talhão %s)", e.FieldID)
	}
	b.WriteString(": ")
	b.WriteString(e.Err.Error())
	return b.String()
}

func (e *TableError) Unwrap() []error { return []error{ErrTable, e.Err} }

// TableOptions configure ReadTable.
type TableOptions struct {
	// Collection names the collection of rows without one (no collection
	// column, or an empty cell); "" leaves such rows an error.
	Collection string
	// ParseCrop reads the crop column; nil is zarc.ParseCrop.
	ParseCrop func(string) (zarc.Crop, error)
	// MaxCellScenes is the memory budget of one talhão, as
	// Options.MaxCellScenes of Sample: its points × scenes (distinct
	// collection and date). A talhão over it is refused (Table.Refused,
	// with the reason) and its observations are dropped as soon as it
	// passes it, so its memory stays within the budget while the rest of
	// the table is read. 0 means DefaultMaxCellScenes; negative, no cap.
	MaxCellScenes int
}

func (o TableOptions) maxCellScenes() int {
	if o.MaxCellScenes == 0 {
		return DefaultMaxCellScenes
	}
	return o.MaxCellScenes
}

// Table is an observation table read by ReadTable: one grid per talhão,
// whose cells are its points (no polygons: Cell.Polygon is nil, AreaHa 0),
// sorted by field id and point id, and their observations in the order
// Sample returns them.
type Table struct {
	Grids []grid.Grid
	Obs   []Obs
	Rows  int // data rows read
	// SlopePct is the mean slope of the talhões that gave one (slope_pct).
	SlopePct map[string]float64
	// Refused are the talhões refused for a bad row, each with its first
	// errors (at most MaxTableErrors) and, last, how many more there were.
	Refused map[string][]error
	// UnknownCrop are the talhões whose crop column names no crop
	// TableOptions.ParseCrop knows, with its error: they are read, with
	// grid.Field.Crop empty, and what needs the crop is left to the caller.
	UnknownCrop map[string]error
	// NDTI is false for an NDVI-only table (no ndti and no SWIR columns).
	NDTI bool
}

// MaxTableErrors bounds the errors kept per talhão.
const MaxTableErrors = 5

// MaskedNotClear is the mask of a row whose clear column says false.
const MaskedNotClear MaskReason = "not-clear"

// ReadTable reads an observation table from b: Parquet when it starts with
// the Parquet magic, CSV (comma or semicolon separated) otherwise. source
// names it in errors. The error is for a table that cannot be read at all;
// bad rows refuse their talhão (Table.Refused).
func ReadTable(b []byte, source string, o TableOptions) (Table, error) {
	var (
		src rowSource
		err error
	)
	if bytes.HasPrefix(b, []byte("PAR1")) {
		src, err = newParquetRows(b)
	} else {
		src, err = newCSVRows(b)
	}
	if err != nil {
		return Table{}, &TableError{Source: source, Err: err}
	}
	cols, err := tableColumns(src.header())
	if err != nil {
		return Table{}, &TableError{Source: source, Row: src.headerRow(), Err: err}
	}
	tb := newTableBuilder(source, cols, o)
	for {
		row, rec, err := src.next()
		if err == io.EOF {
			break
		}
		var whole *wholeTableError
		switch {
		case errors.As(err, &whole):
			return Table{}, &TableError{Source: source, Row: row, Err: fmt.Errorf("%w; the table is refused whole: the rows after it would be cut or misread", whole.err)}
		case err != nil && row == 0:
			return Table{}, &TableError{Source: source, Err: err}
		case rec != nil && blank(rec):
			// nothing to read: a spreadsheet's ",,,," or a line of spaces
		case err != nil:
			field := ""
			if i := cols[colField]; i < len(rec) && !grid.DocumentShaped(strings.TrimSpace(rec[i])) {
				field = strings.TrimSpace(rec[i])
			}
			tb.rows++
			tb.fail(&TableError{Source: source, Row: row, FieldID: field, Err: err}, field)
		default:
			tb.add(row, rec)
		}
	}
	if tb.nOrph > 0 {
		return Table{}, &TableError{Source: source, Err: fmt.Errorf("%d row(s) name no talhão, so any talhão's series could be cut; the table is refused whole (fix or remove them): %w",
			tb.nOrph, errors.Join(tb.orph...))}
	}
	return tb.table(), nil
}

// wholeTableError is a row error that refuses the whole table: the rows
// after it cannot be trusted to be the file's rows.
type wholeTableError struct{ err error }

func (e *wholeTableError) Error() string { return e.err.Error() }

// blank reports whether every cell of a row is empty (a spreadsheet's
// trailing ",,,,"): such a row carries nothing.
func blank(rec []string) bool {
	for _, c := range rec {
		if strings.TrimSpace(c) != "" {
			return false
		}
	}
	return true
}

// rowSource yields the header and the rows of a table as text.
type rowSource interface {
	header() []string
	headerRow() int
	// next returns the next row's number and cells (one per header
	// column; "" for a null), io.EOF after the last.
	next() (int, []string, error)
}

// csvRows reads CSV, comma or semicolon separated (the first line decides).
type csvRows struct {
	r    *csv.Reader
	head []string
	line int
}

func newCSVRows(b []byte) (*csvRows, error) {
	b = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf")) // a spreadsheet's BOM
	first, _, _ := bytes.Cut(b, []byte("\n"))
	r := csv.NewReader(bytes.NewReader(b))
	if bytes.Count(first, []byte(";")) > bytes.Count(first, []byte(",")) {
		r.Comma = ';'
	}
	r.ReuseRecord = false
	head, err := r.Read()
	if err != nil {
		if err == io.EOF {
			return nil, errors.New("empty file: want a CSV header (field_id, point_id, lon, lat, date, ...) or a Parquet file")
		}
		return nil, fmt.Errorf("CSV header: %v", err)
	}
	return &csvRows{r: r, head: head, line: 1}, nil
}

func (c *csvRows) header() []string { return c.head }
func (c *csvRows) headerRow() int   { return 1 }

// next returns the next record. A syntax error (a stray quote) or a cell
// holding a line break is a wholeTableError: a quote opened by mistake
// joins the following lines into one cell, up to the next quote or the end
// of the file, so the rows after it are not the file's rows.
func (c *csvRows) next() (int, []string, error) {
	rec, err := c.r.Read()
	if err == io.EOF {
		return 0, nil, io.EOF
	}
	var pe *csv.ParseError
	if err != nil && !errors.As(err, &pe) {
		return 0, nil, err
	}
	line := 0
	if pe != nil {
		if line = pe.StartLine; line == 0 {
			line = pe.Line
		}
		if pe.Err != csv.ErrFieldCount {
			return line, nil, &wholeTableError{fmt.Errorf("CSV syntax error on line %d, column %d: %v", pe.Line, pe.Column, pe.Err)}
		}
	} else {
		line, _ = c.r.FieldPos(0) // only after a successful Read
	}
	for i, cell := range rec {
		if strings.ContainsAny(cell, "\r\n") {
			start, _ := c.r.FieldPos(i)
			return line, nil, &wholeTableError{fmt.Errorf("cell %d holds a line break: lines %d to %d read as one row (an unbalanced quote?)", i+1, line, start+strings.Count(cell, "\n"))}
		}
	}
	if pe != nil {
		return line, rec, fmt.Errorf("%d fields, the header has %d", len(rec), len(c.head))
	}
	return line, rec, nil
}

// Column roles of an observation table.
const (
	colField = iota
	colPoint
	colLon
	colLat
	colDate
	colNDVI
	colNDTI
	colRed
	colNIR
	colSWIR16
	colSWIR22
	colCollection
	colItem
	colClear
	colBorder
	colCrop
	colArea
	colSlope
	colContour
	colTerrace
	colMask
	nCols
)

// columnNames are the names of the roles, in role order.
var columnNames = [nCols]string{"field_id", "point_id", "lon", "lat", "date", "ndvi", "ndti", "red", "nir", "swir16", "swir22",
	"collection", "item_id", "clear", "border", "crop", "area_ha", "slope_pct",
	"plantio_contorno", "terraceamento", "mask_reason"}

// tableCols maps each role to its column index in the header (−1: absent).
type tableCols [nCols]int

func (c tableCols) has(role int) bool { return c[role] >= 0 }

// tableColumns finds the roles in the header and checks the required ones.
func tableColumns(head []string) (tableCols, error) {
	var c tableCols
	for i := range c {
		c[i] = -1
	}
	for i, h := range head {
		name := strings.ToLower(strings.TrimSpace(h))
		for role, n := range columnNames {
			if name != n {
				continue
			}
			if c[role] >= 0 {
				return c, fmt.Errorf("column %s appears twice", n)
			}
			c[role] = i
		}
	}
	var missing []string
	for _, role := range []int{colField, colPoint, colLon, colLat, colDate} {
		if !c.has(role) {
			missing = append(missing, columnNames[role])
		}
	}
	if len(missing) > 0 {
		return c, fmt.Errorf("no column %s (want field_id, point_id, lon, lat, date and ndvi, ndti or red, nir, swir16, swir22)", strings.Join(missing, ", "))
	}
	if !c.has(colNDVI) && !(c.has(colRed) && c.has(colNIR)) {
		return c, errors.New("no NDVI: want a column ndvi, or red and nir (surface reflectance 0–1)")
	}
	if c.has(colSWIR16) != c.has(colSWIR22) && !c.has(colNDTI) {
		return c, errors.New("NDTI needs both swir16 and swir22 (or a column ndti)")
	}
	return c, nil
}

// reflectance bounds: the lowest a Sentinel-2 L2A offset gives (−0.1), and
// a generous top for bright targets; a larger value is a DN, not a
// reflectance.
const reflMin, reflMax = -0.1, 1.5

// indexTolerance is how far a given index may be from the one its bands
// give (a float32 round trip differs by ≈ 1e-7).
const indexTolerance = 1e-3

// parseNum reads a number, accepting a decimal comma.
func parseNum(s string) (float64, error) {
	s = strings.TrimSpace(s)
	v, err := strconv.ParseFloat(s, 64)
	if err != nil && strings.Count(s, ",") == 1 && !strings.Contains(s, ".") {
		v, err = strconv.ParseFloat(strings.Replace(s, ",", ".", 1), 64)
	}
	if err != nil {
		return 0, fmt.Errorf("%q is not a number", s)
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%q is not a finite number", s)
	}
	return v, nil
}

// parseBool reads true/false (also 1/0, yes/no, sim/não); "" is def.
func parseBool(s string, def bool) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "":
		return def, nil
	case "true", "t", "1", "yes", "y", "sim", "s", "verdadeiro":
		return true, nil
	case "false", "f", "0", "no", "n", "não", "nao", "falso":
		return false, nil
	}
	return false, fmt.Errorf("%q: want true or false", s)
}

// parseDay reads YYYY-MM-DD, or a timestamp (RFC 3339, or date and time
// separated by a space) whose UTC day is taken.
func parseDay(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02 15:04:05Z07:00", "2006-01-02 15:04:05", "2006-01-02T15:04:05"} {
		if t, err := time.Parse(layout, s); err == nil {
			return zarc.Day(t.UTC()), nil
		}
	}
	return time.Time{}, fmt.Errorf("%q: want a date YYYY-MM-DD", s)
}

// defaultParseCrop reads the crop column: the crops of zarc.ParseCrop.
func defaultParseCrop(s string) (zarc.Crop, error) { return zarc.ParseCrop(s) }

// pointOf is the centre of a point, as a grid cell.
func pointOf(field, id string, lon, lat float64, border bool) grid.Cell {
	return grid.Cell{FieldID: field, ID: id, Centre: orb.Point{lon, lat}, Border: border}
}

// Gaps is the IN 6.5 check of each talhão of the table, as Stats.Gaps of
// Sample: the dates of its rows (clear or not) stand for the scenes
// selected for it.
func (t Table) Gaps() map[string]Gap {
	scenes, usable := map[string]map[time.Time]bool{}, map[string]map[time.Time]bool{}
	for _, o := range t.Obs {
		if scenes[o.FieldID] == nil {
			scenes[o.FieldID], usable[o.FieldID] = map[time.Time]bool{}, map[time.Time]bool{}
		}
		scenes[o.FieldID][o.Date] = true
		if !math.IsNaN(float64(o.NDVI)) {
			usable[o.FieldID][o.Date] = true
		}
	}
	out := make(map[string]Gap, len(t.Grids))
	for _, g := range t.Grids {
		id := g.Field.ID
		out[id] = gapOf(sortedDates(scenes[id]), sortedDates(usable[id]))
	}
	return out
}
