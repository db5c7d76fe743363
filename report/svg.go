package report

import (
	"fmt"
	"html"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/paulmach/orb"

	"github.com/manejo/manejo/internal/num"
)

// Plot geometry, in SVG user units (pixels at 100 %).
const (
	plotW, panelH      = 760, 170
	padL, padR         = 52, 16
	padT, padB, panelG = 22, 34, 26
)

// timeAxis maps dates to x positions.
type timeAxis struct {
	t0, t1 time.Time
}

func (a timeAxis) x(t time.Time) float64 {
	span := a.t1.Sub(a.t0).Hours()
	if span <= 0 {
		return padL
	}
	return padL + (plotW-padL-padR)*t.Sub(a.t0).Hours()/span
}

// ticks returns the year (major) and month (minor) ticks of the axis.
func (a timeAxis) ticks() (major, minor []time.Time) {
	for d := time.Date(a.t0.Year(), a.t0.Month(), 1, 0, 0, 0, 0, time.UTC); !d.After(a.t1); d = d.AddDate(0, 1, 0) {
		if d.Before(a.t0) {
			continue
		}
		if d.Month() == time.January {
			major = append(major, d)
		} else {
			minor = append(minor, d)
		}
	}
	return major, minor
}

// dayStats is the distribution over cells of one index on one date.
type dayStats struct {
	date        time.Time
	q1, med, q3 float64
	n           int
}

// quantiles returns per-date quartiles of the values, dates sorted.
func quantiles(byDate map[time.Time][]float64) []dayStats {
	out := make([]dayStats, 0, len(byDate))
	for d, v := range byDate {
		if len(v) == 0 {
			continue
		}
		out = append(out, dayStats{date: d, q1: num.Quantile(v, 0.25), med: num.Quantile(v, 0.5), q3: num.Quantile(v, 0.75), n: len(v)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].date.Before(out[j].date) })
	return out
}

// marks are the dated facts drawn over the series.
type marks struct {
	events  []time.Time    // tillage events
	sowings []time.Time    // sowing dates of the main crop
	windows [][2]time.Time // pre-sowing windows [start, end]
	covers  []float64      // straw cover of each window, NaN when missing
	cycles  []cycleMark    // crop cycles
}

type cycleMark struct {
	start, end time.Time
	label      string
}

// seriesSVG draws the NDVI and NDTI panels of one talhão.
func seriesSVG(ndvi, ndti []dayStats, ax timeAxis, m marks) string {
	var b strings.Builder
	h := padT + 2*panelH + panelG + padB
	fmt.Fprintf(&b, `<svg class="ts" viewBox="0 0 %d %d" width="%d" height="%d" role="img" aria-label="NDVI and NDTI over time">`, plotW, h, plotW, h)
	for _, p := range []panel{
		{"NDVI", ndvi, padT, -0.1, 1.0, "#1a7f37"},
		{"NDTI", ndti, padT + panelH + panelG, -0.1, 0.5, "#8a5a00"},
	} {
		p.draw(&b, ax, m)
	}
	// Legend.
	ly := float64(h - 8)
	fmt.Fprintf(&b, `<g class="legend" transform="translate(%d %.0f)">`+
		`<line x1="0" x2="16" y1="-4" y2="-4" class="till"/><text x="20" y="0">tillage event</text>`+
		`<line x1="120" x2="136" y1="-4" y2="-4" class="sow"/><text x="140" y="0">sowing</text>`+
		`<rect x="200" y="-9" width="16" height="9" class="win"/><text x="220" y="0">30-day pre-sowing window</text>`+
		`<rect x="390" y="-8" width="16" height="6" class="cyc"/><text x="410" y="0">crop cycle</text></g>`, padL, ly)
	b.WriteString(`</svg>`)
	return b.String()
}

// panel is one index's plot: its name, data, top edge, value range and
// colour.
type panel struct {
	name   string
	stats  []dayStats
	y0     float64
	lo, hi float64
	color  string
}

// y maps a value to its y position, clamped to the panel.
func (p panel) y(v float64) float64 {
	v = math.Max(p.lo, math.Min(p.hi, v))
	return p.y0 + panelH*(p.hi-v)/(p.hi-p.lo)
}

