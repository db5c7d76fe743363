package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"regexp"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/manejo/manejo/export"
	"github.com/manejo/manejo/storage"
)

func init() {
	register(&command{name: "inspect", synopsis: "print a per-talhão summary (T, C, slope, levels, status) of a finished output", run: runInspect})
}

const inspectUsage = `inspect [--status ok|partial|failed|incomplete] [--reasons=false] DIR

DIR is a 'manejo run' output folder (local or s3://bucket/prefix): inspect
reads indicators.parquet (one file, or the part files of the folder of that
name) and run.json (or the shards' run/part-*.json) when present, and prints
one line per talhão. Statuses: ok; partial (an indicator missing, with its
reason); failed; incomplete (scenes still failing transiently: no row, run
again). A C level followed by ? is uncertain: its 90 % interval crosses a
Tabela 1 limit.`

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
	status := flags.String("status", "", "show only talhões with this status (ok, partial, failed, incomplete)")
	reasons := flags.Bool("reasons", true, "print the reasons of the talhões that are not ok under the table")
	dir, rest := splitPositional(args)
	if err := parseFlags(flags, rest); err != nil {
		return err
	}
	if dir == "" {
		return usagef("missing DIR (a 'manejo run' output folder)")
	}
	if *status != "" && !slices.Contains(statuses, *status) {
		return usagef("--status %q: want one of %s", *status, strings.Join(statuses, ", "))
	}
	fsys, err := openOutput(ctx, dir)
	if err != nil {
		return err
	}
	rows, err := readIndicators(fsys, dir)
	if err != nil {
		return err
	}
	ms := readManifests(fsys)
	for _, m := range ms {
		fmt.Fprintf(stdout, "manejo %s run, finished %s", m.Version, m.FinishedAt.Format("2006-01-02 15:04 MST"))
		if m.Shard != nil {
			fmt.Fprintf(stdout, ", shard %d of %d", m.Shard.Index, m.Shard.Count)
		}
		fmt.Fprintln(stdout)
	}
	if len(ms) > 0 {
		fmt.Fprintln(stdout)
	}
	return printIndicators(stdout, rows, rowless(rows, ms), *status, *reasons)
}

// statuses are the statuses of a talhão, in the order every count names
// them (export.StatusOK...).
var statuses = []string{export.StatusOK, export.StatusPartial, export.StatusFailed, export.StatusIncomplete}

// statusCounts writes counts of talhões by status, every status named, as
// the run's summary line does: "6 talhões: 0 ok, 6 partial, 0 failed, 0
// incomplete".
func statusCounts(counts map[string]int) string {
	total := 0
	parts := make([]string, len(statuses))
	for i, s := range statuses {
		total += counts[s]
		parts[i] = fmt.Sprintf("%d %s", counts[s], s)
	}
	return fmt.Sprintf("%d talhões: %s", total, strings.Join(parts, ", "))
}

// rowless are the talhões run.json records without an indicator row: failed
// before their indicators were computed (unreadable, no grid, sampling
// failed), or incomplete.
func rowless(rows []export.IndicatorRow, ms []export.Manifest) []export.Failure {
	has := make(map[string]bool, len(rows))
	for _, r := range rows {
		has[r.FieldID] = true
	}
	var out []export.Failure
	for _, m := range ms {
		for _, f := range m.Failures {
			if (f.Status == export.StatusFailed || f.Status == export.StatusIncomplete) && !has[f.FieldID] {
				out = append(out, f)
			}
		}
	}
	return out
}

// printIndicators writes the summary table of rows (sorted by field_id, as
// in the file), the talhões without a row, the counts by status and the
// reasons of those not ok; status, when set, keeps only that status.
func printIndicators(w io.Writer, rows []export.IndicatorRow, early []export.Failure, status string, reasons bool) error {
	counts := map[string]int{}
	var shown []export.IndicatorRow
	for _, r := range rows {
		counts[r.Status]++
		if status == "" || r.Status == status {
			shown = append(shown, r)
		}
	}
	for _, f := range early {
		counts[f.Status]++
	}
	if len(shown) > 0 {
		if err := printTable(w, shown); err != nil {
			return err
		}
	}
	printEarlyFailures(w, early, status)
	if status != "" && counts[status] == 0 {
		fmt.Fprintf(w, "no talhão is %s\n", status)
	}
	fmt.Fprintf(w, "\n%s\n", statusCounts(counts))
	printUncertain(w, shown)
	if reasons {
		printReasons(w, shown)
	}
	return nil
}

