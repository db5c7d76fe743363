package tillage

import (
	"strings"
	"testing"
	"time"

	"github.com/manejo/manejo/zarc"
)

func d(s string) time.Time {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		panic(err)
	}
	return t
}

// TestLevelTabela1 checks IN 2/2025 Tabela 1, indicator 4 "Tempo (T) sem
// revolvimento do solo (anos)": "T < 3 | 3 ≤ T < 5 | 5 ≤ T < 8 | T ≥ 8",
// at and around each bound, for the whole years T counts (zarc.TLevel, the
// level T carries).
func TestLevelTabela1(t *testing.T) {
	for _, tc := range []struct{ years, want int }{
		{-1, 1}, {0, 1}, {2, 1}, {3, 2}, {4, 2}, {5, 3}, {7, 3}, {8, 4}, {9, 4}, {30, 4},
	} {
		if got := zarc.TLevel(float64(tc.years)); got != tc.want {
			t.Errorf("zarc.TLevel(%d) = %d, want %d", tc.years, got, tc.want)
		}
	}
}

// TestFullYears checks "anos completos" (IN 2/2025 item 2.1 IV) counted by
// anniversaries, with Código Civil art. 132 §3 for 29 February.
func TestFullYears(t *testing.T) {
	for _, tc := range []struct {
		name string
		a, b string
		want int
	}{
		{"same day", "2020-05-10", "2020-05-10", 0},
		{"day before first anniversary", "2020-05-10", "2021-05-09", 0},
		{"first anniversary", "2020-05-10", "2021-05-10", 1},
		{"b before a", "2021-05-10", "2020-05-10", 0},
		{"Feb 29 to Feb 28 of a common year", "2020-02-29", "2021-02-28", 0},
		{"Feb 29 to Mar 1 of a common year", "2020-02-29", "2021-03-01", 1},
		{"Feb 29 to Feb 28 of the next leap year", "2020-02-29", "2024-02-28", 3},
		{"Feb 29 to Feb 29", "2020-02-29", "2024-02-29", 4},
		{"Feb 28 to Feb 29", "2023-02-28", "2024-02-29", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := FullYears(d(tc.a), d(tc.b)); got != tc.want {
				t.Errorf("FullYears(%s, %s) = %d, want %d", tc.a, tc.b, got, tc.want)
			}
		})
	}
}

// TestYearsTabela1Bounds: T from the last event (IN 2/2025 item 2.1 IV,
// Tabela 1), one day either side of each level bound.
func TestYearsTabela1Bounds(t *testing.T) {
	ev := []Event{{Date: d("2012-03-01")}, {Date: d("2018-09-10")}}
	hist := d("2010-07-01")
	for _, tc := range []struct {
		asOf        string
		years, want int
	}{
		{"2021-09-09", 2, 1}, {"2021-09-10", 3, 2},
		{"2023-09-09", 4, 2}, {"2023-09-10", 5, 3},
		{"2026-09-09", 7, 3}, {"2026-09-10", 8, 4},
	} {
		t.Run(tc.asOf, func(t *testing.T) {
			got := Years(ev, hist, d(tc.asOf))
			if got.Years != tc.years || got.Level != tc.want || got.Censored {
				t.Errorf("Years(asOf %s) = %d years level %d censored %v, want %d level %d", tc.asOf, got.Years, got.Level, got.Censored, tc.years, tc.want)
			}
			if got.LastEvent == nil || !got.LastEvent.Equal(d("2018-09-10")) {
				t.Errorf("LastEvent = %v, want 2018-09-10", got.LastEvent)
			}
		})
	}
}

func TestYearsIgnoresEventsAfterAsOf(t *testing.T) {
	ev := []Event{{Date: d("2015-08-01")}, {Date: d("2025-08-01")}}
	got := Years(ev, d("2014-07-01"), d("2024-07-01"))
	if got.Years != 8 || got.Level != 4 {
		t.Errorf("Years = %d level %d, want 8 level 4 (the 2025 event is after the reference date)", got.Years, got.Level)
	}
}

// TestYearsCensored: no event in the history gives only a lower bound on T;
// it decides a level only when the bound already reaches Tabela 1's T ≥ 8.
func TestYearsCensored(t *testing.T) {
	t.Run("no event in 9 years of history → level 4 with t_years_min 9", func(t *testing.T) {
		got := Years(nil, d("2017-07-01"), d("2026-07-01"))
		if !got.Censored || got.MinYears != 9 || got.Level != 4 || got.LastEvent != nil {
			t.Errorf("got %+v, want censored, MinYears 9, level 4", got)
		}
	})
	t.Run("no event in 8 years less a day → undecided", func(t *testing.T) {
		got := Years(nil, d("2018-07-02"), d("2026-07-01"))
		if !got.Censored || got.MinYears != 7 || got.Level != 0 {
			t.Errorf("got %+v, want censored, MinYears 7, level 0", got)
		}
	})
	t.Run("no event in 4 years → insufficient history, level undecided", func(t *testing.T) {
		got := Years(nil, d("2022-07-01"), d("2026-07-01"))
		if !got.Censored || got.MinYears != 4 || got.Level != 0 || !strings.Contains(got.Reason, "insufficient history") {
			t.Errorf("got %+v, want censored, MinYears 4, level 0, reason insufficient history", got)
		}
	})
	t.Run("history starting after the reference date", func(t *testing.T) {
		got := Years(nil, d("2027-01-01"), d("2026-07-01"))
		if got.Level != 0 || got.MinYears != 0 || got.Reason == "" {
			t.Errorf("got %+v, want level 0 with a reason", got)
		}
	})
}