// draw writes the panel: windows or cycles under the data, gridlines and
// labels, the IQR band and median line, then sowings and events across.
func (p panel) draw(b *strings.Builder, ax timeAxis, m marks) {
	fmt.Fprintf(b, `<rect x="%d" y="%.0f" width="%d" height="%d" class="frame"/>`, padL, p.y0, plotW-padL-padR, panelH)
	if p.name == "NDTI" {
		p.drawWindows(b, ax, m)
	} else {
		p.drawCycles(b, ax, m)
	}
	p.drawGrid(b, ax)
	p.drawData(b, ax)
	// Sowing dates and tillage events across the panel.
	for _, s := range m.sowings {
		fmt.Fprintf(b, `<line x1="%.1f" x2="%.1f" y1="%.0f" y2="%.0f" class="sow"><title>sowing %s</title></line>`, ax.x(s), ax.x(s), p.y0, p.y0+panelH, s.Format(time.DateOnly))
	}
	for _, e := range m.events {
		fmt.Fprintf(b, `<line x1="%.1f" x2="%.1f" y1="%.0f" y2="%.0f" class="till"><title>soil revolving %s</title></line>`, ax.x(e), ax.x(e), p.y0, p.y0+panelH, e.Format(time.DateOnly))
	}
}

// drawWindows shades the pre-sowing windows with their straw cover.
func (p panel) drawWindows(b *strings.Builder, ax timeAxis, m marks) {
	for i, w := range m.windows {
		x0, x1 := ax.x(w[0]), ax.x(w[1].AddDate(0, 0, 1))
		fmt.Fprintf(b, `<rect x="%.1f" y="%.0f" width="%.1f" height="%d" class="win"><title>pre-sowing window %s – %s</title></rect>`,
			x0, p.y0, math.Max(1, x1-x0), panelH, w[0].Format(time.DateOnly), w[1].Format(time.DateOnly))
		if i < len(m.covers) && !math.IsNaN(m.covers[i]) {
			fmt.Fprintf(b, `<text x="%.1f" y="%.0f" class="lbl">C %.0f%%</text>`, x0, p.y0+12, m.covers[i])
		}
	}
}

// drawCycles marks the crop cycles along the top of the panel.
func (p panel) drawCycles(b *strings.Builder, ax timeAxis, m marks) {
	for _, c := range m.cycles {
		x0, x1 := ax.x(c.start), ax.x(c.end)
		fmt.Fprintf(b, `<rect x="%.1f" y="%.0f" width="%.1f" height="6" class="cyc"><title>%s: %s – %s</title></rect>`,
			x0, p.y0+2, math.Max(1, x1-x0), html.EscapeString(c.label), c.start.Format(time.DateOnly), c.end.Format(time.DateOnly))
	}
}

// drawGrid writes the gridlines, ticks and axis labels. Gridlines and ticks
// are one path each: thousands of talhões make every element count.
func (p panel) drawGrid(b *strings.Builder, ax timeAxis) {
	major, minor := ax.ticks()
	step := 0.2
	if p.hi-p.lo < 1 {
		step = 0.1
	}
	var grid, ticks strings.Builder
	for v := math.Ceil(p.lo/step) * step; v <= p.hi+1e-9; v += step {
		fmt.Fprintf(&grid, "M%d %.0fH%d", padL, p.y(v), plotW-padR)
		fmt.Fprintf(b, `<text x="%d" y="%.0f" class="yl">%.1f</text>`, padL-4, p.y(v)+3, v)
	}
	for _, t := range minor {
		fmt.Fprintf(&ticks, "M%.0f %.0fv3", ax.x(t), p.y0+panelH)
	}
	for _, t := range major {
		fmt.Fprintf(&grid, "M%.0f %.0fv%d", ax.x(t), p.y0, panelH)
		fmt.Fprintf(b, `<text x="%.0f" y="%.0f" class="xl">%d</text>`, ax.x(t), p.y0+panelH+14, t.Year())
	}
	fmt.Fprintf(b, `<path d="%s" class="grid"/><path d="%s" class="mtick"/>`, grid.String(), ticks.String())
	fmt.Fprintf(b, `<text x="14" y="%.0f" class="axis" transform="rotate(-90 14 %.0f)">%s (median, IQR)</text>`, p.y0+panelH/2+40, p.y0+panelH/2+40, p.name)
}

