package pipeline

import (
	"fmt"
	"testing"
	"time"
)

func TestShardPartition(t *testing.T) {
	const n = 7
	counts := make([]int, n)
	for k := 0; k < 7000; k++ {
		id := fmt.Sprintf("MT-%05d", k)
		owners := 0
		for i := 0; i < n; i++ {
			if (Shard{i, n}).Owns(id) {
				owners++
				counts[i]++
			}
		}
		if owners != 1 {
			t.Fatalf("talhão %s owned by %d shards, want exactly 1", id, owners)
		}
	}
	for i, c := range counts {
		if c < 800 || c > 1200 {
			t.Errorf("shard %d/%d holds %d of 7000 talhões, want about 1000", i, n, c)
		}
	}
	// Stable across runs and machines: pin one assignment.
	if !(Shard{3, 16}).Owns("SYN-001") && !(Shard{0, 1}).Owns("SYN-001") {
		t.Fatal("unsharded run must own everything")
	}
}

func TestShardFromEnv(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	for _, tc := range []struct {
		name    string
		flag    string
		shards  int
		env     map[string]string
		want    Shard
		wantErr bool
	}{
		{"none", "", 0, nil, All, false},
		{"flag", "2/5", 0, nil, Shard{2, 5}, false},
		{"flag wins over env", "1/2", 4, map[string]string{"AWS_BATCH_JOB_ARRAY_INDEX": "3"}, Shard{1, 2}, false},
		{"aws batch", "", 4, map[string]string{"AWS_BATCH_JOB_ARRAY_INDEX": "3"}, Shard{3, 4}, false},
		{"kubernetes indexed job", "", 8, map[string]string{"JOB_COMPLETION_INDEX": "0"}, Shard{0, 8}, false},
		{"env without count", "", 0, map[string]string{"JOB_COMPLETION_INDEX": "0"}, Shard{}, true},
		{"index out of range", "", 2, map[string]string{"AWS_BATCH_JOB_ARRAY_INDEX": "2"}, Shard{}, true},
		{"bad flag", "5/5", 0, nil, Shard{}, true},
		{"shards without index", "", 3, nil, Shard{}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _, err := ShardFromEnv(tc.flag, tc.shards, env(tc.env))
			if (err != nil) != tc.wantErr || (err == nil && got != tc.want) {
				t.Fatalf("ShardFromEnv(%q, %d) = %v, %v; want %v, err=%v", tc.flag, tc.shards, got, err, tc.want, tc.wantErr)
			}
		})
	}
}

func TestShardPart(t *testing.T) {
	for _, tc := range []struct {
		s    Shard
		want string
	}{{All, "part-00000-of-00001"}, {Shard{}, "part-00000-of-00001"}, {Shard{3, 16}, "part-00003-of-00016"}} {
		if got := tc.s.Part(); got != tc.want {
			t.Errorf("%v.Part() = %q, want %q", tc.s, got, tc.want)
		}
	}
	if got := manifestName(Shard{3, 16}); got != "run/part-00003-of-00016.json" {
		t.Errorf("manifestName = %q", got)
	}
}

// TestParseAsOf: a date, an RFC 3339 timestamp (its UTC date, as
// EventBridge Scheduler's <aws.scheduler.scheduled-time> gives it) and
// "today" (the UTC date of now) are as-of dates; anything else is refused.
func TestParseAsOf(t *testing.T) {
	now := time.Date(2026, 9, 7, 23, 30, 0, 0, time.FixedZone("BRT", -3*3600)) // 2026-09-08 02:30 UTC
	for _, c := range []struct{ in, want string }{
		{"2026-08-01", "2026-08-01"},
		{"2026-09-07T09:00:00Z", "2026-09-07"},
		{"2026-09-07T22:00:00-03:00", "2026-09-08"},
		{"today", "2026-09-08"},
		{" Today ", "2026-09-08"},
		{"yesterday", ""},
		{"2026-13-01", ""},
		{"", ""},
	} {
		got, err := ParseAsOf(c.in, now)
		if c.want == "" {
			if err == nil {
				t.Errorf("ParseAsOf(%q) = %s, want an error", c.in, got)
			}
			continue
		}
		if err != nil || got.Format(time.DateOnly) != c.want || got.Location() != time.UTC {
			t.Errorf("ParseAsOf(%q) = %s, %v; want %s UTC", c.in, got, err, c.want)
		}
	}
}
