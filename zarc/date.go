package zarc

import (
	"fmt"
	"time"
)

// Date is a calendar date as the number of days since 1970-01-01, the
// representation of the Parquet DATE logical type. (parquet-go v0.32.0 writes
// time.Time fields tagged `date` with wrong values through GenericWriter, so
// the rows carry days, not time.Time.)
type Date int32

// DateOf returns the calendar date of t in UTC.
func DateOf(t time.Time) Date {
	return Date(Day(t).Unix() / 86400)
}

// OptDate returns a pointer to DateOf(t), or nil when t is the zero time,
// for the nullable date columns.
func OptDate(t time.Time) *Date {
	if t.IsZero() {
		return nil
	}
	d := DateOf(t)
	return &d
}

// Time returns the date at UTC midnight.
func (d Date) Time() time.Time { return time.Unix(int64(d)*86400, 0).UTC() }

// String formats the date as YYYY-MM-DD, the SINM date format.
func (d Date) String() string { return d.Time().Format(time.DateOnly) }

// ParseDate parses a YYYY-MM-DD date.
func ParseDate(s string) (Date, error) {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return 0, fmt.Errorf("parse date %q: %w", s, err)
	}
	return DateOf(t), nil
}
