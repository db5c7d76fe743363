package coverage

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/manejo/manejo/zarc"
)

// Sentinel errors. Callers test them with errors.Is.
var (
	// ErrSeason reports a malformed agricultural-year label.
	ErrSeason = errors.New("coverage: bad season")
	// ErrMonthDay reports a malformed month-day.
	ErrMonthDay = errors.New("coverage: bad month-day")
	// ErrNoCropCycle reports that no crop cycle was found in a season.
	ErrNoCropCycle = errors.New("coverage: no crop cycle found")
	// ErrNoMainCrop reports cycles were found but none of them is a main
	// crop sown inside its plausible sowing window.
	ErrNoMainCrop = errors.New("coverage: no main-crop cycle in the sowing window")
)

// Ratio is a fraction between 0 and 1.
type Ratio float64

// MonthDay is a day of the year without the year, such as 07-01, the default
// start of an agricultural year.
type MonthDay struct {
	Month time.Month
	Day   int
}

// defaultAgriYearStart is 1 July, the boundary of the agricultural year used
// in the SINM example payload (dataInicial 2023-07-01, dataFinal 2026-06-30).
var defaultAgriYearStart = MonthDay{time.July, 1}

// ParseMonthDay parses "MM-DD" (such as "07-01"). 29 February is refused: a
// boundary must exist in every year.
func ParseMonthDay(s string) (MonthDay, error) {
	m, d, ok := strings.Cut(strings.TrimSpace(s), "-")
	mi, err1 := strconv.Atoi(m)
	di, err2 := strconv.Atoi(d)
	if !ok || err1 != nil || err2 != nil || len(m) != 2 || len(d) != 2 {
		return MonthDay{}, fmt.Errorf("%w: %q, want MM-DD", ErrMonthDay, s)
	}
	md := MonthDay{time.Month(mi), di}
	if err := md.valid(); err != nil {
		return MonthDay{}, fmt.Errorf("%w: %q: %v", ErrMonthDay, s, err)
	}
	return md, nil
}

func (md MonthDay) valid() error {
	if md.Month < 1 || md.Month > 12 {
		return fmt.Errorf("month %d out of 1..12", int(md.Month))
	}
	if md.Month == time.February && md.Day == 29 {
		return errors.New("29 February does not exist every year")
	}
	last := time.Date(2001, md.Month+1, 0, 0, 0, 0, 0, time.UTC).Day()
	if md.Day < 1 || md.Day > last {
		return fmt.Errorf("day %d out of 1..%d", md.Day, last)
	}
	return nil
}

// String returns "MM-DD".
func (md MonthDay) String() string { return fmt.Sprintf("%02d-%02d", int(md.Month), md.Day) }

// In returns the date of md in year y (UTC midnight).
func (md MonthDay) In(y int) time.Time {
	return time.Date(y, md.Month, md.Day, 0, 0, 0, 0, time.UTC)
}

func (md MonthDay) orDefault() MonthDay {
	if md.Month == 0 {
		return defaultAgriYearStart
	}
	return md
}

// Season is one agricultural year, such as 2023/2024: the days in
// [Start, End), both UTC midnights one calendar year apart.
type Season struct {
	Label      string    // "2023/2024"
	Start, End time.Time // End is excluded: the next season's Start
}

// Contains reports whether day t lies in [s.Start, s.End).
func (s Season) Contains(t time.Time) bool {
	d := zarc.Day(t)
	return !d.Before(s.Start) && d.Before(s.End)
}

// NewSeason returns the agricultural year that starts on yearStart of year y.
// A zero yearStart means defaultAgriYearStart.
func NewSeason(y int, yearStart MonthDay) Season {
	yearStart = yearStart.orDefault()
	return Season{
		Label: fmt.Sprintf("%d/%d", y, y+1),
		Start: yearStart.In(y),
		End:   yearStart.In(y + 1),
	}
}

// SeasonOf returns the agricultural year that holds day t.
func SeasonOf(t time.Time, yearStart MonthDay) Season {
	yearStart = yearStart.orDefault()
	d := zarc.Day(t)
	y := d.Year()
	if d.Before(yearStart.In(y)) {
		y--
	}
	return NewSeason(y, yearStart)
}

// ParseSeason parses an agricultural-year label in the grammar of
// zarc.ParseAgriYear ("2026/2027", "2026-2027" or "2026/27") into the season
// starting on yearStart of the first year; its Label is the canonical
// "2026/2027". A zero yearStart means defaultAgriYearStart. Errors wrap
// ErrSeason and zarc.ErrAgriYear.
func ParseSeason(label string, yearStart MonthDay) (Season, error) {
	yearStart = yearStart.orDefault()
	if err := yearStart.valid(); err != nil {
		return Season{}, fmt.Errorf("%w: year start %s: %v", ErrSeason, yearStart, err)
	}
	y, err := zarc.ParseAgriYear(label)
	if err != nil {
		return Season{}, fmt.Errorf("%w: %w", ErrSeason, err)
	}
	return NewSeason(int(y), yearStart), nil
}

// Assessed returns the three agricultural years before the contract year,
// oldest first, with the contract's year boundary: for 2026/2027 they are
// 2023/2024, 2024/2025 and 2025/2026 (Portaria 349/2026 item 6.7).
func (s Season) Assessed() []Season {
	md := MonthDay{s.Start.Month(), s.Start.Day()}
	y := s.Start.Year()
	return []Season{NewSeason(y-3, md), NewSeason(y-2, md), NewSeason(y-1, md)}
}
