package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/manejo/manejo/export"
	"github.com/manejo/manejo/grid"
	"github.com/manejo/manejo/series"
	"github.com/manejo/manejo/storage"
)

func init() {
	register(&command{name: "series", synopsis: "sample NDVI/NDTI at cell centres from a STAC catalog of COGs (IN 6.4, 6.5)", run: runSeries})
}

// seriesReport is the --report document (also summarised on stderr).
type seriesReport struct {
	Fields     string                `json:"fields"`
	Catalog    string                `json:"catalog"`
	Out        string                `json:"out"`
	Talhoes    int                   `json:"talhoes"`
	Cells      int                   `json:"cells"`
	Items      int                   `json:"items"`
	Scenes     int                   `json:"scenes"`
	ScenesRead int                   `json:"scenes_read"`
	Rows       int                   `json:"rows"`
	Skipped    map[string]int        `json:"skipped"`
	Masked     map[string]int        `json:"masked"`
	Problems   []series.Problem      `json:"problems,omitempty"`
	Catalogs   []string              `json:"catalog_errors,omitempty"`
	Failed     []string              `json:"failed_talhoes,omitempty"`
	Gaps       map[string]series.Gap `json:"gaps"`
	Seconds    float64               `json:"seconds"`
}

func runSeries(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("series", "series --fields F --catalog C --out obs.parquet [--from YYYY-MM-DD] [--to YYYY-MM-DD] [--workers N] [--allow-href-prefix P,...]", stderr)
	fields := fs.String("fields", "", "talhões: GeoJSON, GeoPackage, Shapefile, KML or any OGR vector; local, s3:// or https:// (required)")
	catalog := fs.String("catalog", "", "STAC ItemCollection JSON, directory of Item JSON files, or newline-delimited Items; local, s3:// or https:// (required)")
	out := fs.String("out", "", "observations: .parquet (observations dataset) or .csv; local path or s3:// (required)")
	idField := fs.String("id-field", grid.DefaultIDField, "property holding the talhão id")
	from := fs.String("from", "", "first acquisition date, YYYY-MM-DD (default: no limit)")
	to := fs.String("to", "", "last acquisition date, YYYY-MM-DD (default: no limit)")
	workers := fs.Int("workers", runtime.GOMAXPROCS(0), "scenes read at once (one GDAL dataset per asset per worker)")
	allow := fs.String("allow-href-prefix", "", "comma-separated prefixes asset hrefs must start with (after resolving relative hrefs); others are skipped as bad-href")
	profiles := fs.String("collection-profile", "", "comma-separated collection=profile pairs, to read a collection with a built-in profile (e.g. sentinel-2-c1-l2a=sentinel-2-l2a)")
	noQA := fs.Bool("allow-missing-qa", false, "sample items without their QA asset (SCL, QA_PIXEL, Fmask, reliability, state) unmasked instead of skipping them")
	report := fs.String("report", "", "write the run report (scenes, skips by reason, problems, IN 6.5 gaps) as JSON to this file")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	switch {
	case *fields == "":
		return usagef("--fields is required")
	case *catalog == "":
		return usagef("--catalog is required")
	case *out == "":
		return usagef("--out is required")
	case *workers < 1:
		return usagef("--workers %d: want at least 1", *workers)
	}
	ext := strings.ToLower(filepath.Ext(*out))
	if ext != ".parquet" && ext != ".csv" {
		return usagef("--out %s: want a .parquet or .csv file", *out)
	}
	var o series.Options
	o.Workers = *workers
	for _, d := range []struct {
		s   string
		t   *time.Time
		arg string
	}{{*from, &o.From, "--from"}, {*to, &o.To, "--to"}} {
		if d.s == "" {
			continue
		}
		t, err := time.Parse("2006-01-02", d.s)
		if err != nil {
			return usagef("%s %q: want YYYY-MM-DD", d.arg, d.s)
		}
		*d.t = t
	}
	if !o.From.IsZero() && !o.To.IsZero() && o.To.Before(o.From) {
		return usagef("--to %s is before --from %s", *to, *from)
	}
	builtin := series.Profiles()
	if *profiles != "" {
		o.Profiles = map[string]*series.Profile{}
		for _, pair := range strings.Split(*profiles, ",") {
			c, p, ok := strings.Cut(strings.TrimSpace(pair), "=")
			if !ok || builtin[p] == nil {
				names := make([]string, 0, len(builtin))
				for n := range builtin {
					names = append(names, n)
				}
				sort.Strings(names)
				return usagef("--collection-profile %q: want collection=profile with a profile among %s", pair, strings.Join(names, ", "))
			}
			o.Profiles[c] = builtin[p]
		}
	}
	if *noQA {
		if o.Profiles == nil {
			o.Profiles = map[string]*series.Profile{}
		}
		for c, p := range builtin {
			if _, set := o.Profiles[c]; !set {
				o.Profiles[c] = p
			}
		}
		for _, p := range o.Profiles {
			p.QAOptional = true
		}
	}
	var prefixes []string
	for _, p := range strings.Split(*allow, ",") {
		if p = strings.TrimSpace(p); p != "" {
			prefixes = append(prefixes, p)
		}
	}
	for k, v := range storage.GDALConfig() {
		o.GDALConfig = append(o.GDALConfig, k+"="+v)
	}
	start := time.Now()

	talhoes, readErrs := grid.Read(ctx, *fields, grid.ReadOptions{IDField: *idField})
	for _, err := range readErrs {
		if errors.Is(err, grid.ErrSource) {
			return err
		}
	}
	rep := seriesReport{Fields: *fields, Catalog: *catalog, Out: *out}
	for _, err := range readErrs {
		rep.Failed = append(rep.Failed, err.Error())
		fmt.Fprintf(stderr, "series: talhão skipped: %v\n", err)
	}
	var grids []grid.Grid
	for _, f := range talhoes {
		if err := ctx.Err(); err != nil {
			return err
		}
		g, err := grid.Build(f, grid.Options{})
		if err != nil {
			rep.Failed = append(rep.Failed, fmt.Sprintf("%s: %v", f.ID, err))
			fmt.Fprintf(stderr, "series: talhão %s skipped: %v\n", f.ID, err)
			continue
		}
		grids = append(grids, g)
		rep.Cells += len(g.Cells)
	}
	rep.Talhoes = len(grids)

	cat, catErrs := series.LoadCatalog(ctx, *catalog, series.CatalogOptions{Open: storage.Open, AllowHrefPrefixes: prefixes})
	for _, err := range catErrs {
		rep.Catalogs = append(rep.Catalogs, err.Error())
		fmt.Fprintf(stderr, "series: catalog: %v\n", err)
	}
	if cat == nil {
		return fmt.Errorf("load catalog %s: nothing usable", *catalog)
	}
	rep.Items = len(cat.Items)

	obs, st, err := series.Sample(ctx, cat, grids, o)
	if err != nil {
		return err
	}
	rep.Scenes, rep.ScenesRead, rep.Skipped, rep.Masked, rep.Problems, rep.Gaps = st.Scenes, st.ScenesRead, st.Skipped, st.Masked, st.Problems, st.Gaps
	rep.Rows = len(obs)

	var buf bytes.Buffer
	if ext == ".parquet" {
		rows := make([]export.ObsRow, len(obs))
		for i, ob := range obs {
			rows[i] = obsRow(ob)
		}
		if err := export.Write(&buf, rows, export.Options{Version: version}); err != nil {
			return fmt.Errorf("write %s: %w", *out, err)
		}
	} else if err := writeObsCSV(&buf, obs); err != nil {
		return fmt.Errorf("write %s: %w", *out, err)
	}
	if err := storage.WriteFile(ctx, *out, buf.Bytes()); err != nil {
		return fmt.Errorf("write %s: %w", *out, err)
	}
	rep.Seconds = math.Round(time.Since(start).Seconds()*1000) / 1000

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
		return partialError(len(rep.Failed), len(rep.Failed)+len(grids))
	}
	return nil
}

func obsRow(ob series.Obs) export.ObsRow {
	r := export.ObsRow{FieldID: ob.FieldID, CellID: ob.CellID, Date: export.DateOf(ob.Date), Collection: ob.Collection, ItemID: ob.ItemID, MaskReason: export.OptString(ob.Mask)}
	if v := ob.NDVI; !math.IsNaN(float64(v)) {
		r.NDVI = &v
	}
	if v := ob.NDTI; !math.IsNaN(float64(v)) {
		r.NDTI = &v
	}
	return r
}

func writeObsCSV(w io.Writer, obs []series.Obs) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"field_id", "cell_id", "date", "collection", "item_id", "ndvi", "ndti", "mask_reason"})
	f := func(v float32) string {
		if math.IsNaN(float64(v)) {
			return ""
		}
		return strconv.FormatFloat(float64(v), 'g', -1, 32)
	}
	for _, o := range obs {
		if err := cw.Write([]string{o.FieldID, o.CellID, o.Date.Format("2006-01-02"), o.Collection, o.ItemID, f(o.NDVI), f(o.NDTI), o.Mask}); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

func countsString(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}
