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
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/manejo/manejo/classify"
	"github.com/manejo/manejo/export"
	"github.com/manejo/manejo/storage"
	"github.com/manejo/manejo/zarc"
)

func init() {
	register(&command{name: "classify", synopsis: "preview the management level NM1–NM4 of each talhão, with the rule that decides it (IN 2/2025 3.2, Portaria 349/2026)", run: runClassify})
}

// Column sets of the classify inputs (docs/classify.md).
var (
	soilColumns  = []string{"field_id", "ctc_0_20", "v_pct_0_20", "ca_20_40", "m_pct_20_40", "effective_depth_cm"}
	cropsColumns = []string{"field_id", "agri_year", "crop", "species", "family", "purpose", "start", "end"}
	rsColumns    = []string{"field_id", "crop", "t_years", "c_pct", "slope_pct", "contour_pct"}
)

func runClassify(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("classify", "classify --soil soil.csv --crops crops.csv (--rs DIR | --rs-csv rs.csv) [--format table|json] [--out DIR]", stderr)
	var soilLoc, cropsLoc, rsDir, rsCSV, format, out, agriYear, ze string
	fs.StringVar(&soilLoc, "soil", "", "soil analyses CSV: "+strings.Join(soilColumns, ",")+" (required)")
	fs.StringVar(&cropsLoc, "crops", "", "crop history CSV: "+strings.Join(cropsColumns, ",")+" (required)")
	fs.StringVar(&rsDir, "rs", "", "output folder of 'manejo run' (local or s3://): reads indicators.parquet (T, C, slope, crop)")
	fs.StringVar(&rsCSV, "rs-csv", "", "remote-sensing CSV: "+strings.Join(rsColumns, ",")+"; with --rs, its non-empty cells override the folder's values")
	fs.StringVar(&format, "format", "table", "stdout format: table or json")
	fs.StringVar(&out, "out", "", "folder (local or s3://) to write classification.parquet into")
	fs.StringVar(&agriYear, "agri-year", "", "last agricultural year of the three D looks at, e.g. 2025/2026 (default: the latest agri_year in --crops)")
	fs.StringVar(&ze, "ze", "", "effective root depth Ze in cm by crop, crop=cm,... (default soja=60, Portaria SPA/MAPA 206/2026 1.9.3; maize has no default)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	switch {
	case soilLoc == "":
		return usagef("--soil is required")
	case cropsLoc == "":
		return usagef("--crops is required")
	case rsDir == "" && rsCSV == "":
		return usagef("one of --rs or --rs-csv is required")
	case format != "table" && format != "json":
		return usagef("--format must be table or json, not %q", format)
	}
	zeCm, err := parseZe(ze)
	if err != nil {
		return usagef("--ze: %v", err)
	}
	var last zarc.AgriYear
	if agriYear != "" {
		if last, err = zarc.ParseAgriYear(agriYear); err != nil {
			return usagef("--agri-year: %v", err)
		}
	}

	bad := badRows{}
	soil, err := readSoil(ctx, soilLoc, bad)
	if err != nil {
		return err
	}
	crops, latest, err := readCrops(ctx, cropsLoc, bad)
	if err != nil {
		return err
	}
	if last == 0 {
		last = latest
	}
	rs := map[string]rsValues{}
	if rsDir != "" {
		if rs, err = readRSDir(ctx, rsDir); err != nil {
			return err
		}
	}
	if rsCSV != "" {
		if err := readRSCSV(ctx, rsCSV, rs, bad); err != nil {
			return err
		}
	}

	ids := unionIDs(soil, crops, rs)
	var results []classify.Result
	var years []zarc.AgriYear
	if last != 0 {
		years = classify.WindowYears(last)
	}
	for _, id := range ids {
		if len(bad[id]) > 0 {
			continue
		}
		in := buildInput(id, soil[id], crops[id], rs[id], years, zeCm)
		r, err := classify.Classify(in)
		if err != nil {
			bad.add(id, err.Error())
			continue
		}
		results = append(results, r)
	}

	if out != "" {
		loc := storage.Join(out, "classification.parquet")
		var buf bytes.Buffer
		if err := writeClassificationParquet(&buf, results); err != nil {
			return err
		}
		if err := storage.WriteFile(ctx, loc, buf.Bytes()); err != nil {
			return fmt.Errorf("write %s: %w", loc, err)
		}
	}
	switch format {
	case "json":
		err = writeClassificationJSON(stdout, results)
	default:
		err = writeClassificationTable(stdout, results)
	}
	if err != nil {
		return err
	}
	if len(bad) > 0 {
		keys := make([]string, 0, len(bad))
		for k := range bad {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			for _, msg := range bad[k] {
				fmt.Fprintf(stderr, "manejo classify: talhão %s: %s\n", k, msg)
			}
		}
		return partialError(len(bad), len(bad)+len(results))
	}
	return nil
}

