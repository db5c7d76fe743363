package coverage

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/manejo/manejo/zarc"
)

// ErrSowingCSV reports a bad line in a declared sowing-date file.
var ErrSowingCSV = errors.New("coverage: bad sowing csv")

// Declared is a sowing date declared by the operator for one talhão and
// season (`--sowing F.csv`). It wins over the detected date.
type Declared struct {
	FieldID string
	Season  string    // agricultural-year label, "2023/2024"
	Date    time.Time // sowing day, UTC midnight
	Crop    zarc.Crop // empty when the file has no crop column or leaves it blank
	Line    int       // line number in the file, for messages
}

// Key identifies one declaration: a talhão and an agricultural year.
type Key struct{ FieldID, Season string }

// Declarations holds declared sowing dates by talhão and season.
type Declarations map[Key]Declared

// For returns the declarations of one talhão keyed by season label, the form
// Assess takes. It returns an empty map (never nil) when there are none.
func (d Declarations) For(fieldID string) map[string]Declared {
	out := map[string]Declared{}
	for k, v := range d {
		if k.FieldID == fieldID {
			out[k.Season] = v
		}
	}
	return out
}

// ReadSowingCSV reads declared sowing dates from CSV with the columns
// field_id,season,sowing_date[,crop] (a header row with these names is
// optional; columns may then come in any order). season is an
// agricultural year as ParseSeason reads it ("2024/2025", "2024-2025" or
// "2024/25"; the declaration is keyed by the canonical label), sowing_date
// is YYYY-MM-DD or DD/MM/YYYY (as pt-BR spreadsheets write it) and must fall
// inside that season (whose year starts on yearStart; zero means 07-01),
// crop is a crop zarc.ParseCrop reads (soja, milho, algodao-grupo-2, ...).
//
// The dialect is that of spreadsheets as well as plain CSV: a UTF-8 BOM is
// skipped, lines starting with '#' are comments, and a first line with ';'
// and no ',' selects ';' as separator (Excel in pt-BR). Each physical line
// is one row: a stray '"' is an error on its own line and never swallows
// the lines after it (quoted fields cannot span lines). A row must have one
// field per column of the header (3 or 4 without a header).
//
// Bad lines do not stop the reading: ReadSowingCSV returns every good line
// together with an error joining one ErrSowingCSV per bad line, each naming
// its line number and the problem. A repeated field_id/season is an error on
// the later line. A file with no usable row also wraps ErrNoSowing. The ids
// are kept as written: Declarations.CheckIDs compares them with the
// talhões of the run.
func ReadSowingCSV(r io.Reader, yearStart MonthDay) (Declarations, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return Declarations{}, fmt.Errorf("read sowing csv: %w", err)
	}
	sr := sowingReader{yearStart: yearStart, out: Declarations{},
		col: map[string]int{"field_id": 0, "season": 1, "sowing_date": 2, "crop": 3}}
	text := strings.TrimPrefix(string(data), "\ufeff")
	for i, raw := range strings.Split(text, "\n") {
		if err := sr.row(i+1, strings.TrimSuffix(raw, "\r")); err != nil {
			return sr.out, err
		}
	}
	if len(sr.out) == 0 {
		sr.errs = append(sr.errs, fmt.Errorf("%w: %w (%d bad lines)", ErrSowingCSV, ErrNoSowing, len(sr.errs)))
	}
	return sr.out, errors.Join(sr.errs...)
}

// ErrNoSowing reports a sowing file without a single usable row: a run
// given such a file would silently fall back to the detected dates.
var ErrNoSowing = errors.New("no usable row (want field_id,season,sowing_date[,crop], separated by ',' or ';')")

// sowingReader is the state of ReadSowingCSV between lines.
type sowingReader struct {
	yearStart MonthDay
	comma     rune // 0 until the first non-blank line fixes it
	header    int  // fields of the header row; 0 without one
	col       map[string]int
	out       Declarations
	errs      []error
}

// row reads one physical line; its error stops the reading (a header
// lacking a column), bad data is collected in sr.errs.
func (sr *sowingReader) row(line int, text string) error {
	if strings.TrimSpace(text) == "" || strings.HasPrefix(strings.TrimSpace(text), "#") {
		return nil
	}
	first := sr.comma == 0
	if first {
		sr.comma = ','
		if strings.Contains(text, ";") && !strings.Contains(text, ",") {
			sr.comma = ';'
		}
	}
	cr := csv.NewReader(strings.NewReader(text))
	cr.Comma, cr.FieldsPerRecord, cr.TrimLeadingSpace = sr.comma, -1, true
	rec, err := cr.Read()
	if err != nil {
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			err = fmt.Errorf("column %d: %v", pe.Column, pe.Err)
		}
		sr.errs = append(sr.errs, fmt.Errorf("%w: line %d: %v", ErrSowingCSV, line, err))
		return nil
	}
	if first && (strings.EqualFold(strings.TrimSpace(rec[0]), "field_id") || hasName(rec, "sowing_date")) {
		return sr.readHeader(line, rec)
	}
	if n := len(rec); (sr.header > 0 && n != sr.header) || (sr.header == 0 && (n < 3 || n > 4)) {
		want := "3 or 4 (field_id,season,sowing_date[,crop])"
		if sr.header > 0 {
			want = fmt.Sprintf("%d, as the header", sr.header)
		}
		sr.errs = append(sr.errs, fmt.Errorf("%w: line %d: %d fields, want %s", ErrSowingCSV, line, n, want))
		return nil
	}
	sr.add(line, rec)
	return nil
}

