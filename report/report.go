package report

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"html"
	"io"
	"io/fs"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/paulmach/orb"
	"github.com/paulmach/orb/encoding/wkb"

	"github.com/manejo/manejo/export"
)

// Options tune Write. The zero value means the defaults.
type Options struct {
	// Title heads the page; default "manejo report".
	Title string
	// Generated is the time printed in the page footer; zero leaves it out
	// (so tests get stable output).
	Generated time.Time
}

// Stats says what a report holds.
type Stats struct {
	Talhoes      int
	Observations int64
	Bytes        int64
}

// Write renders the report of the output folder fsys (as written by manejo
// run) to w. It reads indicators, seasons, cell covers, cycles, events and
// cells whole (they are small) and streams the observations one talhão at a
// time.
func Write(ctx context.Context, w io.Writer, fsys fs.FS, o Options) (Stats, error) {
	if o.Title == "" {
		o.Title = "manejo report"
	}
	var st Stats
	out, err := readOutput(fsys)
	if err != nil {
		return st, fmt.Errorf("report: %w", err)
	}
	cw := &countWriter{w: w}
	bw := bufio.NewWriterSize(cw, 1<<16)
	writeHead(bw, o, out.run, out.inds)
	writeSummary(bw, out.inds, out.levels)

	streams, err := openObsStreams(ctx, fsys)
	if err != nil {
		return st, fmt.Errorf("report: %w", err)
	}
	defer streams.close()
	for _, ind := range out.inds {
		if err := ctx.Err(); err != nil {
			return st, err
		}
		obs, err := streams.next(ind.FieldID)
		if err != nil {
			return st, fmt.Errorf("report: %w", err)
		}
		st.Observations += int64(len(obs))
		fd := out.fields[ind.FieldID]
		if fd == nil {
			fd = &fieldData{}
		}
		writeSection(bw, ind, fd, obs, out.levels[ind.FieldID])
		st.Talhoes++
	}
	writeFoot(bw, o)
	if err := bw.Flush(); err != nil {
		return st, fmt.Errorf("report: write: %w", err)
	}
	st.Bytes = cw.n
	return st, nil
}

// output is what the report reads whole from an output folder: everything
// but the observations.
type output struct {
	inds   []export.IndicatorRow // sorted by talhão id
	fields map[string]*fieldData // by talhão id
	levels map[string]*export.ClassificationRow
	run    []export.Manifest
}

// readOutput reads the indicators (required) and the other small datasets
// (optional) of an output folder.
func readOutput(fsys fs.FS) (output, error) {
	var out output
	inds, err := export.ReadDataset[export.IndicatorRow](fsys)
	if err != nil {
		return out, err
	}
	sort.Slice(inds, func(i, j int) bool { return inds[i].FieldID < inds[j].FieldID })
	out.inds = inds
	if out.fields, err = readFieldData(fsys); err != nil {
		return out, err
	}
	classes, err := optional(export.ReadDataset[export.ClassificationRow](fsys))
	if err != nil {
		return out, err
	}
	out.levels = map[string]*export.ClassificationRow{}
	for i := range classes {
		out.levels[classes[i].FieldID] = &classes[i]
	}
	out.run = readRun(fsys)
	return out, nil
}

// readFieldData reads seasons, cell covers, cycles, events and cells, and
// groups them by talhão.
func readFieldData(fsys fs.FS) (map[string]*fieldData, error) {
	seasons, err := optional(export.ReadDataset[export.SeasonRow](fsys))
	if err != nil {
		return nil, err
	}
	covers, err := optional(export.ReadDataset[export.CellCoverRow](fsys))
	if err != nil {
		return nil, err
	}
	cycles, err := optional(export.ReadDataset[export.CycleRow](fsys))
	if err != nil {
		return nil, err
	}
	events, err := optional(export.ReadDataset[export.EventRow](fsys))
	if err != nil {
		return nil, err
	}
	cells, err := optional(export.ReadDataset[export.CellRow](fsys))
	if err != nil {
		return nil, err
	}
	m := map[string]*fieldData{}
	get := func(id string) *fieldData {
		if m[id] == nil {
			m[id] = &fieldData{}
		}
		return m[id]
	}
	for _, r := range seasons {
		get(r.FieldID).seasons = append(get(r.FieldID).seasons, r)
	}
	for _, r := range covers {
		get(r.FieldID).covers = append(get(r.FieldID).covers, r)
	}
	for _, r := range cycles {
		get(r.FieldID).cycles = append(get(r.FieldID).cycles, r)
	}
	for _, r := range events {
		get(r.FieldID).events = append(get(r.FieldID).events, r)
	}
	for _, r := range cells {
		get(r.FieldID).cells = append(get(r.FieldID).cells, r)
	}
	return m, nil
}

