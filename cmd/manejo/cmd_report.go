package main

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
	"time"

	"github.com/manejo/manejo/report"
	"github.com/manejo/manejo/storage"
)

func init() {
	register(&command{name: "report", synopsis: "write a self-contained HTML report (maps, NDVI/NDTI plots) of a finished output", run: runReport})
}

func runReport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	flags := newFlagSet("report", "report --in DIR --out report.html", stderr)
	in := flags.String("in", "", "finished output folder of manejo run, local or s3:// (required)")
	out := flags.String("out", "report.html", "HTML file to write, local or s3://")
	title := flags.String("title", "manejo report", "page title")
	if err := parseFlags(flags, args); err != nil {
		return err
	}
	if *in == "" {
		return usagef("--in is required")
	}
	if err := writableLoc("--out", *out); err != nil {
		return err
	}
	if err := checkReportOut(*out); err != nil {
		return err
	}
	start := time.Now()
	fsys, err := storage.FS(ctx, *in)
	if err != nil {
		return fmt.Errorf("open %s: not an output folder: %w", *in, err)
	}
	st, err := writeReport(ctx, fsys, *out, report.Options{Title: *title, Generated: time.Now()})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: %d talhões, %d observations, %.1f MB, %s\n", *out, st.Talhoes, st.Observations, float64(st.Bytes)/1e6, time.Since(start).Round(time.Millisecond))
	return nil
}

// checkReportOut refuses an --out that is not an HTML file: every file a run
// writes (run.json, the shard manifests, the Parquet parts, the SINM
// payloads, the lock) is .json, .parquet or .lock, and the report must never
// replace one (issue 19: --out DIR/run.json overwrote the manifest).
func checkReportOut(out string) error {
	ext := strings.ToLower(path.Ext(strings.TrimRight(out, "/")))
	if ext != ".html" && ext != ".htm" {
		return usagef("--out %s: want an .html file (the report never replaces a file of the run: run.json, Parquet parts, SINM payloads)", out)
	}
	return nil
}

// writeReport draws the report of the output folder fsys into out (local or
// s3://), atomically: through a temporary file published whole.
func writeReport(ctx context.Context, fsys fs.FS, out string, o report.Options) (report.Stats, error) {
	f, err := storage.CreateTemp(out)
	if err != nil {
		return report.Stats{}, err
	}
	st, err := report.Write(ctx, f, fsys, o)
	if cerr := f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("write %s: %w", out, cerr)
	}
	if err != nil {
		os.Remove(f.Name())
		return report.Stats{}, err
	}
	return st, storage.PutFile(ctx, out, f.Name())
}