// badRows collects input errors by talhão id (or "file:line" when the row
// has no id); a talhão with errors is left out of the outputs.
type badRows map[string][]string

func (b badRows) add(id, msg string) { b[id] = append(b[id], msg) }

// parseZe reads "soja=60,milho=55" into a map; empty gives an empty map.
func parseZe(s string) (map[zarc.Crop]float64, error) {
	m := map[zarc.Crop]float64{}
	for _, kv := range strings.Split(s, ",") {
		if kv = strings.TrimSpace(kv); kv == "" {
			continue
		}
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return nil, fmt.Errorf("%q is not crop=cm", kv)
		}
		cm, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || cm <= 0 || math.IsInf(cm, 0) {
			return nil, fmt.Errorf("%q: Ze must be a positive number of cm", kv)
		}
		crop := zarc.Crop(strings.ToLower(strings.TrimSpace(k)))
		if crop != zarc.Soja && crop != zarc.Milho {
			return nil, fmt.Errorf("%q: crop must be soja or milho", kv)
		}
		m[crop] = cm
	}
	return m, nil
}

// table is a CSV read with its header: columns by name, rows with their
// line numbers. A header line with ';' and no ',' selects ';' as separator
// and the decimal comma (spreadsheets in pt-BR).
type table struct {
	loc     string
	col     map[string]int
	rows    [][]string
	lines   []int
	decimal byte
}

func readTable(ctx context.Context, loc string, required []string) (*table, error) {
	data, err := storage.ReadFile(ctx, loc)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", loc, err)
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")) // UTF-8 BOM from spreadsheets
	t := &table{loc: loc, col: map[string]int{}, decimal: '.'}
	r := csv.NewReader(bytes.NewReader(data))
	first, _, _ := bytes.Cut(data, []byte("\n"))
	if bytes.Contains(first, []byte(";")) && !bytes.Contains(first, []byte(",")) {
		r.Comma, t.decimal = ';', ','
	}
	r.FieldsPerRecord = -1
	r.ReuseRecord = false
	header, err := r.Read()
	if err != nil {
		return nil, fmt.Errorf("read %s: header: %w", loc, err)
	}
	for i, h := range header {
		t.col[strings.ToLower(strings.TrimSpace(h))] = i
	}
	var missing []string
	for _, c := range required {
		if _, ok := t.col[c]; !ok {
			missing = append(missing, c)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("read %s: missing column(s) %s (want %s)", loc, strings.Join(missing, ", "), strings.Join(required, ","))
	}
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		line, _ := r.FieldPos(0)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", loc, err)
		}
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
			continue
		}
		t.rows = append(t.rows, rec)
		t.lines = append(t.lines, line)
	}
	return t, nil
}

// cell returns the trimmed value of column c in row i ("" when short).
func (t *table) cell(i int, c string) string {
	j := t.col[c]
	if j >= len(t.rows[i]) {
		return ""
	}
	return strings.TrimSpace(t.rows[i][j])
}

