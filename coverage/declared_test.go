package coverage

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/manejo/manejo/zarc"
)

func TestReadSowingCSV(t *testing.T) {
	in := `field_id,season,sowing_date,crop
f1,2023/2024,2023-10-14,soja
f1,2024/2025,2024-10-09,
f2,2024/2025,2024-09-30,milho
f3,2024/2025,2025-07-02,soja
f4,2024/2025,10/14/2024,soja
f5,2024/2026,2024-10-14,soja
f1,2024/2025,2024-10-20,soja
f6,2024/2025,2024-10-20,arroz
`
	got, err := ReadSowingCSV(strings.NewReader(in), MonthDay{})
	if len(got) != 3 {
		t.Fatalf("read %d good rows, want 3: %v", len(got), got)
	}
	d := got[Key{"f1", "2024/2025"}]
	if d.Date.Format("2006-01-02") != "2024-10-09" || d.Crop != "" || d.Line != 3 {
		t.Errorf("f1 2024/2025 = %+v", d)
	}
	if got[Key{"f2", "2024/2025"}].Crop != zarc.Milho {
		t.Errorf("f2 crop = %q, want milho", got[Key{"f2", "2024/2025"}].Crop)
	}
	if !errors.Is(err, ErrSowingCSV) {
		t.Fatalf("err = %v, want ErrSowingCSV", err)
	}
	for _, want := range []string{"line 5:", "outside season 2024/2025", "line 6:", "DD/MM/YYYY", "line 7:", "YYYY/YYYY", "line 8:", "already declared on line 3", "line 9:", "arroz"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if f := got.For("f1"); len(f) != 2 || f["2023/2024"].Date.Format("2006-01-02") != "2023-10-14" {
		t.Errorf("For(f1) = %v", f)
	}
}

// TestReadSowingCSVDialects reproduces defect 11 of issue 19: a ';'-separated
// file with DD/MM/YYYY dates (what Excel in pt-BR exports) had every row
// rejected and the run used the detected dates without a word; one stray '"'
// swallowed every later line; a file with no usable row was no error.
func TestReadSowingCSVDialects(t *testing.T) {
	br := "\ufefffield_id;season;sowing_date;crop\r\nT01;2024/2025;14/10/2024;soja\r\nT02;2024/2025;1/11/2024;milho\r\n"
	got, err := ReadSowingCSV(strings.NewReader(br), MonthDay{})
	if err != nil || len(got) != 2 {
		t.Fatalf("pt-BR Excel file: %v, %v; want two rows", got, err)
	}
	if d := got[Key{"T02", "2024/2025"}]; d.Date.Format(time.DateOnly) != "2024-11-01" || d.Crop != zarc.Milho || d.Line != 3 {
		t.Errorf("T02 = %+v, want 2024-11-01 milho on line 3", d)
	}

	// A stray quote is an error on its own line; the lines after it are read.
	quote := "field_id,season,sowing_date\nT01,\"2024/2025,2024-10-14\nT02,2024/2025,2024-10-20\nT03,2024/2025,2024-10-21\n"
	got, err = ReadSowingCSV(strings.NewReader(quote), MonthDay{})
	if len(got) != 2 || got[Key{"T03", "2024/2025"}].Line != 4 {
		t.Errorf("after a stray quote: %v, want T02 and T03", got)
	}
	if err == nil || !strings.Contains(err.Error(), "line 2: column") || errors.Is(err, ErrNoSowing) {
		t.Errorf("stray quote: err = %v, want a line 2 error", err)
	}

	// A row with more fields than the header is an error, not a shift.
	_, err = ReadSowingCSV(strings.NewReader("field_id,season,sowing_date\nT01,2024/2025,14,10,2024\nT02,2024/2025,2024-10-20\n"), MonthDay{})
	if err == nil || !strings.Contains(err.Error(), "line 2: 5 fields, want 3") {
		t.Errorf("long row: err = %v", err)
	}

	// No usable row: an error that says so, besides one per bad line.
	for _, in := range []string{"", "field_id,season,sowing_date\n", "T01,2024/2025,2024-13-45\nT02,2024/2025\n"} {
		got, err := ReadSowingCSV(strings.NewReader(in), MonthDay{})
		if len(got) != 0 || !errors.Is(err, ErrNoSowing) || !errors.Is(err, ErrSowingCSV) {
			t.Errorf("%q: %v, %v; want ErrNoSowing", in, got, err)
		}
	}
}

// TestDeclarationsCheckIDs: declared ids that are not talhões of the run,
// or differ from one only in case, were ignored without a word (defect 11).
func TestDeclarationsCheckIDs(t *testing.T) {
	in := "field_id,season,sowing_date\nT01,2024/2025,2024-10-14\nt02,2024/2025,2024-10-14\nX9,2023/2024,2023-10-14\nX9,2024/2025,2024-10-14\n"
	d, err := ReadSowingCSV(strings.NewReader(in), MonthDay{})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.CheckIDs([]string{"T01", "T02", "X9"}); err == nil || !strings.Contains(err.Error(), `line 3: talhão "t02"`) ||
		!strings.Contains(err.Error(), `"T02" differs only in case`) {
		t.Errorf("case mismatch: %v", err)
	}
	err = d.CheckIDs([]string{"T01", "t02"})
	if err == nil || !errors.Is(err, ErrSowingCSV) || !strings.Contains(err.Error(), `line 4: talhão "X9" is not among`) || strings.Contains(err.Error(), "line 5") {
		t.Errorf("unknown id: %v, want one error for X9 at its first line 4", err)
	}
	if err := d.CheckIDs([]string{"T01", "t02", "X9"}); err != nil {
		t.Errorf("all known: %v", err)
	}
}

func TestReadSowingCSVNoHeaderAndBoundary(t *testing.T) {
	md, _ := ParseMonthDay("08-01")
	got, err := ReadSowingCSV(strings.NewReader("f1,2023/2024,2024-07-15\n"), md)
	if err != nil || len(got) != 1 {
		t.Fatalf("got %v, %v; want one row (2024-07-15 is inside 2023/2024 when the year starts 08-01)", got, err)
	}
	if _, err := ReadSowingCSV(strings.NewReader("f1,2023/2024,2024-07-15\n"), MonthDay{}); err == nil {
		t.Error("2024-07-15 accepted in 2023/2024 with the 07-01 boundary")
	}
	if _, err := ReadSowingCSV(strings.NewReader("id,season,date\n"), MonthDay{}); err != nil {
		t.Logf("header without the expected names is read as data: %v", err)
	}
	if _, err := ReadSowingCSV(strings.NewReader("season,field_id\n"), MonthDay{}); err == nil || !strings.Contains(err.Error(), "sowing_date") {
		t.Errorf("header lacking sowing_date: err = %v", err)
	}
}

func FuzzReadSowingCSV(f *testing.F) {
	f.Add("field_id,season,sowing_date,crop\nf1,2023/2024,2023-10-14,soja\n")
	f.Add("f1,2023/2024,2023-10-14\nf2,2024/2025,2024-11-01,milho\n")
	f.Add("\ufefffield_id,season,sowing_date\n\"a,b\",2023/2024,2023-10-14\n")
	f.Fuzz(func(t *testing.T, in string) {
		got, _ := ReadSowingCSV(strings.NewReader(in), MonthDay{})
		for k, d := range got {
			s, err := ParseSeason(k.Season, MonthDay{})
			if err != nil {
				t.Fatalf("kept row with bad season %q: %v", k.Season, err)
			}
			if !s.Contains(d.Date) || k.FieldID == "" || k.FieldID != d.FieldID {
				t.Fatalf("kept invalid row %+v", d)
			}
			if d.Crop != "" && d.Crop != zarc.Soja && d.Crop != zarc.Milho {
				t.Fatalf("kept crop %q", d.Crop)
			}
		}
	})
}

func FuzzParseSeason(f *testing.F) {
	f.Add("2026/2027", "07-01")
	f.Add("1999/2000", "12-31")
	f.Fuzz(func(t *testing.T, label, md string) {
		m, err := ParseMonthDay(md)
		if err != nil {
			return
		}
		s, err := ParseSeason(label, m)
		if err != nil {
			return
		}
		again, err := ParseSeason(s.Label, m)
		if err != nil || again != s {
			t.Fatalf("round trip %q → %+v → %+v, %v", label, s, again, err)
		}
		if !s.Contains(s.Start) || s.Contains(s.End) || SeasonOf(s.Start, m) != s {
			t.Fatalf("season %+v bounds", s)
		}
	})
}

// TestParamsEffective: run.json's parameters.coverage printed Params{} as
// zeros instead of the values used (issue 19 defect 12). Effective fills the
// defaults, keeps what is set, and is a fixed point.
func TestParamsEffective(t *testing.T) {
	e := Params{}.Effective()
	if e.Lambda != defaultLambda || e.WindowDays != 30 || e.MaxNDVI != defaultUnmixMaxNDVI || e.Estimator != EstimatorUnmix ||
		e.LagDays[zarc.Soja] != 25.7 || e.Windows[zarc.Milho][0] != (MonthDay{time.September, 1}) || e.AnchorDays != defaultAnchorDays {
		t.Errorf("Params{}.Effective() = %+v", e)
	}
	p := Params{Lambda: 20, AnchorDays: -1, LagDays: map[zarc.Crop]float64{zarc.Milho: 31}}
	e = p.Effective()
	if e.Lambda != 20 || e.AnchorDays != -1 || e.LagDays[zarc.Milho] != 31 || e.LagDays[zarc.Soja] != 25.7 || p.LagDays[zarc.Soja] != 0 {
		t.Errorf("Effective of %+v = %+v (p changed: %v)", p, e, p.LagDays)
	}
	if again := e.Effective(); fmt.Sprintf("%+v", again) != fmt.Sprintf("%+v", e) {
		t.Errorf("Effective is not a fixed point:\n%+v\n%+v", e, again)
	}
	if err := e.Validate(); err != nil {
		t.Error(err)
	}
}
