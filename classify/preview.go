package classify

import (
	"fmt"
	"io"
	"io/fs"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/manejo/manejo/export"
	"github.com/manejo/manejo/zarc"
)

// File is one CSV input of Preview: its location, for messages, and its
// content.
type File struct {
	Name string
	R    io.Reader // nil: the input is absent
}

// Sources are the inputs of a preview over many talhões (docs/classify.md):
// the soil analyses, the crop history and the remote-sensing indicators,
// read from the output folder of a run, from a CSV, or both (the CSV's
// non-empty cells override the run's values).
type Sources struct {
	Soil  File // SoilColumns; required
	Crops File // CropsColumns; required

	Run     fs.FS  // output folder of `manejo run` (its indicators dataset); nil when none
	RunName string // location of Run, for messages

	RemoteSensing File // RemoteSensingColumns; R nil when none

	// Declared, when set, gives a talhão's declared plantioContorno (0 or
	// 1; ok false when it declares none), read by the caller from the
	// run's SINM payloads. A talhão of Run that declares it gets
	// contour_pct 100 (1) or 0 (0): the declaration is all or nothing, and
	// without it a talhão with slope ≥ 3 % is not classifiable. A
	// contour_pct of RemoteSensing overrides it.
	Declared func(fieldID string) (plantioContorno int, ok bool)

	// LastYear is the last of the agricultural years D looks at, the same
	// for every talhão; 0 means the latest agri_year of Crops.
	LastYear zarc.AgriYear
	// Ze is the effective root depth in cm by crop (ParseZe); a crop absent
	// here takes DefaultZe.
	Ze map[zarc.Crop]float64
}

// Batch is the outcome of Preview.
type Batch struct {
	Results []Result // one per talhão classified, by field_id
	// Rejected lists, by talhão id (or "file:line" for a row without an id),
	// the input errors that left a talhão out of Results.
	Rejected map[string][]string
}

// Preview reads the sources and classifies every talhão found in any of
// them. Input errors confined to a talhão (a bad cell, a repeated row, an
// invalid planting, a value out of range) reject that talhão only and are
// listed in Batch.Rejected; an unreadable input (missing column, broken CSV,
// unreadable run folder) is an error.
func Preview(src Sources) (Batch, error) {
	bad := rejected{}
	soil, err := readSoil(src.Soil, bad)
	if err != nil {
		return Batch{}, err
	}
	crops, latest, err := readCrops(src.Crops, bad)
	if err != nil {
		return Batch{}, err
	}
	rs := map[string]remoteSensing{}
	if src.Run != nil {
		if rs, err = readRun(src.Run, src.RunName); err != nil {
			return Batch{}, err
		}
		declaredContour(rs, src.Declared)
	}
	if src.RemoteSensing.R != nil {
		if err := readRemoteSensing(src.RemoteSensing, rs, bad); err != nil {
			return Batch{}, err
		}
	}
	last := src.LastYear
	if last == 0 {
		last = latest
	}
	var years []zarc.AgriYear
	if last != 0 {
		years = WindowYears(last)
	}
	var results []Result
	for _, id := range unionIDs(soil, crops, rs) {
		if len(bad[id]) > 0 {
			continue
		}
		r, err := Classify(merge(id, soil[id], crops[id], rs[id], years, src.Ze))
		if err != nil {
			bad.add(id, err.Error())
			continue
		}
		results = append(results, r)
	}
	return Batch{Results: results, Rejected: bad}, nil
}

// rejected collects input errors by talhão id (or "file:line" when the row
// has no id); a talhão with errors is left out of the results.
type rejected map[string][]string

func (b rejected) add(id, msg string) { b[id] = append(b[id], msg) }

// ParseZe reads the effective root depths "soja=60,milho=55" (cm by crop);
// an empty string gives an empty map.
func ParseZe(s string) (map[zarc.Crop]float64, error) {
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

// read reads all of f.
func (f File) read() ([]byte, error) {
	data, err := io.ReadAll(f.R)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", f.Name, err)
	}
	return data, nil
}

