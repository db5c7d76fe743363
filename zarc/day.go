package zarc

import "time"

// Day returns the calendar day of t in UTC, at midnight: the unit of every
// time series in manejo (scenes are dated by their acquisition day).
func Day(t time.Time) time.Time {
	y, m, d := t.UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// Decendio returns the ZARC sowing period of day t, 1..36: each month has
// three, days 1–10, 11–20 and 21 to the month's end, numbered from
// 1 (1–10 January) to 36 (21–31 December) (Portaria SPA/MAPA 206/2026,
// item 3.3). The zero time gives 0.
func Decendio(t time.Time) int {
	if t.IsZero() {
		return 0
	}
	d := Day(t)
	k := 3
	switch {
	case d.Day() <= 10:
		k = 1
	case d.Day() <= 20:
		k = 2
	}
	return (int(d.Month())-1)*3 + k
}
