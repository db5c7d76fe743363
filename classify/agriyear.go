package classify

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrAgriYear reports an agricultural year that is not written "YYYY/YYYY"
// with consecutive years.
var ErrAgriYear = errors.New("classify: agricultural year must be YYYY/YYYY with consecutive years")

// AgriYear is an agricultural year (ano agrícola) named by the calendar year
// it starts in: AgriYear(2024) is "2024/2025".
type AgriYear int

// ParseAgriYear reads "2024/2025" (also "2024-2025" and "2024/25"). The second
// year must follow the first.
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
		return 0, fmt.Errorf("parse agricultural year %q: %w", s, ErrAgriYear)
	}
	return AgriYear(y1), nil
}

// String returns the year as "2024/2025".
func (y AgriYear) String() string { return fmt.Sprintf("%04d/%04d", int(y), int(y)+1) }
