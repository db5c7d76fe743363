package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/manejo/manejo/cache"
	"github.com/manejo/manejo/series"
)

// TestCacheCommands: inspect lists a partition with its talhão, scenes and
// dates and flags a broken file; prune --dry-run lists, prune removes what
// is older than --older-than and the broken file.
func TestCacheCommands(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	d := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	for id, at := range map[string]time.Time{"NEW": time.Now(), "OLD": time.Now().AddDate(0, 0, -100)} {
		e := &cache.Entry{Meta: cache.Meta{FieldID: id, Version: "test", WrittenAt: at, Items: []cache.Item{{ID: "S2A_1", Date: "2026-01-05"}}},
			Obs: []series.Obs{{FieldID: id, CellID: "c0", Date: d, Collection: "sentinel-2-l2a", ItemID: "S2A_1", NDVI: 0.5}}}
		if _, err := cache.Open(dir).Store(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "observations-v1", "talhao=bad.parquet"), []byte("PAR1"), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (string, int) {
		var out, errb bytes.Buffer
		code := runMain(ctx, args, &out, &errb)
		return out.String() + errb.String(), code
	}
	out, code := run("cache", "inspect", "--cache", dir)
	if code != 0 || !strings.Contains(out, "NEW: 1 scenes 2026-01-05..2026-01-05, 1 observations, version test") ||
		!strings.Contains(out, "talhao=bad.parquet: cache: corrupt") || !strings.Contains(out, "3 partitions (1 not usable)") {
		t.Errorf("inspect (exit %d):\n%s", code, out)
	}
	out, code = run("cache", "prune", "--cache", dir, "--older-than", "90d", "--dry-run")
	if code != 0 || strings.Count(out, "would remove "+dir) != 2 || !strings.Contains(out, "would remove 2 partitions") {
		t.Errorf("prune --dry-run (exit %d):\n%s", code, out)
	}
	out, code = run("cache", "prune", "--cache", dir, "--older-than", "90d")
	if code != 0 || !strings.Contains(out, "removed 2 partitions") {
		t.Errorf("prune (exit %d):\n%s", code, out)
	}
	if out, _ = run("cache", "inspect", "--cache", dir); !strings.Contains(out, "1 partitions (0 not usable)") || !strings.Contains(out, "NEW:") {
		t.Errorf("after prune:\n%s", out)
	}
	if _, code = run("cache", "prune", "--cache", dir, "--older-than", "soon"); code != exitUsage {
		t.Errorf("--older-than soon: exit %d, want %d", code, exitUsage)
	}
}
