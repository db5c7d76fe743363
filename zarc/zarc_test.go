package zarc

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

// IN SPA/MAPA 2/2025, annex, Tabela 1 ("Indicadores de manejo e respectivos
// intervalos de classificação"), rows 4 and 5 (unchanged by Portaria
// SPA/MAPA 349/2026):
//
//	4 Tempo (T) sem revolvimento do solo (anos):
//	  T < 3 | 3 ≤ T < 5 | 5 ≤ T < 8 | T ≥ 8
//	5 Cobertura do solo (C) com palhada em pré-semeadura da cultura principal (%):
//	  0 ≤ C < 30 | 30 ≤ C < 60 | 60 ≤ C < 90 | C ≥ 90
//
// Each bound belongs to the upper level.
func TestTabela1(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		got  int
		want int
	}{
		{"T=0", TLevel(0), 1},
		{"T=2.99", TLevel(2.99), 1},
		{"T=3", TLevel(3), 2},
		{"T=4.9", TLevel(4.9), 2},
		{"T=5", TLevel(5), 3},
		{"T=7", TLevel(7), 3},
		{"T=8", TLevel(8), 4},
		{"T=40", TLevel(40), 4},
		{"T=-1", TLevel(-1), 1},
		{"T=NaN", TLevel(math.NaN()), 0},
		{"C=0", CLevel(0), 1},
		{"C=29.99", CLevel(29.99), 1},
		{"C=30", CLevel(30), 2},
		{"C=59.9", CLevel(59.9), 2},
		{"C=60", CLevel(60), 3},
		{"C=89.9", CLevel(89.9), 3},
		{"C=90", CLevel(90), 4},
		{"C=100", CLevel(100), 4},
		{"C=NaN", CLevel(math.NaN()), 0},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: level %d, want %d", tt.name, tt.got, tt.want)
		}
	}
}

func TestParseAgriYear(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		want    AgriYear
		wantErr string
	}{
		{"2024/2025", 2024, ""},
		{" 2024/2025 ", 2024, ""},
		{"2024-2025", 2024, ""},
		{"2024/25", 2024, ""},
		{"2099/00", 2099, ""},
		{"9999/00", 0, "YYYY/YYYY"},
		{"2024/2026", 0, "second year must be 2025"},
		{"2024/26", 0, "second year must be 2025"},
		{"2024", 0, "YYYY/YYYY"},
		{"24/25", 0, "YYYY/YYYY"},
		{"abcd/efgh", 0, "YYYY/YYYY"},
		{"", 0, "YYYY/YYYY"},
	}
	for _, tt := range tests {
		got, err := ParseAgriYear(tt.in)
		if tt.wantErr == "" {
			if err != nil || got != tt.want {
				t.Errorf("ParseAgriYear(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
			}
			continue
		}
		if !errors.Is(err, ErrAgriYear) || !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("ParseAgriYear(%q) error %v; want ErrAgriYear saying %q", tt.in, err, tt.wantErr)
		}
	}
	if s := AgriYear(2024).String(); s != "2024/2025" {
		t.Errorf("String = %q", s)
	}
}

func TestDay(t *testing.T) {
	t.Parallel()
	brt := time.FixedZone("BRT", -3*3600)
	in := time.Date(2024, 10, 5, 22, 30, 0, 0, brt) // 2024-10-06 01:30 UTC
	if got, want := Day(in), time.Date(2024, 10, 6, 0, 0, 0, 0, time.UTC); !got.Equal(want) || got.Location() != time.UTC {
		t.Errorf("Day = %v, want %v", got, want)
	}
}

// Portaria SPA/MAPA 206/2026, item 3.3: each month has three decêndios
// (1–10, 11–20, 21 to the month's end), numbered 1 to 36 over the year.
func TestDecendio(t *testing.T) {
	t.Parallel()
	tests := []struct {
		day  string
		want int
	}{
		{"2024-01-01", 1}, {"2024-01-10", 1}, {"2024-01-11", 2}, {"2024-01-20", 2},
		{"2024-01-21", 3}, {"2024-01-31", 3}, {"2024-02-29", 6}, {"2024-10-15", 29},
		{"2024-12-31", 36},
	}
	for _, tt := range tests {
		d, _ := time.Parse(time.DateOnly, tt.day)
		if got := Decendio(d); got != tt.want {
			t.Errorf("Decendio(%s) = %d, want %d", tt.day, got, tt.want)
		}
	}
	if got := Decendio(time.Time{}); got != 0 {
		t.Errorf("Decendio(zero) = %d, want 0", got)
	}
}

// FuzzParseAgriYear checks that any accepted agricultural year round-trips
// through String and names two consecutive years.
func FuzzParseAgriYear(f *testing.F) {
	for _, s := range []string{"2024/2025", "2024-2025", "2024/25", "2099/00", "9999/00", "2024/2026", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		y, err := ParseAgriYear(s)
		if err != nil {
			return
		}
		back, err := ParseAgriYear(y.String())
		if err != nil || back != y {
			t.Fatalf("ParseAgriYear(%q) = %v; String %q parses to %v, %v", s, y, y.String(), back, err)
		}
	})
}

func TestDate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		days Date
	}{
		{"1970-01-01", 0},
		{"1969-12-31", -1},
		{"2024-02-29", 19782},
		{"2026-06-30", 20634},
	} {
		d, err := ParseDate(tc.in)
		if err != nil || d != tc.days || d.String() != tc.in {
			t.Errorf("ParseDate(%q) = %d (%s), %v; want %d", tc.in, d, d, err, tc.days)
		}
		// Any instant of the day, in any zone, is the same UTC calendar day.
		at := d.Time().Add(23*time.Hour + 59*time.Minute)
		if got := DateOf(at); got != d {
			t.Errorf("DateOf(%s) = %s, want %s", at, got, d)
		}
	}
	if OptDate(time.Time{}) != nil {
		t.Error("OptDate(zero time) is not nil")
	}
	if _, err := ParseDate("2024-02-30"); err == nil {
		t.Error("ParseDate(2024-02-30): no error")
	}
}
