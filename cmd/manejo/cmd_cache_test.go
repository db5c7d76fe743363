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
	bad := "talhao=00112233445566778899aabbccddeeff.parquet" // named as a partition, not one
	if err := os.WriteFile(filepath.Join(dir, "observations-v1", bad), []byte("PAR1"), 0o644); err != nil {
		t.Fatal(err)
	}
	notes := filepath.Join(dir, "observations-v1", "notes.txt")
	if err := os.WriteFile(notes, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (string, int) {
		var out, errb bytes.Buffer
		code := runMain(ctx, args, &out, &errb)
		return out.String() + errb.String(), code
	}
	out, code := run("cache", "inspect", "--cache", dir)
	if code != 0 || !strings.Contains(out, "NEW: 1 scenes 2026-01-05..2026-01-05, 1 observations, version test") ||
		!strings.Contains(out, bad+": cache: corrupt") || !strings.Contains(out, "3 partitions (1 not usable)") ||
		!strings.Contains(out, notes+": not a file manejo writes: left alone") || !strings.Contains(out, "1 other file(s) manejo did not write, left alone") {
		t.Errorf("inspect (exit %d):\n%s", code, out)
	}
	out, code = run("cache", "prune", "--cache", dir, "--older-than", "90d", "--dry-run")
	if code != 0 || !strings.Contains(out, "would remove talhão OLD (talhao=") || !strings.Contains(out, "more than 90 days ago") ||
		!strings.Contains(out, "would remove "+filepath.Join(dir, "observations-v1", bad)+": cache: corrupt") ||
		!strings.Contains(out, "left alone "+notes) || !strings.Contains(out, "would remove 2 partitions; 1 other file(s) manejo did not write left alone") {
		t.Errorf("prune --dry-run (exit %d):\n%s", code, out)
	}
	out, code = run("cache", "prune", "--cache", dir, "--older-than", "90d")
	if code != 0 || !strings.Contains(out, "removed 2 partitions") {
		t.Errorf("prune (exit %d):\n%s", code, out)
	}
	if out, _ = run("cache", "inspect", "--cache", dir); !strings.Contains(out, "1 partitions (0 not usable)") || !strings.Contains(out, "NEW:") {
		t.Errorf("after prune:\n%s", out)
	}
	if b, err := os.ReadFile(notes); err != nil || string(b) != "mine" {
		t.Errorf("prune touched a file manejo did not write: %q, %v", b, err)
	}
	// A portfolio in which no feature has the id field is a usage error
	// that removes nothing (D13); so is a --fields file that is not there.
	out, code = run("cache", "prune", "--cache", dir, "--fields", demoTalhoes, "--id-field", "nosuch")
	if code != exitUsage || !strings.Contains(out, "--fields "+demoTalhoes+": no feature has an id in property \"nosuch\"") {
		t.Errorf("--id-field nosuch: exit %d\n%s", code, out)
	}
	out, code = run("cache", "prune", "--cache", dir, "--fields", filepath.Join(dir, "none.geojson"))
	if code != exitUsage || !strings.Contains(out, "no such file") {
		t.Errorf("missing --fields: exit %d\n%s", code, out)
	}
	if out, _ = run("cache", "inspect", "--cache", dir); !strings.Contains(out, "1 partitions (0 not usable)") {
		t.Errorf("a refused prune removed something:\n%s", out)
	}
	if _, code = run("cache", "prune", "--cache", dir, "--older-than", "soon"); code != exitUsage {
		t.Errorf("--older-than soon: exit %d, want %d", code, exitUsage)
	}
}
