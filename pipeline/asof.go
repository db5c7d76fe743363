package pipeline

import (
	"fmt"
	"strings"
	"time"
)

// ParseAsOf reads the reference date of a run (--as-of): a date
// (YYYY-MM-DD); an RFC 3339 timestamp, whose UTC date is taken (what an
// EventBridge Scheduler schedule passes as <aws.scheduler.scheduled-time>);
// or "today", the UTC date of now (a Kubernetes CronJob's weekly run). The
// run records the resulting date, so a computed as-of is reproducible from
// run.json.
func ParseAsOf(v string, now time.Time) (time.Time, error) {
	v = strings.TrimSpace(v)
	if strings.EqualFold(v, "today") {
		y, m, d := now.UTC().Date()
		return time.Date(y, m, d, 0, 0, 0, 0, time.UTC), nil
	}
	if t, err := time.Parse(time.DateOnly, v); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		y, m, d := t.UTC().Date()
		return time.Date(y, m, d, 0, 0, 0, 0, time.UTC), nil
	}
	return time.Time{}, fmt.Errorf("%q: want YYYY-MM-DD, an RFC 3339 timestamp or today", v)
}
