package pipeline

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/manejo/manejo/internal/testkit"
	"github.com/manejo/manejo/stacapi/stactest"
)

// TestLoopbackAPIMirror (issue 28 point 2): a STAC API on loopback over
// plain http (a local mirror, proxy or test server, as docs/stac-api.md
// accepts) whose items name their assets relative to the API root, and
// which serves those files. `manejo run --catalog http://127.0.0.1:PORT/api`
// with no --allow-href-prefix used to fetch every page and stop with "the
// STAC API search is incomplete: … scheme "http" is not file, s3 or
// https" (exit 1, which deploy.md tells engines to retry). It now reads
// the scenes from the mirror and writes the datasets and payloads of the
// run on the static catalog byte for byte; the frozen catalog names the
// resolved hrefs. The same API whose items name local files is refused
// before reading with the flag to add (point 1).
func TestLoopbackAPIMirror(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run skipped in -short mode")
	}
	t.Parallel()
	dir := archive(t)
	ref, _ := reference(t)
	srv := stactest.New(t, testkit.Features(t, filepath.Join(dir, "catalog.json"))) // hrefs as synth writes them: relative
	srv.Files = dir
	out := t.TempDir()
	cfg := baseConfig(t, dir, out)
	cfg.Catalog, cfg.Collections = srv.URL, []string{"sentinel-2-l2a"}
	if _, err := Run(context.Background(), cfg); err != nil {
		t.Fatalf("run against the loopback mirror: %v", err)
	}
	sameTree(t, "run against the loopback mirror", testkit.HashTree(t, ref, "run.json", "run/"), testkit.HashTree(t, out, "run.json", "run/", "catalog/"))
	frozen, err := os.ReadFile(filepath.Join(out, "catalog", "items.json"))
	if err != nil {
		t.Fatal(err)
	}
	if want := srv.URL + "/sentinel-2-l2a/"; !strings.Contains(string(frozen), want) {
		t.Errorf("frozen catalog: want resolved hrefs %s…", want)
	}

	// The same API naming local files: refused before reading, naming the flag.
	srv = stactest.New(t, archiveItems(t, dir))
	cfg = baseConfig(t, dir, t.TempDir())
	cfg.Catalog, cfg.Collections = srv.URL, []string{"sentinel-2-l2a"}
	_, err = Run(context.Background(), cfg)
	root := strings.TrimSuffix(srv.URL, "/api") + "/"
	if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "outside the allowed "+root) || !strings.Contains(err.Error(), "add --allow-href-prefix ") {
		t.Errorf("API naming local files: %v; want a configuration error naming the allowed %s and the flag", err, root)
	}
}