// id returns the field_id of row i, or "file:line" when it is empty.
func (t *table) id(i int) (string, bool) {
	if id := t.cell(i, "field_id"); id != "" {
		return id, true
	}
	return fmt.Sprintf("%s:%d", path.Base(t.loc), t.lines[i]), false
}

// float reads an optional number: empty cell → nil.
func (t *table) float(i int, c string) (*float64, error) {
	s := t.cell(i, c)
	if s == "" {
		return nil, nil
	}
	if t.decimal == ',' {
		s = strings.Replace(s, ",", ".", 1)
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return nil, fmt.Errorf("%s line %d: %s = %q is not a number", t.loc, t.lines[i], c, t.cell(i, c))
	}
	return &v, nil
}

type soilValues struct{ ctc, v, ca, m, depth *float64 }

func readSoil(ctx context.Context, loc string, bad badRows) (map[string]soilValues, error) {
	t, err := readTable(ctx, loc, soilColumns)
	if err != nil {
		return nil, err
	}
	out := map[string]soilValues{}
	for i := range t.rows {
		id, ok := t.id(i)
		if !ok {
			bad.add(id, "soil row without field_id")
			continue
		}
		if _, dup := out[id]; dup {
			bad.add(id, fmt.Sprintf("%s line %d: field_id repeated (one soil analysis per talhão)", loc, t.lines[i]))
			continue
		}
		var s soilValues
		for _, f := range []struct {
			dst **float64
			col string
		}{{&s.ctc, "ctc_0_20"}, {&s.v, "v_pct_0_20"}, {&s.ca, "ca_20_40"}, {&s.m, "m_pct_20_40"}, {&s.depth, "effective_depth_cm"}} {
			v, err := t.float(i, f.col)
			if err != nil {
				bad.add(id, err.Error())
			}
			*f.dst = v
		}
		out[id] = s
	}
	return out, nil
}

// readCrops reads the crop history and returns it by talhão with the latest
// agricultural year of the file.
func readCrops(ctx context.Context, loc string, bad badRows) (map[string][]classify.Planting, zarc.AgriYear, error) {
	t, err := readTable(ctx, loc, cropsColumns)
	if err != nil {
		return nil, 0, err
	}
	out := map[string][]classify.Planting{}
	var latest zarc.AgriYear
	for i := range t.rows {
		id, ok := t.id(i)
		if !ok {
			bad.add(id, "crops row without field_id")
			continue
		}
		where := fmt.Sprintf("%s line %d", loc, t.lines[i])
		y, err := zarc.ParseAgriYear(t.cell(i, "agri_year"))
		if err != nil {
			bad.add(id, fmt.Sprintf("%s: agri_year: %v", where, err))
			continue
		}
		var dates [2]time.Time
		okDates := true
		for k, c := range []string{"start", "end"} {
			if dates[k], err = time.Parse(time.DateOnly, t.cell(i, c)); err != nil {
				bad.add(id, fmt.Sprintf("%s: %s = %q is not YYYY-MM-DD", where, c, t.cell(i, c)))
				okDates = false
			}
		}
		if !okDates {
			continue
		}
		p := classify.Planting{
			AgriYear: y, Crop: t.cell(i, "crop"), Species: t.cell(i, "species"), Family: t.cell(i, "family"),
			Purpose: classify.Purpose(strings.ToLower(t.cell(i, "purpose"))), Start: dates[0], End: dates[1],
		}
		if _, err := classify.Diversity([]classify.Planting{p}, nil); err != nil {
			bad.add(id, fmt.Sprintf("%s: %v", where, err))
			continue
		}
		out[id] = append(out[id], p)
		latest = max(latest, y)
	}
	return out, latest, nil
}

