package zarc

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrAgriYear reports an agricultural year that does not follow the grammar
// of ParseAgriYear.
var ErrAgriYear = errors.New("agricultural year must be YYYY/YYYY with consecutive years, such as 2026/2027")

// AgriYear is an agricultural year (ano agrícola) named by the calendar year
// it starts in: AgriYear(2024) is "2024/2025". When in the year it starts is
// a parameter of the run (coverage.MonthDay), not part of the name.
type AgriYear int

// ParseAgriYear reads an agricultural year. The grammar, after trimming
// spaces, is
//
//	YYYY/YYYY   canonical, as String writes it: "2024/2025"
//	YYYY-YYYY   "2024-2025"
//	YYYY/YY     "2024/25" (the second year's last two digits)
//
// where the second year must be the first plus one. Errors wrap ErrAgriYear
// and say what was wrong.
func ParseAgriYear(s string) (AgriYear, error) {
	s = strings.TrimSpace(s)
	a, b, ok := strings.Cut(s, "/")
	if !ok {
		a, b, ok = strings.Cut(s, "-")
	}
	if !ok || len(a) != 4 || (len(b) != 4 && len(b) != 2) {
		return 0, fmt.Errorf("parse agricultural year %q: %w", s, ErrAgriYear)
	}
	y1, err1 := strconv.Atoi(a)
	y2, err2 := strconv.Atoi(b)
	if err1 != nil || err2 != nil || y1 < 1000 || y1 > 9998 {
		return 0, fmt.Errorf("parse agricultural year %q: %w", s, ErrAgriYear)
	}
	if len(b) == 2 {
		y2 += y1 / 100 * 100
		if y2 < y1 {
			y2 += 100
		}
	}
	if y2 != y1+1 {
		return 0, fmt.Errorf("parse agricultural year %q: second year must be %d: %w", s, y1+1, ErrAgriYear)
	}
	return AgriYear(y1), nil
}

// String returns the year as "2024/2025".
func (y AgriYear) String() string { return fmt.Sprintf("%04d/%04d", int(y), int(y)+1) }
