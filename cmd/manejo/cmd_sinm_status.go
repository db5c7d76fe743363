package main

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"time"

	"github.com/manejo/manejo/export"
	"github.com/manejo/manejo/sinm/client"
	"github.com/manejo/manejo/storage"
)

const sinmStatusUsage = "sinm status --in DIR (--env hml|prd | --api-url U --token-url T) [--keys keys.csv] [--preview DIR]"

func runSINMStatus(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("sinm status", sinmStatusUsage, stderr)
	var f sinmFlags
	f.register(fs)
	previewDir := fs.String("preview", "", "folder holding classification.parquet of 'manejo classify --out' (default: --in)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := f.check(); err != nil {
		return err
	}
	c, err := f.newClient(stderr)
	if err != nil {
		return err
	}
	lp, err := f.ledgerPath()
	if err != nil {
		return err
	}
	led, err := client.ReadLedger(lp)
	if err != nil {
		return err
	}
	out, err := openOutput(ctx, f.in)
	if err != nil {
		return err
	}
	keys, err := f.loadKeys(ctx, out, stderr)
	if err != nil {
		return err
	}
	preview, err := readPreview(ctx, cmp.Or(*previewDir, f.in), out, stderr)
	if err != nil {
		return err
	}
	rows, err := client.Status(ctx, c, led, keys, preview)
	if err != nil {
		return err
	}
	if err := writeDataset(ctx, f.in, export.SINMResults, rows); err != nil {
		return err
	}
	return statusReport(stdout, rows)
}

// readPreview reads classification.parquet of dir; none is a note, not an
// error (nothing is compared). A preview older than the run of the output
// folder out is compared with a warning (issue 28 point 4).
func readPreview(ctx context.Context, dir string, out fs.FS, stderr io.Writer) ([]export.ClassificationRow, error) {
	fsys, err := openOutput(ctx, dir)
	if err != nil {
		return nil, err
	}
	rows, err := export.ReadDataset[export.ClassificationRow](fsys)
	if errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(stderr, "manejo sinm: no classification.parquet in %s: SINM's levels are not compared with a preview\n", dir)
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the preview: %w", err)
	}
	if msg := stalePreview(fsys, out); msg != "" {
		fmt.Fprintf(stderr, "manejo sinm: warning: %s in %s %s: it previews an earlier run; run 'manejo classify --rs ... --out %s' again (compared anyway)\n",
			export.Classification.File(), dir, msg, dir)
	}
	return rows, nil
}

// stalePreview says how the preview (classification.parquet of preview)
// is older than the last run of the output folder out (run.json, or the
// shards' run/part-*.json, finished_at), "" when it is not.
func stalePreview(preview, out fs.FS) string {
	st, err := fs.Stat(preview, export.Classification.File())
	if err != nil {
		return ""
	}
	var last time.Time
	for _, m := range readManifests(out) {
		if m.FinishedAt.After(last) {
			last = m.FinishedAt
		}
	}
	if last.IsZero() || !st.ModTime().Before(last) {
		return ""
	}
	const f = "2006-01-02 15:04:05 MST"
	return fmt.Sprintf("(written %s) is older than the run (finished %s)", st.ModTime().UTC().Format(f), last.UTC().Format(f))
}

// writeDataset writes the rows of ds as one Parquet file into the output
// folder.
func writeDataset[T export.Row](ctx context.Context, dir string, ds export.Dataset, rows []T) error {
	var buf bytes.Buffer
	if err := export.Write(&buf, rows, export.Options{Version: version}); err != nil {
		return err
	}
	loc := storage.Join(dir, ds.File())
	if err := storage.WriteFile(ctx, loc, buf.Bytes()); err != nil {
		return fmt.Errorf("write %s: %w", loc, err)
	}
	return nil
}

// statusReport prints one line per talhão and the counts; errors make the
// exit status partial, pending and differences do not.
func statusReport(w io.Writer, rows []export.SINMResultRow) error {
	counts := map[string]int{}
	differ := 0
	for _, r := range rows {
		counts[r.Status]++
		line := fmt.Sprintf("%s key %s: %s", r.FieldID, r.Key, r.Status)
		switch {
		case r.Status == client.StatusError:
			line += ": " + r.Error
		case r.Status == client.StatusComplete && r.Level != nil:
			line += fmt.Sprintf(" NM%d", *r.Level)
		}
		if r.Status == client.StatusComplete && r.PreviewLevel != nil && len(r.Differences) == 0 {
			line += ", as the preview"
		}
		fmt.Fprintln(w, line)
		if len(r.Differences) > 0 {
			differ++
		}
		for _, d := range r.Differences {
			fmt.Fprintf(w, "  %s differs: %s\n", r.FieldID, d)
		}
	}
	fmt.Fprintf(w, "%d delivered talhão(ões): %d complete (%d differ from the preview), %d pending, %d error(s); wrote %s\n",
		len(rows), counts[client.StatusComplete], differ, counts[client.StatusPending], counts[client.StatusError], export.SINMResults.File())
	if n := counts[client.StatusError]; n > 0 {
		return partialError(n, len(rows))
	}
	return nil
}