// rsValues are the remote-sensing inputs of one talhão.
type rsValues struct {
	crop                       string
	t, c, slope, contour       *float64
	notes                      map[string]string
	fromDir, fromCSV, haveCrop bool
}

// readRSDir reads indicators.parquet (one file or a folder of parts) of a
// `manejo run` output folder through export.
func readRSDir(ctx context.Context, dir string) (map[string]rsValues, error) {
	rows, err := readIndicatorsAt(ctx, dir)
	if err != nil {
		return nil, err
	}
	out := make(map[string]rsValues, len(rows))
	for _, r := range rows {
		v := rsValues{crop: r.Crop, haveCrop: r.Crop != "", c: r.CPct, slope: r.SlopeMeanPct, notes: map[string]string{}, fromDir: true}
		switch {
		case r.TYears != nil:
			v.t = r.TYears
		case r.TCensored && r.TLevel != nil && r.TYearsMin != nil:
			// No revolving in the whole archive, long enough to decide the level.
			v.t = r.TYearsMin
			v.notes["t"] = fmt.Sprintf("no soil revolving seen: T ≥ %g years (lower bound, level decided)", *r.TYearsMin)
		}
		for _, reason := range r.Reasons {
			switch {
			case strings.HasPrefix(reason, "T:"):
				v.notes["t"] = strings.TrimSpace(strings.TrimPrefix(reason, "T:"))
			case strings.HasPrefix(reason, "C:"):
				v.notes["c"] = strings.TrimSpace(strings.TrimPrefix(reason, "C:"))
			}
		}
		if r.Status == export.StatusFailed {
			v.notes["t"] = "run failed: " + strings.Join(r.Reasons, "; ")
			v.t, v.c, v.slope = nil, nil, nil
		}
		out[r.FieldID] = v
	}
	return out, nil
}

// readRSCSV reads rs.csv into rs; its non-empty cells override values read
// from a run folder.
func readRSCSV(ctx context.Context, loc string, rs map[string]rsValues, bad badRows) error {
	t, err := readTable(ctx, loc, rsColumns)
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	for i := range t.rows {
		id, ok := t.id(i)
		if !ok {
			bad.add(id, "rs row without field_id")
			continue
		}
		if seen[id] {
			bad.add(id, fmt.Sprintf("%s line %d: field_id repeated", loc, t.lines[i]))
			continue
		}
		seen[id] = true
		v := rs[id]
		v.fromCSV = true
		if v.notes == nil {
			v.notes = map[string]string{}
		}
		if c := strings.ToLower(t.cell(i, "crop")); c != "" {
			v.crop, v.haveCrop = c, true
		}
		for _, f := range []struct {
			dst **float64
			col string
		}{{&v.t, "t_years"}, {&v.c, "c_pct"}, {&v.slope, "slope_pct"}, {&v.contour, "contour_pct"}} {
			x, err := t.float(i, f.col)
			if err != nil {
				bad.add(id, err.Error())
				continue
			}
			if x != nil {
				*f.dst = x
			}
		}
		rs[id] = v
	}
	return nil
}

