package testkit

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

// ProcStatusKB is a field of this process's /proc/self/status in KiB, as
// "VmRSS" (resident now) or "VmHWM" (peak resident); it skips the test
// where the file or the field is missing (not Linux).
func ProcStatusKB(tb testing.TB, field string) int64 {
	tb.Helper()
	raw, err := os.ReadFile("/proc/self/status")
	if err != nil {
		tb.Skipf("no /proc/self/status: %v", err)
	}
	for _, l := range strings.Split(string(raw), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == field+":" {
			n, _ := strconv.ParseInt(f[1], 10, 64)
			return n
		}
	}
	tb.Skipf("no %s in /proc/self/status", field)
	return 0
}
