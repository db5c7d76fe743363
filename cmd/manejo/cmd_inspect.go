package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"text/tabwriter"

	"github.com/manejo/manejo/export"
	"github.com/manejo/manejo/storage"
)

func init() {
	register(&command{name: "inspect", synopsis: "print a per-talhão summary (T, C, slope, levels, status) of a finished output", run: runInspect})
}

const inspectUsage = `inspect [--status ok|partial|failed] [--reasons=false] DIR

DIR is a 'manejo run' output folder (local or s3://bucket/prefix): inspect
reads indicators.parquet (one file, or the part files of the folder of that
name) and run.json when present, and prints one line per talhão.`

// splitPositional moves the first non-flag argument out of args so flags
// may come before or after it (manejo inspect DIR --status failed).
func splitPositional(args []string) (pos string, rest []string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			if i+1 < len(args) {
				return args[i+1], append(append([]string{}, args[:i]...), args[i+2:]...)
			}
			return "", args[:i]
		case strings.HasPrefix(a, "-"):
			if !strings.Contains(a, "=") && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") && flagTakesValue(a) {
				i++ // skip the flag's value
			}
		default:
			return a, append(append([]string{}, args[:i]...), args[i+1:]...)
		}
	}
	return "", args
}

// flagTakesValue lists the value flags of inspect and sinm validate.
func flagTakesValue(a string) bool {
	switch strings.TrimLeft(a, "-") {
	case "status":
		return true
	}
	return false
}

func runInspect(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	flags := newFlagSet("inspect", inspectUsage, stderr)
	status := flags.String("status", "", "show only talhões with this status (ok, partial, failed)")
	reasons := flags.Bool("reasons", true, "print the reasons of partial and failed talhões under the table")
	dir, rest := splitPositional(args)
	if err := parseFlags(flags, rest); err != nil {
		return err
	}
	if dir == "" {
		return usagef("missing DIR (a 'manejo run' output folder)")
	}
	switch *status {
	case "", export.StatusOK, export.StatusPartial, export.StatusFailed:
	default:
		return usagef("--status %q: want ok, partial or failed", *status)
	}
	fsys, err := openOutput(ctx, dir)
	if err != nil {
		return err
	}
	rows, err := readIndicators(fsys, dir)
	if err != nil {
		return err
	}
	if m, ok := readManifest(fsys); ok {
		fmt.Fprintf(stdout, "manejo %s run, finished %s", m.Version, m.FinishedAt.Format("2006-01-02 15:04 MST"))
		if m.Shard != nil {
			fmt.Fprintf(stdout, ", shard %d of %d", m.Shard.Index, m.Shard.Count)
		}
		fmt.Fprintf(stdout, ": %d failure(s) recorded\n\n", len(m.Failures))
		if err := printIndicators(stdout, rows, *status, *reasons); err != nil {
			return err
		}
		printEarlyFailures(stdout, rows, m.Failures, *status)
		return nil
	}
	return printIndicators(stdout, rows, *status, *reasons)
}

// printEarlyFailures lists the talhões run.json records as failed that have
// no row in indicators.parquet (unreadable, no grid, sampling failed), so
// inspect --status failed shows every failure.
func printEarlyFailures(w io.Writer, rows []export.IndicatorRow, failures []export.Failure, status string) {
	if status != "" && status != export.StatusFailed {
		return
	}
	has := make(map[string]bool, len(rows))
	for _, r := range rows {
		has[r.FieldID] = true
	}
	var lines []string
	for _, f := range failures {
		if f.Status == export.StatusFailed && !has[f.FieldID] {
			lines = append(lines, fmt.Sprintf("  %s (%s): %s", printable(f.FieldID), orDash(f.Stage), printable(f.Reason)))
		}
	}
	if len(lines) > 0 {
		fmt.Fprintf(w, "\nFailed before their indicators were computed (run.json):\n%s\n", strings.Join(lines, "\n"))
	}
}

// printIndicators writes the summary table of rows (sorted by field_id, as
// in the file).
func printIndicators(w io.Writer, rows []export.IndicatorRow, status string, reasons bool) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TALHÃO\tCROP\tAREA_HA\tCELLS\tSENSORS\tT_YEARS\tT_LEVEL\tC_PCT\tC_LEVEL\tSLOPE_PCT\tCONTOUR\tSTATUS")
	counts := map[string]int{}
	var notes []string
	for _, r := range rows {
		counts[r.Status]++
		if status != "" && r.Status != status {
			continue
		}
		t := "-"
		switch {
		case r.TYears != nil:
			t = fmt.Sprintf("%.1f", *r.TYears)
		case r.TCensored && r.TYearsMin != nil:
			t = fmt.Sprintf("≥%.1f", *r.TYearsMin)
		}
		contour := "-"
		if r.ContourRequired != nil {
			contour = map[bool]string{true: "required", false: "no"}[*r.ContourRequired]
		}
		fmt.Fprintf(tw, "%s\t%s\t%.1f\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n",
			printable(r.FieldID), r.Crop, r.AreaHa, r.NCells, orDash(strings.Join(r.Sensors, ",")),
			t, optInt(r.TLevel), optFloat(r.CPct, 0), optInt(r.CLevel), optFloat(r.SlopeMeanPct, 1), contour, r.Status)
		if reasons && r.Status != export.StatusOK {
			for _, why := range r.Reasons {
				notes = append(notes, printable(r.FieldID)+": "+printable(why))
			}
		}
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write table: %w", err)
	}
	fmt.Fprintf(w, "\n%d talhões: %d ok, %d partial, %d failed\n", len(rows),
		counts[export.StatusOK], counts[export.StatusPartial], counts[export.StatusFailed])
	if len(notes) > 0 {
		fmt.Fprintln(w, "\nReasons:")
		for _, n := range notes {
			fmt.Fprintln(w, "  "+n)
		}
	}
	return nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func optInt(v *int32) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprint(*v)
}

func optFloat(v *float64, prec int) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf("%.*f", prec, *v)
}

// openOutput opens a 'manejo run' output folder, local or s3://, for
// reading by range (nothing is downloaded whole). inspect and classify --rs
// share it.
func openOutput(ctx context.Context, dir string) (fs.FS, error) {
	fsys, err := storage.FS(ctx, dir)
	if err != nil {
		return nil, fmt.Errorf("open output folder %s: %w", dir, err)
	}
	return fsys, nil
}

// readIndicators reads indicators.parquet (or its parts) of an output folder.
func readIndicators(fsys fs.FS, dir string) ([]export.IndicatorRow, error) {
	rows, err := export.ReadDataset[export.IndicatorRow](fsys)
	if err != nil {
		return nil, fmt.Errorf("read indicators of %s: %w", dir, err)
	}
	return rows, nil
}

// readManifest reads run.json of an output folder; ok is false when it is
// absent or unreadable (inspect works without it).
func readManifest(fsys fs.FS) (export.Manifest, bool) {
	b, err := fs.ReadFile(fsys, "run.json")
	if err != nil {
		return export.Manifest{}, false
	}
	m, err := export.ReadManifest(bytes.NewReader(b))
	return m, err == nil
}
