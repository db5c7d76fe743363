package coverage

import (
	"errors"
	"strings"
	"testing"

	"github.com/manejo/manejo/zarc"
)

func TestReadSowingCSV(t *testing.T) {
	in := `field_id,season,sowing_date,crop
f1,2023/2024,2023-10-14,soja
f1,2024/2025,2024-10-09,
f2,2024/2025,2024-09-30,milho
f3,2024/2025,2025-07-02,soja
f4,2024/2025,14/10/2024,soja
f5,2024/2026,2024-10-14,soja
f1,2024/2025,2024-10-20,soja
f6,2024/2025,2024-10-20,trigo
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
	for _, want := range []string{"line 5:", "outside season 2024/2025", "line 6:", "YYYY-MM-DD", "line 7:", "YYYY/YYYY", "line 8:", "already declared on line 3", "line 9:", "trigo"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if f := got.For("f1"); len(f) != 2 || f["2023/2024"].Date.Format("2006-01-02") != "2023-10-14" {
		t.Errorf("For(f1) = %v", f)
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