// soil is the soil analysis of one talhão.
type soil struct{ ctc, v, ca, m, depth *float64 }

func readSoil(f File, bad rejected) (map[string]soil, error) {
	data, err := f.read()
	if err != nil {
		return nil, err
	}
	t, err := readTable(data, f.Name, SoilColumns)
	if err != nil {
		return nil, err
	}
	out := map[string]soil{}
	for i := range t.rows {
		id, ok := t.id(i)
		if !ok {
			bad.add(id, "soil row without field_id")
			continue
		}
		if _, dup := out[id]; dup {
			bad.add(id, t.where(i)+": field_id repeated (one soil analysis per talhão)")
			continue
		}
		var s soil
		for _, c := range []struct {
			dst **float64
			col string
		}{{&s.ctc, "ctc_0_20"}, {&s.v, "v_pct_0_20"}, {&s.ca, "ca_20_40"}, {&s.m, "m_pct_20_40"}, {&s.depth, "effective_depth_cm"}} {
			v, err := t.float(i, c.col)
			if err != nil {
				bad.add(id, err.Error())
			}
			*c.dst = v
		}
		out[id] = s
	}
	return out, nil
}

// readCrops reads the crop history and returns it by talhão with the latest
// agricultural year of the file.
func readCrops(f File, bad rejected) (map[string][]Planting, zarc.AgriYear, error) {
	data, err := f.read()
	if err != nil {
		return nil, 0, err
	}
	t, err := readTable(data, f.Name, CropsColumns)
	if err != nil {
		return nil, 0, err
	}
	out := map[string][]Planting{}
	var latest zarc.AgriYear
	for i := range t.rows {
		id, ok := t.id(i)
		if !ok {
			bad.add(id, "crops row without field_id")
			continue
		}
		p, errs := t.planting(i)
		if len(errs) > 0 {
			for _, e := range errs {
				bad.add(id, e)
			}
			continue
		}
		out[id] = append(out[id], p)
		latest = max(latest, p.AgriYear)
	}
	return out, latest, nil
}

// planting reads row i of the crop history, or says what is wrong with it
// (each message names the row).
func (t *table) planting(i int) (Planting, []string) {
	where := t.where(i)
	y, err := zarc.ParseAgriYear(t.cell(i, "agri_year"))
	if err != nil {
		return Planting{}, []string{fmt.Sprintf("%s: agri_year: %v", where, err)}
	}
	var dates [2]time.Time
	var errs []string
	for k, c := range []string{"start", "end"} {
		if dates[k], err = time.Parse(time.DateOnly, t.cell(i, c)); err != nil {
			errs = append(errs, fmt.Sprintf("%s: %s = %q is not YYYY-MM-DD", where, c, t.cell(i, c)))
		}
	}
	if len(errs) > 0 {
		return Planting{}, errs
	}
	p := Planting{
		AgriYear: y, Crop: t.cell(i, "crop"), Species: t.cell(i, "species"), Family: t.cell(i, "family"),
		Purpose: Purpose(strings.ToLower(t.cell(i, "purpose"))), Start: dates[0], End: dates[1],
	}
	if err := p.validate(); err != nil {
		// As Diversity words it for a history of this one row.
		return Planting{}, []string{fmt.Sprintf("%s: history row 1: %v", where, err)}
	}
	return p, nil
}

// remoteSensing are the remote-sensing inputs of one talhão, from the run
// folder, the CSV or both.
type remoteSensing struct {
	crop                       string
	t, c, slope, contour       *float64
	notes                      map[string]string
	fromRun, fromCSV, haveCrop bool
}

// declaredContour sets contour_pct of the talhões of a run that declare
// plantioContorno (Sources.Declared).
func declaredContour(rs map[string]remoteSensing, declared func(string) (int, bool)) {
	if declared == nil {
		return
	}
	for id, v := range rs {
		if d, ok := declared(id); ok && (d == 0 || d == 1) {
			v.contour = new(float64(100 * d))
			rs[id] = v
		}
	}
}

