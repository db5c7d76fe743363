package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/manejo/manejo/pipeline"
	"github.com/manejo/manejo/series"
	"github.com/manejo/manejo/storage"
)

func init() {
	register(&command{name: "series", synopsis: "sample NDVI/NDTI at cell centres from a STAC catalog of COGs (IN 6.4, 6.5)", run: runSeries})
}

// seriesReport is the --report document (also summarised on stderr).
type seriesReport struct {
	Fields     string                    `json:"fields"`
	Catalog    string                    `json:"catalog"`
	Out        string                    `json:"out"`
	Talhoes    int                       `json:"talhoes"`
	Cells      int                       `json:"cells"`
	Items      int                       `json:"items"`
	Scenes     int                       `json:"scenes"`
	ScenesRead int                       `json:"scenes_read"`
	Rows       int                       `json:"rows"`
	Skipped    map[series.SkipReason]int `json:"skipped"`
	Masked     map[series.MaskReason]int `json:"masked"`
	Problems   []series.Problem          `json:"problems,omitempty"`
	Catalogs   []string                  `json:"catalog_errors,omitempty"`
	Failed     []string                  `json:"failed_talhoes,omitempty"`
	Gaps       map[string]series.Gap     `json:"gaps"`
	Seconds    float64                   `json:"seconds"`
}

func runSeries(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("series", "series --fields F --catalog C --out obs.parquet [--from YYYY-MM-DD] [--to YYYY-MM-DD] [--workers N] [--allow-href-prefix P,...]\n\n--fields, --catalog and --out are required; --workers counts scenes read at once (one GDAL dataset per asset per worker)", stderr)
	var fields, idField, catalog string
	var cols, allow, noQA stringList
	var workers int
	talhoesFlags(fs, &fields, &idField)
	catalogFlags(fs, &catalog, &cols)
	out := fs.String("out", "", "observations: .parquet (observations dataset) or .csv; local path or s3:// (required)")
	var from, to string
	acquisitionFlags(fs, &from, &to)
	workersFlag(fs, &workers)
	readRuleFlags(fs, &allow, &noQA)
	profiles := fs.String("collection-profile", "", "comma-separated collection=profile pairs, to read a collection with a built-in profile (e.g. sentinel-2-c1-l2a=sentinel-2-l2a)")
	report := fs.String("report", "", "write the run report (scenes, skips by reason, problems, IN 6.5 gaps) as JSON to this file")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := checkIDField(idField); err != nil {
		return err
	}
	switch {
	case fields == "":
		return usagef("--fields is required")
	case catalog == "":
		return usagef("--catalog is required")
	case *out == "":
		return usagef("--out is required")
	}
	if err := countFlags(map[string]int{"--workers": workers}); err != nil {
		return err
	}
	if ext := strings.ToLower(filepath.Ext(*out)); ext != ".parquet" && ext != ".csv" {
		return usagef("--out %s: want a .parquet or .csv file", *out)
	}
	if err := writableLoc("--out", *out); err != nil {
		return err
	}
	if err := staticCollections(catalog, cols); err != nil {
		return err
	}
	o := series.Options{Workers: workers}
	var err error
	if o.From, o.To, err = seriesDates(from, to); err != nil {
		return err
	}
	if o.Profiles, err = seriesProfiles(*profiles, noQA); err != nil {
		return err
	}
	if err := series.CheckHrefPrefixes(allow); err != nil {
		return usagef("%v", err)
	}
	for k, v := range storage.GDALConfig() {
		o.GDALConfig = append(o.GDALConfig, k+"="+v)
	}
	start := time.Now()
	res, err := pipeline.Series(ctx, pipeline.SeriesConfig{Fields: fields, IDField: idField, Catalog: catalog,
		AllowHrefPrefix: allow, Collections: cols, Sample: o, Out: *out, Version: version})
	rep := seriesReportOf(res, fields, catalog, *out, time.Since(start))
	printSeriesSkips(stderr, res)
	if err != nil {
		return err
	}
	printSeriesSummary(stderr, rep, res.Stats)
	if *report != "" {
		data, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			return err
		}
		if err := storage.WriteFile(ctx, *report, append(data, '\n')); err != nil {
			return fmt.Errorf("write %s: %w", *report, err)
		}
	}
	if len(rep.Failed) > 0 {
		return partialError(len(rep.Failed), len(rep.Failed)+res.Talhoes)
	}
	return nil
}

