package coverage

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
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
// is YYYY-MM-DD and must fall inside that season (whose year starts on
// yearStart; zero means 07-01), crop is soja or milho.
//
// Bad lines do not stop the reading: ReadSowingCSV returns every good line
// together with an error joining one ErrSowingCSV per bad line, each naming
// its line number and the problem. A repeated field_id/season is an error on
// the later line.
func ReadSowingCSV(r io.Reader, yearStart MonthDay) (Declarations, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.TrimLeadingSpace = true
	cr.Comment = '#'
	out := Declarations{}
	var errs []error
	col := map[string]int{"field_id": 0, "season": 1, "sowing_date": 2, "crop": 3}
	first := true
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				errs = append(errs, fmt.Errorf("%w: line %d: %v", ErrSowingCSV, pe.Line, pe.Err))
				continue
			}
			return out, fmt.Errorf("read sowing csv: %w", err)
		}
		line, _ := cr.FieldPos(0)
		if first {
			first = false
			if strings.EqualFold(strings.TrimSpace(strings.TrimPrefix(rec[0], "\ufeff")), "field_id") || hasName(rec, "sowing_date") {
				col = map[string]int{}
				for i, name := range rec {
					col[strings.ToLower(strings.TrimSpace(strings.TrimPrefix(name, "\ufeff")))] = i
				}
				for _, need := range []string{"field_id", "season", "sowing_date"} {
					if _, ok := col[need]; !ok {
						return out, fmt.Errorf("%w: line %d: header lacks column %q", ErrSowingCSV, line, need)
					}
				}
				continue
			}
		}
		d, err := parseDeclared(rec, col, yearStart)
		if err != nil {
			errs = append(errs, fmt.Errorf("%w: line %d: %v", ErrSowingCSV, line, err))
			continue
		}
		d.Line = line
		k := Key{d.FieldID, d.Season}
		if prev, dup := out[k]; dup {
			errs = append(errs, fmt.Errorf("%w: line %d: talhão %q season %s already declared on line %d", ErrSowingCSV, line, d.FieldID, d.Season, prev.Line))
			continue
		}
		out[k] = d
	}
	return out, errors.Join(errs...)
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
	t, err := time.Parse(time.DateOnly, raw)
	if err != nil {
		return d, fmt.Errorf("talhão %q: sowing_date %q: want YYYY-MM-DD", d.FieldID, raw)
	}
	d.Date = t
	if !s.Contains(t) {
		return d, fmt.Errorf("talhão %q: sowing_date %s is outside season %s (%s to %s)", d.FieldID, raw, s.Label,
			s.Start.Format(time.DateOnly), s.End.AddDate(0, 0, -1).Format(time.DateOnly))
	}
	switch c := strings.ToLower(get("crop")); c {
	case "":
	case string(zarc.Soja), string(zarc.Milho):
		d.Crop = zarc.Crop(c)
	default:
		return d, fmt.Errorf("talhão %q: crop %q, want soja or milho", d.FieldID, c)
	}
	return d, nil
}