func unionIDs(soil map[string]soilValues, crops map[string][]classify.Planting, rs map[string]rsValues) []string {
	set := map[string]bool{}
	for id := range soil {
		set[id] = true
	}
	for id := range crops {
		set[id] = true
	}
	for id := range rs {
		set[id] = true
	}
	ids := make([]string, 0, len(set))
	for id := range set {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

func buildInput(id string, s soilValues, h []classify.Planting, r rsValues, years []zarc.AgriYear, ze map[zarc.Crop]float64) classify.Input {
	in := classify.Input{
		FieldID: id, Crop: zarc.Soja,
		CTC: s.ctc, VPct: s.v, Ca: s.ca, MPct: s.m, EffectiveDepthCm: s.depth,
		TYears: r.t, CPct: r.c, SlopePct: r.slope, ContourPct: r.contour,
		History: h, Years: years, Notes: r.notes,
	}
	if r.haveCrop {
		in.Crop = zarc.Crop(strings.ToLower(r.crop))
	}
	if z, ok := ze[in.Crop]; ok {
		in.ZeCm = new(z)
	}
	if !r.fromDir && !r.fromCSV {
		if in.Notes == nil {
			in.Notes = map[string]string{}
		}
		in.Notes["t"], in.Notes["c"] = "talhão absent from the remote-sensing input", "talhão absent from the remote-sensing input"
	}
	return in
}

// JSON output (--format json): one object per talhão.
type jsonIndicator struct {
	Value  *float64 `json:"value"`
	Unit   string   `json:"unit"`
	Level  *int     `json:"level"`
	Points int      `json:"points"`
	Item   string   `json:"item"`
	Detail string   `json:"detail,omitempty"`
}

type jsonRule struct {
	Rule   string `json:"rule"`
	Text   string `json:"text"`
	Before *int   `json:"before"`
	After  *int   `json:"after"` // null: not classifiable
}

type jsonResult struct {
	FieldID      string                   `json:"field_id"`
	Crop         string                   `json:"crop"`
	Level        *int                     `json:"level"`
	Mi           *float64                 `json:"mi"`
	MeanLevel    *int                     `json:"mean_level"`
	Indicators   map[string]jsonIndicator `json:"indicators"`
	Rules        []jsonRule               `json:"rules"`
	DecidingRule string                   `json:"deciding_rule"`
	Missing      []string                 `json:"missing"`
	Reason       string                   `json:"reason,omitempty"`
	DYears       []string                 `json:"d_years"`
}

func level(n int) *int {
	if n == 0 {
		return nil
	}
	return &n
}

func toJSON(r classify.Result) jsonResult {
	j := jsonResult{
		FieldID: r.FieldID, Crop: string(r.Crop), Level: level(r.Level), MeanLevel: level(r.MeanLevel),
		Indicators: map[string]jsonIndicator{}, Rules: []jsonRule{}, DecidingRule: r.DecidingRule,
		Missing: append([]string{}, r.Missing...), Reason: r.Reason, DYears: []string{},
	}
	if !math.IsNaN(r.Mi) {
		mi := math.Round(r.Mi*1e4) / 1e4
		j.Mi = &mi
	}
	for _, ind := range r.Indicators {
		ji := jsonIndicator{Unit: ind.Unit, Level: level(ind.Level), Points: ind.Points, Item: ind.Item, Detail: ind.Detail}
		if !math.IsNaN(ind.Value) {
			v := ind.Value
			ji.Value = &v
		}
		j.Indicators[ind.Key] = ji
	}
	for _, x := range r.Rules {
		j.Rules = append(j.Rules, jsonRule{Rule: x.ID, Text: x.Text, Before: level(x.Before), After: level(x.After)})
	}
	for _, y := range r.Diversity.Years {
		j.DYears = append(j.DYears, y.String())
	}
	return j
}

func writeClassificationJSON(w io.Writer, results []classify.Result) error {
	out := make([]jsonResult, len(results))
	for i, r := range results {
		out[i] = toJSON(r)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		return fmt.Errorf("write json: %w", err)
	}
	return nil
}

func nm(n int) string {
	if n == 0 {
		return "—"
	}
	return "NM" + strconv.Itoa(n)
}

// writeClassificationTable prints one line per talhão (each indicator as
// value(level)), then the explanation: fired rules with the level before and
// after, and what is missing.
func writeClassificationTable(w io.Writer, results []classify.Result) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "field_id\tcrop\tlevel\tMi\tV%\tCa\tm%\tT\tC\tD\tdeciding rule")
	for _, r := range results {
		mi := "—"
		if !math.IsNaN(r.Mi) {
			mi = strconv.FormatFloat(r.Mi, 'f', 2, 64)
		}
		cells := []string{r.FieldID, string(r.Crop), nm(r.Level), mi}
		for _, ind := range r.Indicators {
			if ind.Measured {
				// One decimal for reading; the level comes from the unrounded value.
				v := strconv.FormatFloat(math.Round(ind.Value*10)/10, 'f', -1, 64)
				cells = append(cells, fmt.Sprintf("%s(%d)", v, ind.Level))
			} else {
				cells = append(cells, "—")
			}
		}
		cells = append(cells, r.DecidingRule)
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write table: %w", err)
	}
	fmt.Fprintln(w, "\nvalue(level) per indicator; levels from Tabela 1 (IN SPA/MAPA 2/2025); — = not measured / not classifiable")
	for _, r := range results {
		fmt.Fprintf(w, "\n%s (%s): %s", r.FieldID, r.Crop, nm(r.Level))
		if r.Level == 0 {
			fmt.Fprintf(w, " — %s", r.Reason)
		}
		fmt.Fprintln(w)
		if !math.IsNaN(r.Mi) {
			fmt.Fprintf(w, "  Mi = %.2f → %s (IN 3.2)\n", r.Mi, nm(r.MeanLevel))
		}
		for _, x := range r.Rules {
			fmt.Fprintf(w, "  %s: %s → %s: %s\n", x.ID, nm(x.Before), nm(x.After), x.Text)
		}
		for _, ind := range r.Indicators {
			if !ind.Measured || ind.Key == "d" {
				fmt.Fprintf(w, "  %s: %s\n", ind.Name, ind.Detail)
			}
		}
		if len(r.Missing) > 0 {
			fmt.Fprintf(w, "  missing: %s\n", strings.Join(r.Missing, ", "))
		}
		fmt.Fprintf(w, "  decided by %s\n", r.DecidingRule)
	}
	return nil
}