// seriesDates parses --from and --to (empty = no limit) of series and
// catalog search.
func seriesDates(from, to string) (time.Time, time.Time, error) {
	var f, t time.Time
	for _, d := range []struct {
		s   string
		t   *time.Time
		arg string
	}{{from, &f, "--from"}, {to, &t, "--to"}} {
		if d.s == "" {
			continue
		}
		v, err := time.Parse("2006-01-02", d.s)
		if err != nil {
			return f, t, usagef("%s %q: want YYYY-MM-DD", d.arg, d.s)
		}
		*d.t = v
	}
	if !f.IsZero() && !t.IsZero() && t.Before(f) {
		return f, t, usagef("--to %s is before --from %s", to, from)
	}
	return f, t, nil
}

// seriesProfiles reads --collection-profile (collection=profile pairs) and
// --allow-missing-qa into profile overrides; nil when neither is given.
func seriesProfiles(pairs string, noQA []string) (map[string]*series.Profile, error) {
	builtin := series.Profiles()
	var out map[string]*series.Profile
	if pairs != "" {
		out = map[string]*series.Profile{}
		for _, pair := range strings.Split(pairs, ",") {
			c, p, ok := strings.Cut(strings.TrimSpace(pair), "=")
			if !ok || builtin[p] == nil {
				names := make([]string, 0, len(builtin))
				for n := range builtin {
					names = append(names, n)
				}
				sort.Strings(names)
				return nil, usagef("--collection-profile %q: want collection=profile with a profile among %s", pair, strings.Join(names, ", "))
			}
			out[c] = builtin[p]
		}
	}
	out, err := series.AllowMissingQA(out, noQA)
	if err != nil {
		return nil, usagef("--allow-missing-qa %v", err)
	}
	return out, nil
}

// seriesReportOf fills the --report document.
func seriesReportOf(res pipeline.SeriesResult, fields, catalog, out string, took time.Duration) seriesReport {
	rep := seriesReport{Fields: fields, Catalog: catalog, Out: out, Talhoes: res.Talhoes, Cells: res.Cells, Items: res.Items,
		Scenes: res.Stats.Scenes, ScenesRead: res.Stats.ScenesRead, Rows: len(res.Obs),
		Skipped: res.Stats.Skipped, Masked: res.Stats.Masked, Problems: res.Stats.Problems, Gaps: res.Stats.Gaps}
	for _, err := range res.Unreadable {
		rep.Failed = append(rep.Failed, err.Error())
	}
	for _, f := range res.Failed {
		rep.Failed = append(rep.Failed, fmt.Sprintf("%s: %s", f.FieldID, f.Reason))
	}
	for _, err := range res.Catalog {
		rep.Catalogs = append(rep.Catalogs, err.Error())
	}
	rep.Seconds = math.Round(took.Seconds()*1000) / 1000
	return rep
}

// printSeriesSkips lists the talhões and catalog entries left out.
func printSeriesSkips(stderr io.Writer, res pipeline.SeriesResult) {
	for _, err := range res.Unreadable {
		fmt.Fprintf(stderr, "series: talhão skipped: %v\n", err)
	}
	for _, f := range res.Failed {
		fmt.Fprintf(stderr, "series: talhão %s skipped: %s\n", f.FieldID, f.Reason)
	}
	for _, err := range res.Catalog {
		fmt.Fprintf(stderr, "series: catalog: %v\n", err)
	}
}

// printSeriesSummary prints the skipped scenes, the counts and the talhões
// whose revisit is too coarse (IN 6.5).
func printSeriesSummary(stderr io.Writer, rep seriesReport, st series.Stats) {
	for _, p := range st.Problems {
		fmt.Fprintf(stderr, "series: skipped %v\n", p)
	}
	fmt.Fprintf(stderr, "series: %d talhões, %d cells, %d items, %d scenes selected, %d read, %d rows (%d clear) in %.1fs\n",
		rep.Talhoes, rep.Cells, rep.Items, rep.Scenes, rep.ScenesRead, rep.Rows, st.Masked[""], rep.Seconds)
	if len(st.Skipped) > 0 {
		fmt.Fprintf(stderr, "series: skipped by reason: %s\n", countsString(st.Skipped))
	}
	ids := make([]string, 0, len(st.Gaps))
	for id := range st.Gaps {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		g := st.Gaps[id]
		if g.Coarse || g.LargestGapDays > 16 {
			fmt.Fprintf(stderr, "series: %s: revisit %.1f days, largest gap between usable dates %d days (%s → %s), coarse=%v (IN 6.5: 16 days)\n",
				id, g.RevisitDays, g.LargestGapDays, g.GapFrom.Format("2006-01-02"), g.GapTo.Format("2006-01-02"), g.Coarse)
		}
	}
}

func countsString[K ~string](m map[K]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, string(k))
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[K(k)])
	}
	return strings.Join(parts, ", ")
}