// readRun reads the indicators dataset of a run's output folder.
func readRun(fsys fs.FS, name string) (map[string]remoteSensing, error) {
	rows, err := export.ReadDataset[export.IndicatorRow](fsys)
	if err != nil {
		return nil, fmt.Errorf("read indicators of %s: %w", name, err)
	}
	out := make(map[string]remoteSensing, len(rows))
	for _, r := range rows {
		out[r.FieldID] = fromIndicators(r)
	}
	return out, nil
}

// fromIndicators takes T, C, the slope and the crop of one talhão from its
// row of the run, with the run's reasons as notes on T and C.
func fromIndicators(r export.IndicatorRow) remoteSensing {
	v := remoteSensing{crop: r.Crop, haveCrop: r.Crop != "", c: r.CPct, slope: r.SlopeMeanPct, notes: map[string]string{}, fromRun: true}
	switch {
	case r.TYears != nil:
		v.t = r.TYears
	case r.TCensored && r.TLevel != nil && r.TYearsMin != nil:
		// No revolving in the whole archive, long enough to decide the level.
		v.t = r.TYearsMin
		v.notes["t"] = fmt.Sprintf("no soil revolving seen: T ≥ %g years (lower bound, level decided)", *r.TYearsMin)
	}
	for _, why := range export.ParseReasons(r.Reasons) {
		switch why.Subject {
		case export.SubjectT:
			v.notes["t"] = why.Detail
		case export.SubjectC:
			v.notes["c"] = why.Detail
		}
	}
	if r.Status == export.StatusFailed {
		v.notes["t"] = "run failed: " + strings.Join(r.Reasons, "; ")
		v.t, v.c, v.slope = nil, nil, nil
	}
	return v
}

// readRemoteSensing reads the remote-sensing CSV into rs; its non-empty
// cells override values read from a run folder.
func readRemoteSensing(f File, rs map[string]remoteSensing, bad rejected) error {
	data, err := f.read()
	if err != nil {
		return err
	}
	t, err := readTable(data, f.Name, RemoteSensingColumns)
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
			bad.add(id, t.where(i)+": field_id repeated")
			continue
		}
		seen[id] = true
		rs[id] = t.overrideRemoteSensing(i, rs[id], func(msg string) { bad.add(id, msg) })
	}
	return nil
}

// overrideRemoteSensing returns v with the non-empty cells of row i.
func (t *table) overrideRemoteSensing(i int, v remoteSensing, fail func(string)) remoteSensing {
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
			fail(err.Error())
			continue
		}
		if x != nil {
			*f.dst = x
		}
	}
	return v
}

// unionIDs returns the talhões named in any input, sorted.
func unionIDs(soil map[string]soil, crops map[string][]Planting, rs map[string]remoteSensing) []string {
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
	return slices.Sorted(maps.Keys(set))
}

// merge builds the Input of one talhão from its soil analysis, crop history
// and remote-sensing values. The crop is the remote-sensing one, soja when
// none is given.
func merge(id string, s soil, h []Planting, r remoteSensing, years []zarc.AgriYear, ze map[zarc.Crop]float64) Input {
	in := Input{
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
	if !r.fromRun && !r.fromCSV {
		in.Notes = map[string]string{
			"t": "talhão absent from the remote-sensing input",
			"c": "talhão absent from the remote-sensing input",
		}
	}
	return in
}

// ReadHistory reads a crop history table (CropsColumns, in the dialect of
// docs/classify.md) on its own, as `manejo run --crops` and `manejo
// analyse --crops` give it to coverage (the declared residue of each
// season): the plantings by talhão, and the rows that cannot be used, by
// talhão id ("file:line" for a row without one), each message naming its
// file, line and problem. An unreadable table (missing column, broken CSV)
// is an error.
func ReadHistory(f File) (map[string][]Planting, map[string][]string, error) {
	bad := rejected{}
	h, _, err := readCrops(f, bad)
	return h, bad, err
}