// drawData writes the IQR band and the median line.
func (p panel) drawData(b *strings.Builder, ax timeAxis) {
	if len(p.stats) == 0 {
		fmt.Fprintf(b, `<text x="%d" y="%.0f" class="lbl">no clear observation</text>`, padL+10, p.y0+panelH/2)
		return
	}
	var band strings.Builder
	for _, s := range p.stats {
		fmt.Fprintf(&band, "%.0f,%.0f ", ax.x(s.date), p.y(s.q3))
	}
	for i := len(p.stats) - 1; i >= 0; i-- {
		s := p.stats[i]
		fmt.Fprintf(&band, "%.0f,%.0f ", ax.x(s.date), p.y(s.q1))
	}
	fmt.Fprintf(b, `<polygon points="%s" fill="%s" fill-opacity="0.2" stroke="none"/>`, strings.TrimSpace(band.String()), p.color)
	var line strings.Builder
	for _, s := range p.stats {
		fmt.Fprintf(&line, "%.0f,%.0f ", ax.x(s.date), p.y(s.med))
	}
	fmt.Fprintf(b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="1.4"/>`, strings.TrimSpace(line.String()), p.color)
}

// strawColor maps a straw cover in percent to a colour from bare soil
// (reddish brown) to full straw (pale yellow).
func strawColor(pct float64) string {
	if math.IsNaN(pct) {
		return "#cccccc"
	}
	t := math.Max(0, math.Min(1, pct/100))
	lerp := func(a, b float64) int { return int(math.Round(a + (b-a)*t)) }
	return fmt.Sprintf("#%02x%02x%02x", lerp(0x8c, 0xf2), lerp(0x3b, 0xe2), lerp(0x1e, 0x9a))
}

// mapSVG draws the cells of one talhão coloured by straw cover, with a
// legend and a scale bar. Cells are in lon/lat, drawn in a local
// equirectangular projection (metres) centred on the talhão.
func mapSVG(cells []mapCell) string {
	const W, H, pad = 360, 300, 12
	var b strings.Builder
	if len(cells) == 0 {
		return `<p class="muted">no cells</p>`
	}
	bound := cells[0].poly.Bound()
	for _, c := range cells[1:] {
		bound = bound.Union(c.poly.Bound())
	}
	lat0 := (bound.Min[1] + bound.Max[1]) / 2
	mx := 111320 * math.Cos(lat0*math.Pi/180) // metres per degree of longitude
	my := 110574.0                            // metres per degree of latitude
	wM, hM := (bound.Max[0]-bound.Min[0])*mx, (bound.Max[1]-bound.Min[1])*my
	scale := math.Min(float64(W-2*pad)/math.Max(wM, 1), float64(H-2*pad-30)/math.Max(hM, 1)) // px per metre
	px := func(p orb.Point) (float64, float64) {
		return pad + (p[0]-bound.Min[0])*mx*scale, pad + (bound.Max[1]-p[1])*my*scale
	}
	var centres strings.Builder
	fmt.Fprintf(&b, `<svg class="map" viewBox="0 0 %d %d" width="%d" height="%d" role="img" aria-label="cells coloured by straw cover">`, W, H, W, H)
	for _, c := range cells {
		var d strings.Builder
		for _, ring := range c.poly {
			for i, p := range ring {
				x, y := px(p)
				if i == 0 {
					fmt.Fprintf(&d, "M%.1f %.1f", x, y)
				} else {
					fmt.Fprintf(&d, "L%.1f %.1f", x, y)
				}
			}
			d.WriteString("Z")
		}
		label := "no reading"
		if !math.IsNaN(c.cover) {
			label = fmt.Sprintf("%.0f %% straw", c.cover)
		}
		cls := "cell"
		if c.border {
			cls = "cell border"
		}
		fmt.Fprintf(&b, `<path d="%s" fill="%s" class="%s" fill-rule="evenodd"><title>%s: %s</title></path>`, d.String(), strawColor(c.cover), cls, html.EscapeString(c.id), label)
		x, y := px(c.centre)
		fmt.Fprintf(&centres, "M%.1f %.1fh0", x, y)
	}
	// Sampling points (cell centres) as round dots of one path.
	fmt.Fprintf(&b, `<path d="%s" class="ctr"/>`, centres.String())
	// Scale bar: a round length near a quarter of the width.
	target := wM / 4
	bar := math.Pow(10, math.Floor(math.Log10(math.Max(target, 1))))
	for _, k := range []float64{5, 2, 1} {
		if k*bar <= target {
			bar *= k
			break
		}
	}
	barPx := bar * scale
	y := float64(H - 14)
	fmt.Fprintf(&b, `<line x1="%d" x2="%.1f" y1="%.0f" y2="%.0f" class="scale"/><text x="%d" y="%.0f" class="lbl">%s</text>`,
		pad, pad+barPx, y, y, pad, y-4, formatMetres(bar))
	// Legend: a gradient from 0 to 100 %.
	lx := float64(W - pad - 132)
	for i := 0; i <= 10; i++ {
		fmt.Fprintf(&b, `<rect x="%.0f" y="%.0f" width="12" height="10" fill="%s"/>`, lx+float64(i)*12, y-10, strawColor(float64(i*10)))
	}
	fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" class="lbl">0 %%</text><text x="%.0f" y="%.0f" class="lbl" text-anchor="end">100 %% straw</text>`, lx, y+10, lx+132, y+10)
	b.WriteString(`</svg>`)
	return b.String()
}

func formatMetres(m float64) string {
	if m >= 1000 {
		return fmt.Sprintf("%g km", m/1000)
	}
	return fmt.Sprintf("%g m", m)
}

// mapCell is one cell on the map.
type mapCell struct {
	id     string
	poly   orb.Polygon
	centre orb.Point
	cover  float64 // mean straw cover over the assessed seasons, NaN when none
	border bool
}