// readHeader takes the column names of the header row.
func (sr *sowingReader) readHeader(line int, rec []string) error {
	sr.col, sr.header = map[string]int{}, len(rec)
	for i, name := range rec {
		sr.col[strings.ToLower(strings.TrimSpace(name))] = i
	}
	for _, need := range []string{"field_id", "season", "sowing_date"} {
		if _, ok := sr.col[need]; !ok {
			return fmt.Errorf("%w: line %d: header lacks column %q", ErrSowingCSV, line, need)
		}
	}
	return nil
}

// add parses one data row and keeps it unless it is bad or repeated.
func (sr *sowingReader) add(line int, rec []string) {
	d, err := parseDeclared(rec, sr.col, sr.yearStart)
	if err != nil {
		sr.errs = append(sr.errs, fmt.Errorf("%w: line %d: %v", ErrSowingCSV, line, err))
		return
	}
	d.Line = line
	k := Key{d.FieldID, d.Season}
	if prev, dup := sr.out[k]; dup {
		sr.errs = append(sr.errs, fmt.Errorf("%w: line %d: talhão %q season %s already declared on line %d", ErrSowingCSV, line, d.FieldID, d.Season, prev.Line))
		return
	}
	sr.out[k] = d
}

// CheckIDs compares the declared talhão ids with those of the run (known)
// and returns an error joining one ErrSowingCSV per declared id that is
// not a talhão, naming its first line and, when one exists, the talhão id
// that differs from it only in case (ids are compared exactly: "T01" does
// not declare "t01"). It returns nil when every declaration names a
// talhão. Pure: the caller, which knows the talhões, reports the result.
func (d Declarations) CheckIDs(known []string) error {
	exact := make(map[string]bool, len(known))
	folded := make(map[string]string, len(known))
	for _, id := range known {
		exact[id] = true
		folded[strings.ToLower(id)] = id
	}
	first := map[string]int{}
	for k, v := range d {
		if !exact[k.FieldID] && (first[k.FieldID] == 0 || v.Line < first[k.FieldID]) {
			first[k.FieldID] = v.Line
		}
	}
	ids := make([]string, 0, len(first))
	for id := range first {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool {
		return first[ids[i]] < first[ids[j]] || (first[ids[i]] == first[ids[j]] && ids[i] < ids[j])
	})
	var errs []error
	for _, id := range ids {
		hint := ""
		if c, ok := folded[strings.ToLower(id)]; ok {
			hint = fmt.Sprintf(" (talhão %q differs only in case; ids are compared exactly)", c)
		}
		errs = append(errs, fmt.Errorf("%w: line %d: talhão %q is not among the talhões of the run%s; its sowing dates are not used", ErrSowingCSV, first[id], id, hint))
	}
	return errors.Join(errs...)
}

func hasName(rec []string, name string) bool {
	for _, f := range rec {
		if strings.EqualFold(strings.TrimSpace(f), name) {
			return true
		}
	}
	return false
}

func parseDeclared(rec []string, col map[string]int, yearStart MonthDay) (Declared, error) {
	get := func(name string) string {
		i, ok := col[name]
		if !ok || i >= len(rec) {
			return ""
		}
		return strings.TrimSpace(rec[i])
	}
	if len(rec) < 3 {
		return Declared{}, fmt.Errorf("%d columns, want field_id,season,sowing_date[,crop]", len(rec))
	}
	d := Declared{FieldID: get("field_id")}
	if d.FieldID == "" {
		return d, errors.New("empty field_id")
	}
	s, err := ParseSeason(get("season"), yearStart)
	if err != nil {
		return d, fmt.Errorf("talhão %q: %v", d.FieldID, err)
	}
	d.Season = s.Label
	raw := get("sowing_date")
	t, err := parseSowingDate(raw)
	if err != nil {
		return d, fmt.Errorf("talhão %q: sowing_date %q: want YYYY-MM-DD or DD/MM/YYYY", d.FieldID, raw)
	}
	d.Date = t
	if !s.Contains(t) {
		return d, fmt.Errorf("talhão %q: sowing_date %s is outside season %s (%s to %s)", d.FieldID, raw, s.Label,
			s.Start.Format(time.DateOnly), s.End.AddDate(0, 0, -1).Format(time.DateOnly))
	}
	if c := get("crop"); c != "" {
		crop, err := zarc.ParseCrop(c)
		if err != nil {
			return d, fmt.Errorf("talhão %q: %v", d.FieldID, err)
		}
		d.Crop = crop
	}
	return d, nil
}

// parseSowingDate reads YYYY-MM-DD or DD/MM/YYYY (day and month of one or
// two digits, as pt-BR spreadsheets write them; never MM/DD).
func parseSowingDate(s string) (time.Time, error) {
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	return time.Parse("2/1/2006", s)
}
