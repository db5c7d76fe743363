package classify

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"path"
	"strconv"
	"strings"
)

// Column sets of the CSV inputs of Preview (docs/classify.md).
var (
	SoilColumns          = []string{"field_id", "ctc_0_20", "v_pct_0_20", "ca_20_40", "m_pct_20_40", "effective_depth_cm"}
	CropsColumns         = []string{"field_id", "agri_year", "crop", "species", "family", "purpose", "start", "end"}
	RemoteSensingColumns = []string{"field_id", "crop", "t_years", "c_pct", "slope_pct", "contour_pct"}
)

// table is a CSV input read with its header: columns by name, rows with
// their line numbers. The dialect is that of spreadsheets in pt-BR as well
// as plain CSV: a UTF-8 BOM is skipped, and a header line with ';' and no
// ',' selects ';' as separator and the decimal comma. Blank lines are
// skipped. Every other row must have as many fields as the header: a row
// with more or fewer is an error naming its line and column, never a silent
// shift of columns (an unquoted decimal comma, "9,1", in a ','-separated
// file splits one value in two; the message says so).
type table struct {
	name    string // location of the file, for messages
	col     map[string]int
	rows    [][]string
	lines   []int
	decimal byte
}

// readTable reads the CSV data of the file called name and checks that it
// has the required columns.
func readTable(data []byte, name string, required []string) (*table, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")) // UTF-8 BOM from spreadsheets
	t := &table{name: name, col: map[string]int{}, decimal: '.'}
	r := csv.NewReader(bytes.NewReader(data))
	first, _, _ := bytes.Cut(data, []byte("\n"))
	if bytes.Contains(first, []byte(";")) && !bytes.Contains(first, []byte(",")) {
		r.Comma, t.decimal = ';', ','
	}
	r.FieldsPerRecord = -1
	r.ReuseRecord = false
	header, err := r.Read()
	if err != nil {
		return nil, fmt.Errorf("read %s: header: %w", name, err)
	}
	for i, h := range header {
		t.col[strings.ToLower(strings.TrimSpace(h))] = i
	}
	var missing []string
	for _, c := range required {
		if _, ok := t.col[c]; !ok {
			missing = append(missing, c)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("read %s: missing column(s) %s (want %s)", name, strings.Join(missing, ", "), strings.Join(required, ","))
	}
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil { // a *csv.ParseError names the line and column
			return nil, fmt.Errorf("read %s: %w", name, err)
		}
		line, _ := r.FieldPos(0)
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
			continue
		}
		if err := fieldCount(r, rec, header, name, line); err != nil {
			return nil, err
		}
		t.rows = append(t.rows, rec)
		t.lines = append(t.lines, line)
	}
	return t, nil
}

// fieldCount checks that rec, read at line, has one field per column of
// header, and otherwise names the line and the first column out of place.
func fieldCount(r *csv.Reader, rec, header []string, name string, line int) error {
	n, want := len(rec), len(header)
	if n == want {
		return nil
	}
	if n < want {
		_, col := r.FieldPos(n - 1)
		return fmt.Errorf("read %s: line %d, column %d: %d fields where the header has %d (column %q and after are missing)",
			name, line, col+len(rec[n-1]), n, want, strings.TrimSpace(header[n]))
	}
	_, col := r.FieldPos(want)
	hint := ""
	if r.Comma == ',' {
		hint = `; a decimal comma (9,1) in a ','-separated file splits one value in two: write 9.1, quote it ("9,1") or separate the columns with ';'`
	}
	return fmt.Errorf("read %s: line %d, column %d: %d fields where the header has %d (field %d is beyond the last column %q)%s",
		name, line, col, n, want, want+1, strings.TrimSpace(header[want-1]), hint)
}

// cell returns the trimmed value of column c in row i ("" when short).
func (t *table) cell(i int, c string) string {
	j := t.col[c]
	if j >= len(t.rows[i]) {
		return ""
	}
	return strings.TrimSpace(t.rows[i][j])
}

// id returns the field_id of row i, or "file:line" when it is empty.
func (t *table) id(i int) (string, bool) {
	if id := t.cell(i, "field_id"); id != "" {
		return id, true
	}
	return fmt.Sprintf("%s:%d", path.Base(t.name), t.lines[i]), false
}

// where names row i in messages: "file line n".
func (t *table) where(i int) string { return fmt.Sprintf("%s line %d", t.name, t.lines[i]) }

// float reads an optional number: empty cell → nil.
func (t *table) float(i int, c string) (*float64, error) {
	s := t.cell(i, c)
	if s == "" {
		return nil, nil
	}
	if t.decimal == ',' {
		s = strings.Replace(s, ",", ".", 1)
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return nil, fmt.Errorf("%s: %s = %q is not a number", t.where(i), c, t.cell(i, c))
	}
	return &v, nil
}