// printTable writes one line per talhão; a C level whose 90 % interval
// crosses a Tabela 1 limit is followed by "?".
func printTable(w io.Writer, rows []export.IndicatorRow) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TALHÃO\tCROP\tAREA_HA\tCELLS\tSENSORS\tT_YEARS\tT_LEVEL\tC_PCT\tC_LEVEL\tSLOPE_PCT\tCONTOUR\tSTATUS")
	for _, r := range rows {
		t := "-"
		switch {
		case r.TYears != nil:
			t = fmt.Sprintf("%.1f", *r.TYears)
		case r.TCensored && r.TYearsMin != nil:
			t = fmt.Sprintf("≥%.1f", *r.TYearsMin)
		}
		contour := "-"
		if r.ContourRequired != nil {
			contour = "no"
			if *r.ContourRequired {
				contour = "required"
			}
		}
		cl := optInt(r.CLevel)
		if r.CLevel != nil && r.CLevelUncertain != nil && *r.CLevelUncertain {
			cl += "?"
		}
		fmt.Fprintf(tw, "%s\t%s\t%.1f\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n",
			printable(r.FieldID), r.Crop, r.AreaHa, r.NCells, orDash(strings.Join(r.Sensors, ",")),
			t, optInt(r.TLevel), optFloat(r.CPct, 0), cl, optFloat(r.SlopeMeanPct, 1), contour, r.Status)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write table: %w", err)
	}
	return nil
}

// printUncertain names the talhões whose C level is uncertain, with C's 90
// % interval (c_level_uncertain, c_pct_lo, c_pct_hi).
func printUncertain(w io.Writer, rows []export.IndicatorRow) {
	var lines []string
	for _, r := range rows {
		if r.CLevel == nil || r.CLevelUncertain == nil || !*r.CLevelUncertain {
			continue
		}
		l := fmt.Sprintf("  %s: C %s %% (90 %% interval %s–%s %%), level %d", printable(r.FieldID),
			optFloat(r.CPct, 0), optFloat(r.CPctLo, 0), optFloat(r.CPctHi, 0), *r.CLevel)
		lines = append(lines, l)
	}
	if len(lines) > 0 {
		fmt.Fprintf(w, "\nC level uncertain (?: the 90 %% interval crosses a Tabela 1 limit, 30, 60 or 90 %%; the level could be a neighbouring one):\n%s\n",
			strings.Join(lines, "\n"))
	}
}

// printEarlyFailures lists the talhões run.json records without an
// indicator row (failed early, or incomplete), those of status when set.
func printEarlyFailures(w io.Writer, early []export.Failure, status string) {
	for _, st := range []string{export.StatusFailed, export.StatusIncomplete} {
		if status != "" && status != st {
			continue
		}
		var lines []string
		for _, f := range early {
			if f.Status == st {
				lines = append(lines, fmt.Sprintf("  %s (%s): %s", printable(f.FieldID), orDash(f.Stage), printable(f.Reason)))
			}
		}
		if len(lines) == 0 {
			continue
		}
		head := "Failed before their indicators were computed (run.json):"
		if st == export.StatusIncomplete {
			head = "Incomplete: scenes still failing transiently after the retries, no rows and no payload; run again (run.json):"
		}
		fmt.Fprintf(w, "\n%s\n%s\n", head, strings.Join(lines, "\n"))
	}
}

// seasonPart finds where a reason's first part names a season ("C
// missing: 2023/2024: ..."), so each season's reason can go on its own line.
var seasonPart = regexp.MustCompile(`^(.*?): (\d{4}/\d{4}: .*)$`)

// printReasons writes the reasons of the talhões that are not ok, a talhão
// per heading, a reason per line, and a reason listing seasons ("; ") one
// season per line: a terminal no longer wraps one reason over a screen.
func printReasons(w io.Writer, rows []export.IndicatorRow) {
	head := false
	for _, r := range rows {
		if r.Status == export.StatusOK || len(r.Reasons) == 0 {
			continue
		}
		if !head {
			fmt.Fprintln(w, "\nReasons:")
			head = true
		}
		fmt.Fprintf(w, "  %s (%s)\n", printable(r.FieldID), r.Status)
		for _, why := range r.Reasons {
			parts := strings.Split(printable(why), "; ")
			if len(parts) == 1 {
				fmt.Fprintf(w, "    %s\n", parts[0])
				continue
			}
			if m := seasonPart.FindStringSubmatch(parts[0]); m != nil {
				fmt.Fprintf(w, "    %s:\n", m[1])
				parts[0] = m[2]
			} else {
				fmt.Fprintf(w, "    %s\n", parts[0])
				parts = parts[1:]
			}
			for _, p := range parts {
				fmt.Fprintf(w, "      %s\n", p)
			}
		}
	}
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

// readManifests reads run.json of an output folder, or the shards'
// run/part-*.json; none when absent or unreadable (inspect works without
// them).
func readManifests(fsys fs.FS) []export.Manifest {
	names := []string{"run.json"}
	if _, err := fs.Stat(fsys, "run.json"); err != nil {
		names, _ = fs.Glob(fsys, "run/part-*.json")
	}
	var ms []export.Manifest
	for _, n := range names {
		b, err := fs.ReadFile(fsys, n)
		if err != nil {
			continue
		}
		if m, err := export.ReadManifest(bytes.NewReader(b)); err == nil {
			ms = append(ms, m)
		}
	}
	return ms
}
