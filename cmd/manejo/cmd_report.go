package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/manejo/manejo/report"
	"github.com/manejo/manejo/storage"
)

func init() {
	register(&command{name: "report", synopsis: "write a self-contained HTML report (maps, NDVI/NDTI plots) of a finished output", run: runReport})
}

func runReport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("report", "report --in DIR --out report.html", stderr)
	in := fs.String("in", "", "finished output folder of manejo run, local or s3:// (required)")
	out := fs.String("out", "report.html", "HTML file to write, local or s3://")
	title := fs.String("title", "manejo report", "page title")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *in == "" {
		return usagef("--in is required")
	}
	start := time.Now()
	dir := *in
	if storage.KindOf(*in) != storage.Local {
		tmp, err := os.MkdirTemp("", "manejo-report-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		if dir, err = storage.Download(ctx, *in, tmp); err != nil {
			return fmt.Errorf("download %s: %w", *in, err)
		}
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return fmt.Errorf("open %s: not an output folder", *in)
	}
	local := *out
	if storage.KindOf(*out) != storage.Local {
		f, err := os.CreateTemp("", "manejo-report-*.html")
		if err != nil {
			return err
		}
		f.Close()
		local = f.Name()
		defer os.Remove(local)
	}
	f, err := os.Create(local)
	if err != nil {
		return fmt.Errorf("create %s: %w", local, err)
	}
	st, err := report.Write(ctx, f, os.DirFS(dir), report.Options{Title: *title, Generated: time.Now()})
	if cerr := f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("close %s: %w", local, cerr)
	}
	if err != nil {
		return err
	}
	if local != *out {
		b, err := os.ReadFile(local)
		if err != nil {
			return err
		}
		if err := storage.WriteFile(ctx, *out, b); err != nil {
			return err
		}
	}
	fmt.Fprintf(stdout, "%s: %d talhões, %d observations, %.1f MB, %s\n", *out, st.Talhoes, st.Observations, float64(st.Bytes)/1e6, time.Since(start).Round(time.Millisecond))
	return nil
}
