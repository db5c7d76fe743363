package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/manejo/manejo/export"
	"github.com/manejo/manejo/storage"
)

// A run owns its output folder (issue 19 defects 3 and 7):
//
//   - it refuses a non-empty folder that is not a manejo output (no run.json,
//     run/, run.lock, _staging/ or _exchange/ in it), so a user's files are never
//     overwritten or cleaned;
//   - it holds a lease (run.lock, or run/part-i-of-n.lock per shard) naming
//     its run id while it runs, renewed every few seconds (lease.go); a
//     second run into the same folder (shard) waits, and is refused while
//     the holder renews it;
//   - it cleans only what manejo wrote: its staging, the temporary files of
//     the names it publishes, and the outputs a previous run listed in its
//     manifest that this run does not publish again.

// ErrConfig marks errors of the configuration that a run finds before it
// reads any imagery (an output folder that is not manejo's, a DEM too
// coarse or without CRS, a collection without a satellite code). The CLI
// reports them as usage errors (exit 2).
var ErrConfig = errors.New("configuration error")

// checkFolder refuses a non-empty output folder that is not a manejo
// output.
func checkFolder(ctx context.Context, out string) error {
	fsys, err := storage.FS(ctx, out)
	if err != nil {
		return nil // absent: the run creates it
	}
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil || len(entries) == 0 {
		return nil
	}
	var names []string
	for _, e := range entries {
		switch e.Name() {
		case "run.json", "run", "run.lock", "_staging", "_exchange":
			return nil
		}
		names = append(names, e.Name())
	}
	return fmt.Errorf("%w: --out %s is not empty and is not a manejo output (no run.json, run/, run.lock, _staging/ or _exchange/; it holds %s): choose an empty or new folder, manejo does not overwrite files it did not write",
		ErrConfig, out, strings.Join(names[:min(len(names), 3)], ", "))
}

// validOutputPath reports whether p, from a manifest's outputs[], names a
// file inside the output folder that a run may remove.
func validOutputPath(p string) bool {
	return p != "" && !strings.HasPrefix(p, "/") && path.Clean(p) == p && p != "." &&
		!strings.HasPrefix(p, "../") && p != ".." && !strings.ContainsRune(p, '\\') && p != "run.json"
}

// outputsUnion returns a then the entries of b whose path a lacks.
func outputsUnion(a, b []export.Output) []export.Output {
	seen := make(map[string]bool, len(a))
	out := append([]export.Output{}, a...)
	for _, o := range a {
		seen[o.Path] = true
	}
	for _, o := range b {
		if !seen[o.Path] && validOutputPath(o.Path) {
			out = append(out, o)
		}
	}
	return out
}

// removeStale removes the outputs a previous run listed that this run does
// not publish again: the payload of a talhão that now fails or left the
// input, a part file of another layout. The payload of a talhão another
// shard now owns (others) is that shard's to write and is kept: shards
// run at once, and the new owner may have published it already.
func removeStale(ctx context.Context, out string, prev, now []export.Output, others map[string]bool) []string {
	keep := make(map[string]bool, len(now))
	for _, o := range now {
		keep[o.Path] = true
	}
	var removed []string
	for _, o := range prev {
		if keep[o.Path] || !validOutputPath(o.Path) || o.FieldID != "" && others[o.FieldID] {
			continue
		}
		if err := storage.Remove(ctx, storage.Join(out, o.Path)); err == nil {
			removed = append(removed, o.Path)
		}
	}
	return removed
}