// optional turns a missing dataset into no rows.
func optional[T any](rows []T, err error) ([]T, error) {
	if err != nil && errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return rows, err
}

type fieldData struct {
	seasons []export.SeasonRow
	covers  []export.CellCoverRow
	cycles  []export.CycleRow
	events  []export.EventRow
	cells   []export.CellRow
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// readRun reads the run manifests of an output folder: run.json, or the
// shards' run/part-*.json. One that is missing or unreadable is left out:
// the header then says less, the report is still drawn.
func readRun(fsys fs.FS) []export.Manifest {
	var out []export.Manifest
	names := []string{"run.json"}
	if m, _ := fs.Glob(fsys, "run/part-*.json"); len(m) > 0 {
		names = m
	}
	for _, n := range names {
		f, err := fsys.Open(n)
		if err != nil {
			continue
		}
		m, err := export.ReadManifest(f)
		f.Close()
		if err == nil {
			out = append(out, m)
		}
	}
	return out
}

const style = `body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:#1f2328;background:#fff}
header,main,footer{max-width:1180px;margin:0 auto;padding:0 20px}
h1{font-size:22px;margin:18px 0 4px}h2{font-size:18px;margin:0 0 6px}
.muted{color:#656d76}table{border-collapse:collapse;width:100%;font-size:13px}
th,td{border-bottom:1px solid #d0d7de;padding:4px 6px;text-align:left;vertical-align:top}
th{background:#f6f8fa;position:sticky;top:0;cursor:pointer;user-select:none;white-space:nowrap}
th[aria-sort=ascending]::after{content:" ▲"}th[aria-sort=descending]::after{content:" ▼"}
td.num{text-align:right;font-variant-numeric:tabular-nums}
.lv{display:inline-block;min-width:1.6em;text-align:center;border-radius:3px;color:#fff;font-weight:600}
.lv1{background:#cf222e}.lv2{background:#bc4c00}.lv3{background:#9a6700}.lv4{background:#1a7f37}.lv0{background:#8c959f}
.st-ok{color:#1a7f37}.st-partial{color:#9a6700}.st-failed{color:#cf222e}
.ci{color:#57606a;font-size:.9em}.warn{color:#9a6700;font-weight:600}
section.field{border-top:2px solid #d0d7de;padding:14px 0;content-visibility:auto;contain-intrinsic-size:auto 720px}
.figs{display:flex;flex-wrap:wrap;gap:16px;align-items:flex-start}.figs>div{width:360px}
.facts{font-size:13px}.facts td{border:none;padding:1px 8px 1px 0}
svg text{font:11px system-ui,sans-serif;fill:#1f2328}svg .frame{fill:none;stroke:#8c959f}
svg .grid{stroke:#d0d7de;stroke-width:.6;fill:none}svg .mtick{stroke:#8c959f;stroke-width:.6;fill:none}
svg .yl{text-anchor:end}svg .xl{text-anchor:middle}svg .axis{font-weight:600;text-anchor:middle}
svg .win{fill:#fb8f44;fill-opacity:.22}svg .cyc{fill:#1a7f37;fill-opacity:.45}
svg .sow{stroke:#0969da;stroke-width:1.2;stroke-dasharray:4 3}svg .till{stroke:#cf222e;stroke-width:1.8}
svg .cell{stroke:#57606a;stroke-width:.6}svg .cell.border{stroke-dasharray:2 2}svg .ctr{stroke:#1f2328;stroke-width:3.2;stroke-linecap:round;fill:none}
svg .scale{stroke:#1f2328;stroke-width:2}svg .lbl{font-size:10px}
ul.reasons{margin:4px 0;padding-left:18px;font-size:13px}`

const sortScript = `document.querySelectorAll("table.sortable").forEach(function(t){
var hs=t.tHead.rows[0].cells;Array.prototype.forEach.call(hs,function(h,i){h.addEventListener("click",function(){
var asc=h.getAttribute("aria-sort")!=="ascending";Array.prototype.forEach.call(hs,function(o){o.removeAttribute("aria-sort")});
h.setAttribute("aria-sort",asc?"ascending":"descending");var b=t.tBodies[0];var rows=Array.prototype.slice.call(b.rows);
rows.sort(function(a,c){var x=a.cells[i].getAttribute("data-v")||a.cells[i].textContent,y=c.cells[i].getAttribute("data-v")||c.cells[i].textContent;
var nx=parseFloat(x),ny=parseFloat(y);var r=(!isNaN(nx)&&!isNaN(ny))?nx-ny:x.localeCompare(y);return asc?r:-r});
rows.forEach(function(r){b.appendChild(r)})})})});`

func writeHead(w io.Writer, o Options, run []export.Manifest, inds []export.IndicatorRow) {
	fmt.Fprintf(w, "<!DOCTYPE html>\n<html lang=\"pt-BR\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">"+
		"<title>%s</title><style>%s</style></head><body><header><h1>%s</h1>", html.EscapeString(o.Title), style, html.EscapeString(o.Title))
	counts := map[string]int{}
	for _, r := range inds {
		counts[r.Status]++
	}
	fmt.Fprintf(w, `<p class="muted">%d talhões: %d ok, %d partial, %d failed.`, len(inds), counts[export.StatusOK], counts[export.StatusPartial], counts[export.StatusFailed])
	if len(run) > 0 {
		p := run[0].Parameters
		fmt.Fprintf(w, ` manejo %s · season %s · as of %s · archive %s`, html.EscapeString(run[0].Version),
			html.EscapeString(p["season"]), html.EscapeString(p["as-of"]), html.EscapeString(p["catalog"]))
		var skipped int64
		for _, r := range run {
			for _, v := range r.Skipped {
				skipped += v
			}
		}
		fmt.Fprintf(w, ` · %d scenes or cells skipped (see run.json)`, skipped)
	}
	fmt.Fprint(w, `</p><p class="muted">T: full years without soil revolving (Tabela 1, Portaria 349 item 6.8). C: straw cover in the 30 days before sowing, mean of the three agricultural years before the contract year (Portaria 349 items 6.7–6.7.2). Slope ≥ 3 % makes contour planting mandatory (IN 2/2025 item 3.2.1 I). A missing indicator is shown as missing, with its reason (IN 2.2).</p></header><main>`)
}

func level(l *int32) string {
	if l == nil {
		return `<span class="lv lv0" title="not decided">–</span>`
	}
	return fmt.Sprintf(`<span class="lv lv%d">%d</span>`, *l, *l)
}

func f1(v *float64, unit string) string {
	if v == nil || math.IsNaN(*v) {
		return "–"
	}
	return fmt.Sprintf("%.1f%s", *v, unit)
}

func dataV(v *float64) string {
	if v == nil || math.IsNaN(*v) {
		return "-1e9"
	}
	return fmt.Sprintf("%g", *v)
}

func tText(r export.IndicatorRow) (string, string) {
	switch {
	case r.TYears != nil:
		return fmt.Sprintf("%.0f y", *r.TYears), fmt.Sprintf("%g", *r.TYears)
	case r.TYearsMin != nil:
		return fmt.Sprintf("≥ %.0f y (censored)", *r.TYearsMin), fmt.Sprintf("%g", *r.TYearsMin)
	}
	return "–", "-1e9"
}

func writeSummary(w io.Writer, inds []export.IndicatorRow, levels map[string]*export.ClassificationRow) {
	withNM := len(levels) > 0
	fmt.Fprint(w, `<h2 id="summary">Summary</h2><table class="sortable" id="summary-table"><thead><tr>`+
		`<th>talhão</th>`)
	if withNM {
		fmt.Fprint(w, `<th title="management level preview (manejo classify)">NM</th>`)
	}
	fmt.Fprint(w, `<th>area (ha)</th><th>cell (ha)</th><th>cells</th><th>sensors</th><th>T</th><th>T level</th>`+
		`<th>C (%)</th><th>C level</th><th>C per season (%)</th><th>slope (%)</th><th>contour required</th><th>status</th><th>reasons</th></tr></thead><tbody>`)
	for _, r := range inds {
		tt, tv := tText(r)
		var per []string
		for _, v := range []*float64{r.CSeason1Pct, r.CSeason2Pct, r.CSeason3Pct} {
			per = append(per, f1(v, ""))
		}
		contour := "–"
		if r.ContourRequired != nil {
			contour = "no"
			if *r.ContourRequired {
				contour = "yes"
			}
		}
		tl, cl := "0", "0"
		if r.TLevel != nil {
			tl = fmt.Sprint(*r.TLevel)
		}
		if r.CLevel != nil {
			cl = fmt.Sprint(*r.CLevel)
		}
		fmt.Fprintf(w, `<tr><td><a href="#f-%s">%s</a></td>`, anchor(r.FieldID), html.EscapeString(r.FieldID))
		if withNM {
			fmt.Fprint(w, nmCell(levels[r.FieldID]))
		}
		fmt.Fprintf(w, `<td class="num">%.1f</td><td class="num">%.1f</td><td class="num">%d</td><td>%s</td>`+
			`<td class="num" data-v="%s">%s</td><td data-v="%s">%s</td><td class="num" data-v="%s">%s</td><td data-v="%s">%s</td><td>%s</td>`+
			`<td class="num" data-v="%s">%s</td><td>%s</td><td class="st-%s">%s</td><td>%s</td></tr>`,
			r.AreaHa, r.CellSizeHa, r.NCells, html.EscapeString(strings.Join(r.Sensors, ", ")),
			tv, tt, tl, level(r.TLevel), dataV(r.CPct), cText(r), cl, level(r.CLevel), strings.Join(per, " · "),
			dataV(r.SlopeMeanPct), f1(r.SlopeMeanPct, ""), contour, r.Status, r.Status, html.EscapeString(strings.Join(r.Reasons, "; ")))
	}
	fmt.Fprint(w, `</tbody></table>`)
}

// cText is C with its 90 % interval, marked when the interval crosses a
// Tabela 1 limit (the level could be a neighbouring one).
func cText(r export.IndicatorRow) string {
	s := f1(r.CPct, "")
	if r.CPct == nil || r.CPctLo == nil || r.CPctHi == nil {
		return s
	}
	s += fmt.Sprintf(` <span class="ci">(90 %%: %.0f–%.0f)</span>`, *r.CPctLo, *r.CPctHi)
	if r.CLevelUncertain != nil && *r.CLevelUncertain {
		s += ` <span class="warn" title="the 90 % interval crosses a Tabela 1 limit (30/60/90 %): the level could be a neighbouring one">level uncertain</span>`
	}
	return s
}

// anchor makes an HTML id fragment from a talhão id.
func anchor(id string) string {
	var b strings.Builder
	for _, r := range id {
		if r < 128 && (r == '-' || r == '_' || r == '.' || (r >= '0' && r <= '9') || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z')) {
			b.WriteRune(r)
		} else {
			fmt.Fprintf(&b, "_%x", r)
		}
	}
	return b.String()
}

// nmCell is the summary-table cell of a talhão's level preview.
func nmCell(c *export.ClassificationRow) string {
	switch {
	case c == nil:
		return `<td data-v="0">–</td>`
	case c.Level == nil:
		return fmt.Sprintf(`<td data-v="0" title="%s">not classifiable</td>`, html.EscapeString(c.Reason))
	}
	return fmt.Sprintf(`<td data-v="%d" title="decided by %s">NM%d</td>`, *c.Level, html.EscapeString(c.DecidingRule), *c.Level)
}

// writeClassification explains a talhão's level preview: indicators, the
// rules that fired with the level before and after, the deciding rule.
func writeClassification(w io.Writer, c *export.ClassificationRow) {
	if c == nil {
		return
	}
	if c.Level == nil {
		fmt.Fprintf(w, `<p><b>Management level:</b> %s</p>`, html.EscapeString(c.LevelReason()))
	} else {
		mi := "–"
		if c.Mi != nil {
			mi = fmt.Sprintf("%.2f", *c.Mi)
		}
		fmt.Fprintf(w, `<p><b>Management level preview: NM%d</b> (Mi %s; decided by %s)</p>`, *c.Level, mi, html.EscapeString(c.DecidingRule))
	}
	fmt.Fprint(w, `<table class="facts"><tr>`)
	for _, ind := range []struct {
		name string
		lv   *int32
	}{{"V%", c.VLevel}, {"Ca", c.CaLevel}, {"m%", c.MLevel}, {"T", c.TLevel}, {"C", c.CLevel}, {"D", c.DLevel}} {
		fmt.Fprintf(w, `<td>%s %s</td>`, ind.name, level(ind.lv))
	}
	fmt.Fprint(w, `</tr></table>`)
	if len(c.Rules) > 0 || len(c.Missing) > 0 {
		fmt.Fprint(w, `<ul class="reasons">`)
		for _, r := range c.Rules {
			fmt.Fprintf(w, "<li>%s</li>", html.EscapeString(r))
		}
		if len(c.Missing) > 0 {
			fmt.Fprintf(w, "<li>missing (IN 2.2): %s</li>", html.EscapeString(strings.Join(c.Missing, ", ")))
		}
		fmt.Fprint(w, `</ul>`)
	}
}

func writeSection(w io.Writer, r export.IndicatorRow, fd *fieldData, obs []export.ObsRow, class *export.ClassificationRow) {
	fmt.Fprintf(w, `<section class="field" id="f-%s"><h2>%s <span class="muted">%s · %.1f ha · %d cells of %.1f ha · <span class="st-%s">%s</span></span></h2>`,
		anchor(r.FieldID), html.EscapeString(r.FieldID), html.EscapeString(r.Crop), r.AreaHa, r.NCells, r.CellSizeHa, r.Status, r.Status)
	if len(r.Reasons) > 0 {
		fmt.Fprint(w, `<ul class="reasons">`)
		for _, s := range r.Reasons {
			fmt.Fprintf(w, "<li>%s</li>", html.EscapeString(s))
		}
		fmt.Fprint(w, `</ul>`)
	}
	writeClassification(w, class)
	fmt.Fprint(w, `<div class="figs">`)
	writeSeries(w, obs, fieldMarks(fd))
	fmt.Fprint(w, `<div>`, mapSVG(mapCells(fd)), `<table class="facts">`)
	writeFacts(w, r, fd.seasons)
	writeEvents(w, fd.events, r.NCells)
	fmt.Fprint(w, `</table></div></div></section>`)
}

// writeSeries draws the quartiles over cells per date of NDVI and NDTI,
// clear observations only, with the marks over them.
func writeSeries(w io.Writer, obs []export.ObsRow, m marks) {
	ndvi, ndti := map[time.Time][]float64{}, map[time.Time][]float64{}
	var t0, t1 time.Time
	for _, ob := range obs {
		d := ob.Date.Time()
		if ob.NDVI != nil {
			ndvi[d] = append(ndvi[d], float64(*ob.NDVI))
		}
		if ob.NDTI != nil {
			ndti[d] = append(ndti[d], float64(*ob.NDTI))
		}
		if t0.IsZero() || d.Before(t0) {
			t0 = d
		}
		if d.After(t1) {
			t1 = d
		}
	}
	if t0.IsZero() {
		fmt.Fprint(w, `<p class="muted">No observations.</p>`)
		return
	}
	fmt.Fprint(w, seriesSVG(quantiles(ndvi), quantiles(ndti), timeAxis{t0.AddDate(0, 0, -5), t1.AddDate(0, 0, 5)}, m))
}

// fieldMarks are the events, sowings, pre-sowing windows and cycles of a
// talhão, to draw over its series.
func fieldMarks(fd *fieldData) marks {
	var m marks
	for _, e := range fd.events {
		m.events = append(m.events, e.Date.Time())
	}
	for _, s := range fd.seasons {
		if s.SowingDate == nil {
			continue
		}
		m.sowings = append(m.sowings, s.SowingDate.Time())
		if s.WindowStart != nil && s.WindowEnd != nil {
			m.windows = append(m.windows, [2]time.Time{s.WindowStart.Time(), s.WindowEnd.Time()})
			c := math.NaN()
			if s.CoverPct != nil {
				c = *s.CoverPct
			}
			m.covers = append(m.covers, c)
		}
	}
	for _, c := range fd.cycles {
		m.cycles = append(m.cycles, cycleMark{c.StartDate.Time(), c.EndDate.Time(), c.Kind})
	}
	return m
}

// mapCells are the cells of a talhão coloured by their own pre-sowing straw
// cover as the run computed it (cell_cover.parquet), averaged over the
// seasons in which the cell had a reading.
func mapCells(fd *fieldData) []mapCell {
	type acc struct {
		sum float64
		n   int
	}
	covers := map[string]acc{}
	for _, c := range fd.covers {
		if c.CoverPct != nil {
			a := covers[c.CellID]
			a.sum += *c.CoverPct
			a.n++
			covers[c.CellID] = a
		}
	}
	var mc []mapCell
	for _, c := range fd.cells {
		g, err := wkb.Unmarshal(c.Geometry)
		if err != nil {
			continue
		}
		poly, ok := g.(orb.Polygon)
		if !ok {
			if mp, isMP := g.(orb.MultiPolygon); isMP && len(mp) > 0 {
				poly = mp[0]
			} else {
				continue
			}
		}
		cover := math.NaN()
		if a := covers[c.CellID]; a.n > 0 {
			cover = a.sum / float64(a.n)
		}
		mc = append(mc, mapCell{id: c.CellID, poly: poly, centre: orb.Point{c.CentreLon, c.CentreLat}, cover: cover, border: c.Border})
	}
	return mc
}

// writeFacts writes the rows of a talhão's facts table: T, C, slope,
// contour, and each season.
func writeFacts(w io.Writer, r export.IndicatorRow, seasons []export.SeasonRow) {
	tt, _ := tText(r)
	fmt.Fprintf(w, `<tr><td>T</td><td>%s %s</td></tr><tr><td>C</td><td>%s %s</td></tr>`, tt, level(r.TLevel), f1(r.CPct, " %"), level(r.CLevel))
	fmt.Fprintf(w, `<tr><td>slope</td><td>mean %s · median %s · p90 %s</td></tr>`, f1(r.SlopeMeanPct, " %"), f1(r.SlopeMedianPct, " %"), f1(r.SlopeP90Pct, " %"))
	if r.ContourRequired != nil {
		contour := "not required"
		if *r.ContourRequired {
			contour = "required"
		}
		fmt.Fprintf(w, `<tr><td>contour</td><td>%s (IN 3.2.1 I: slope ≥ 3 %%)</td></tr>`, contour)
	}
	for _, s := range seasons {
		sow := "no sowing found"
		if s.SowingDate != nil {
			sow = fmt.Sprintf("sown %s (%s)", s.SowingDate, deref(s.SowingSource))
		}
		fmt.Fprintf(w, `<tr><td>%s</td><td>%s · C %s · %d cells, %d readings</td></tr>`, html.EscapeString(s.Season), sow, f1(s.CoverPct, " %"), s.NCells, s.NObs)
	}
}

func writeFoot(w io.Writer, o Options) {
	fmt.Fprint(w, `</main><footer><p class="muted">Written by manejo`)
	if !o.Generated.IsZero() {
		fmt.Fprintf(w, ` on %s`, o.Generated.UTC().Format("2006-01-02 15:04 UTC"))
	}
	fmt.Fprintf(w, `. Self-contained: no network requests.</p></footer><script>%s</script></body></html>`+"\n", sortScript)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
