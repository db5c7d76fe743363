package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestHrefRuleRefusesAll (issue 28 point 1): a catalog copied away from its
// archive, run without --allow-href-prefix, would have every scene skipped
// as bad-href and every talhão partial with "no clear observation"; the run
// stops before reading with a configuration error (exit 2) naming the
// counts, the folder the hrefs point to, the allowed place and the flag to
// add. With one scene outside the rule the run goes on and that scene is
// skipped as bad-href, as before.
func TestHrefRuleRefusesAll(t *testing.T) {
	t.Parallel()
	dir := archive(t)
	items := archiveItems(t, dir) // hrefs made absolute, into dir
	away := filepath.Join(t.TempDir(), "cat")
	if err := os.MkdirAll(away, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(items []json.RawMessage) string {
		b, _ := json.Marshal(map[string]any{"type": "FeatureCollection", "features": items})
		p := filepath.Join(away, "catalog.json")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cat := write(items)
	out := t.TempDir()
	cfg := baseConfig(t, dir, out)
	cfg.Catalog = cat
	_, err := Run(context.Background(), cfg)
	if !errors.Is(err, ErrConfig) {
		t.Fatalf("Run: %v; want a configuration error", err)
	}
	real, _ := filepath.EvalSymlinks(dir)
	realAway, _ := filepath.EvalSymlinks(away)
	// Every item of the synthetic archive holds the five assets the
	// Sentinel-2 profile reads (scl, red, nir, swir16, swir22).
	n := strconv.Itoa(5 * len(items))
	msg := err.Error()
	for _, want := range []string{
		": " + n + " of " + n + " assets are under " + real + "/", "outside the allowed " + realAway + "/",
		"no --allow-href-prefix was given", "add --allow-href-prefix " + real + "/",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "run.json")); err == nil {
		t.Error("run.json written: the run read on")
	}

	// One scene outside: not a configuration, a bad item; skipped.
	in := append([]json.RawMessage(nil), items...)
	cfg = baseConfig(t, dir, t.TempDir())
	cfg.AllowHrefPrefix = []string{dir}
	var f map[string]any
	_ = json.Unmarshal(in[0], &f)
	for _, a := range f["assets"].(map[string]any) {
		a := a.(map[string]any)
		a["href"] = filepath.Join(away, filepath.Base(a["href"].(string)))
	}
	in[0], _ = json.Marshal(f)
	cfg.Catalog = write(in)
	if _, err := Run(context.Background(), cfg); err != nil {
		t.Fatalf("one scene outside the rule: %v", err)
	}
	m := readJSON(t, filepath.Join(cfg.Out, "run.json"))
	if sk, _ := m["skipped_scenes"].(map[string]any); sk["bad-href"] == nil {
		t.Errorf("skipped scenes %v: want the scene outside the rule skipped as bad-href", sk)
	}
}