func opt32(n int) *int32 {
	if n == 0 {
		return nil
	}
	v := int32(n)
	return &v
}

func optF(ind classify.Indicator) *float64 {
	if math.IsNaN(ind.Value) {
		return nil
	}
	v := ind.Value
	return &v
}

func toRow(r classify.Result, in map[string]classify.Indicator) export.ClassificationRow {
	j := toJSON(r)
	expl, _ := json.Marshal(j)
	row := export.ClassificationRow{
		FieldID: r.FieldID, Crop: string(r.Crop), Level: opt32(r.Level), Mi: j.Mi, MeanLevel: opt32(r.MeanLevel),
		DecidingRule: r.DecidingRule, Reason: r.Reason, Missing: slices.Clone(r.Missing),
		DYears: j.DYears, DDetail: in["d"].Detail, Explanation: string(expl),
		VPct: optF(in["v_pct"]), VLevel: opt32(in["v_pct"].Level),
		Ca: optF(in["ca"]), CaLevel: opt32(in["ca"].Level),
		MPct: optF(in["m_pct"]), MLevel: opt32(in["m_pct"].Level),
		TYears: optF(in["t"]), TLevel: opt32(in["t"].Level),
		CPct: optF(in["c"]), CLevel: opt32(in["c"].Level),
		DLevel: opt32(in["d"].Level),
	}
	if d := in["d"]; d.Measured {
		row.DCrops = opt32(int(d.Value))
	}
	for _, x := range r.Rules {
		row.Rules = append(row.Rules, fmt.Sprintf("%s: %s → %s: %s", x.ID, nm(x.Before), nm(x.After), x.Text))
	}
	return row
}

func writeClassificationParquet(w io.Writer, results []classify.Result) error {
	rows := make([]export.ClassificationRow, len(results))
	for i, r := range results {
		in := map[string]classify.Indicator{}
		for _, ind := range r.Indicators {
			in[ind.Key] = ind
		}
		rows[i] = toRow(r, in)
	}
	if err := export.Write(w, rows, export.Options{Version: version}); err != nil {
		return fmt.Errorf("write classification.parquet: %w", err)
	}
	return nil
}
