package tillage

import (
	"fmt"
	"time"

	"github.com/manejo/manejo/zarc"
)

// UndecidedYears is the history length (full years) a talhão without any
// event needs before its censored T decides a level: T ≥ 8 is level 4
// (IN 2/2025, Tabela 1), and a shorter event-free history leaves T's level
// open.
const UndecidedYears = 8

// T is indicator T of IN 2/2025 item 2.1 IV: full years since the last
// soil revolving (ploughing, harrowing, subsoiling, chiselling).
type T struct {
	// Years is T in full anniversary years from the last event to the
	// reference date. When Censored it equals MinYears (a lower bound).
	Years int
	// Censored is true when no event lies in the history: the true T is at
	// least MinYears (the history's length in full years).
	Censored bool
	// MinYears is the lower bound of T when Censored (t_years_min); equal to
	// Years otherwise.
	MinYears int
	// Level is the Tabela 1 level 1..4, or 0 when undecided (censored with
	// under UndecidedYears of history, or no usable history).
	Level int
	// Reason explains an undecided or censored result in one sentence; ""
	// for a plain event-based T.
	Reason string
	// LastEvent is the date of the last event on or before the reference
	// date, nil when there is none.
	LastEvent *time.Time
	// HistoryStart is the first date the series covers (as given).
	HistoryStart time.Time
}

// FullYears returns the whole years from a to b (0 when b is before a),
// counting anniversaries as the Brazilian Civil Code does for periods in
// years (Código Civil art. 132 §3): a period starting on 29 February ends on
// 1 March of a non-leap year. Dates are compared at day resolution in UTC.
func FullYears(a, b time.Time) int {
	a, b = zarc.Day(a), zarc.Day(b)
	if b.Before(a) {
		return 0
	}
	n := b.Year() - a.Year()
	for n > 0 && a.AddDate(n, 0, 0).After(b) {
		n--
	}
	return n
}

// Years computes T at the reference date asOf from the talhão's events and
// the start of its observed history. Events after asOf are ignored. With an
// event, T is the full years from the last event's Date (the date sent to
// SINM) to asOf, and its level follows Tabela 1. Without one, T is censored
// at the history's length: level 4 when that already reaches 8 years,
// otherwise level 0 with the reason "insufficient history".
func Years(events []Event, historyStart, asOf time.Time) T {
	t := T{HistoryStart: historyStart}
	var last *time.Time
	for i := range events {
		d := events[i].Date
		if zarc.Day(d).After(zarc.Day(asOf)) {
			continue
		}
		if last == nil || d.After(*last) {
			dd := d
			last = &dd
		}
	}
	if last != nil {
		t.LastEvent = last
		t.Years = FullYears(*last, asOf)
		t.MinYears = t.Years
		t.Level = zarc.TLevel(float64(t.Years))
		return t
	}
	t.Censored = true
	if zarc.Day(historyStart).After(zarc.Day(asOf)) {
		t.Reason = fmt.Sprintf("no history: it starts %s, after the reference date %s",
			historyStart.Format(time.DateOnly), asOf.Format(time.DateOnly))
		return t
	}
	t.MinYears = FullYears(historyStart, asOf)
	t.Years = t.MinYears
	if t.MinYears >= UndecidedYears {
		t.Level = zarc.TLevel(float64(t.MinYears))
		t.Reason = fmt.Sprintf("no soil revolving in %d full years of history (since %s): T ≥ %d",
			t.MinYears, historyStart.Format(time.DateOnly), t.MinYears)
		return t
	}
	t.Reason = fmt.Sprintf("insufficient history: no soil revolving in %d full years (since %s), T ≥ %d does not decide the level (needs %d)",
		t.MinYears, historyStart.Format(time.DateOnly), t.MinYears, UndecidedYears)
	return t
}
