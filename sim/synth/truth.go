package synth

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/manejo/manejo/internal/num"
	"github.com/manejo/manejo/sim/pheno"
	"github.com/manejo/manejo/zarc"
	"github.com/paulmach/orb"
)

const dateLayout = "2006-01-02"

func day(t time.Time) time.Time {
	y, m, d := t.UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// Day is a calendar date, written "2006-01-02" in JSON.
type Day struct{ time.Time }

// MarshalJSON writes the date as "2006-01-02".
func (d Day) MarshalJSON() ([]byte, error) {
	return []byte(`"` + d.Format(dateLayout) + `"`), nil
}

// UnmarshalJSON reads a "2006-01-02" date.
func (d *Day) UnmarshalJSON(b []byte) error {
	s, err := strconv.Unquote(string(b))
	if err != nil {
		return fmt.Errorf("parse date %s: %w", b, err)
	}
	t, err := time.Parse(dateLayout, s)
	if err != nil {
		return fmt.Errorf("parse date %q: %w", s, err)
	}
	d.Time = t
	return nil
}

func dayp(t time.Time) *Day { return &Day{t} }

// seasonName names the agricultural year starting in July of y: "2023/2024".
func seasonName(y int) string { return fmt.Sprintf("%d/%d", y, y+1) }

// seasonStartYear parses "2026/2027" into 2026.
func seasonStartYear(s string) (int, error) {
	a, b, ok := strings.Cut(s, "/")
	y0, err0 := strconv.Atoi(a)
	y1, err1 := strconv.Atoi(b)
	if !ok || err0 != nil || err1 != nil || y1 != y0+1 {
		return 0, fmt.Errorf("season %q: want YYYY/YYYY+1", s)
	}
	return y0, nil
}

// Truth is the ground truth of an archive, written to truth.json.
type Truth struct {
	Seed        int64        `json:"seed"`
	Collection  string       `json:"collection"`
	EPSG        int          `json:"epsg"`
	MGRS        string       `json:"mgrs_tile"`
	Start       Day          `json:"start"`
	End         Day          `json:"end"`
	RevisitDays int          `json:"revisit_days"`
	AsOf        Day          `json:"as_of"`           // reference date of T
	Contract    string       `json:"contract_season"` // e.g. "2026/2027"
	Assessed    []string     `json:"assessed_seasons"`
	Scene       SceneTruth   `json:"scene"`
	Tiles       []SceneTruth `json:"tiles,omitempty"` // every scene of a mosaic (Options.Tiles > 1), Scene the first
	Items       []ItemTruth  `json:"items"`
	Fields      []FieldTruth `json:"fields"`
}

// SceneTruth is the extent of the 10 m grid.
type SceneTruth struct {
	SizePx  int        `json:"size_px"`  // 10 m pixels per side (20 m bands: half)
	PixelM  float64    `json:"pixel_m"`  // 10
	OriginX float64    `json:"origin_x"` // UTM easting of the north-west corner
	OriginY float64    `json:"origin_y"` // UTM northing of the north-west corner
	BBox    [4]float64 `json:"bbox"`     // lon/lat: west, south, east, north
}

// ItemTruth is what each STAC item is, radiometrically.
type ItemTruth struct {
	ID                string  `json:"id"`
	Date              Day     `json:"date"`
	Baseline          string  `json:"processing_baseline"`
	BOAOffsetApplied  bool    `json:"boa_offset_applied"`  // data hold DN = reflectance·10⁴
	RasterBandsOffset bool    `json:"raster_bands_offset"` // raster:bands scale 1e-4, offset −0.1
	DNOffset          int     `json:"dn_offset"`           // reflectance = (DN − DNOffset)/10⁴
	CloudCover        float64 `json:"cloud_cover"`         // eo:cloud_cover, %
	NodataPct         float64 `json:"nodata_pct"`          // % of the scene outside the swath
}

// FieldTruth is the truth of one talhão.
type FieldTruth struct {
	ID              string          `json:"id"`
	Crop            string          `json:"crop"` // talhão property: soja or milho
	Shape           string          `json:"shape"`
	Design          string          `json:"design"`
	AreaHa          float64         `json:"area_ha"` // geodesic (UTM area / k²)
	Pixels          int             `json:"pixels"`  // 10 m pixels with their centre inside
	PlantioContorno *int            `json:"plantio_contorno,omitempty"`
	Terraceamento   *int            `json:"terraceamento,omitempty"`
	Cycles          []CycleTruth    `json:"cycles"`
	Tillage         []TillageTruth  `json:"tillage"`  // whole-talhão operations: events
	Headland        []HeadlandTruth `json:"headland"` // strip-only operations: not events (IN 2.3)
	Seasons         []SeasonTruth   `json:"seasons"`
	C               CTruth          `json:"c"`
	T               TTruth          `json:"t"`
	Slope           SlopeTruth      `json:"slope"`
	MODIS           MODISTruth      `json:"modis"`
	Clouds          CloudTruth      `json:"clouds"`
}

// CycleTruth is one crop, cover or weed cycle (pheno.Cycle).
type CycleTruth struct {
	Crop      string `json:"crop"` // soja, milho, milho-2a, cobertura, pousio
	Main      bool   `json:"main"`
	Season    string `json:"season"` // agricultural year of the sowing
	Sowing    Day    `json:"sowing"`
	Emergence Day    `json:"emergence"`
	Peak      Day    `json:"peak"`
	Senesce   Day    `json:"senesce"`
	Harvest   Day    `json:"harvest"`
}

// TillageTruth is one soil-revolving operation.
type TillageTruth struct {
	Date      Day     `json:"date"`
	Kind      string  `json:"kind"`      // ARAÇÃO, GRADAGEM, ...
	Retention float64 `json:"retention"` // share of ground straw left, 0..1
}

// HeadlandTruth is an operation on a strip along one edge only.
type HeadlandTruth struct {
	TillageTruth
	Edge    string  `json:"edge"`
	WidthM  float64 `json:"width_m"`
	AreaPct float64 `json:"area_pct"` // share of the talhão's pixels
}

// SeasonTruth is the main crop of one agricultural year and the straw
// cover in the 30 days before its sowing.
type SeasonTruth struct {
	Season      string  `json:"season"`
	MainCrop    string  `json:"main_crop"`
	Sowing      Day     `json:"sowing"`
	WindowStart Day     `json:"window_start"` // sowing − 30 days; the window is [start, sowing)
	StrawPct    float64 `json:"straw_pct"`    // pheno StrawPct over the window
	InArchive   bool    `json:"in_archive"`   // the whole window lies in [Start, End]
	Assessed    bool    `json:"assessed"`     // one of the three seasons C averages
	Declared    bool    `json:"declared"`     // written to sowing.csv
}

// CTruth is indicator C (Portaria 349/2026, 6.7).
type CTruth struct {
	Value   *float64 `json:"value"` // mean straw %, nil when a season is missing
	Level   *int     `json:"level"` // Tabela 1
	Seasons []string `json:"seasons"`
	Reason  string   `json:"reason,omitempty"`
}

// TTruth is indicator T at AsOf.
type TTruth struct {
	AsOf      Day  `json:"as_of"`
	LastEvent *Day `json:"last_event"` // nil when no talhão event in the archive
	Years     *int `json:"years"`      // full years, anniversary-based; nil when censored
	Censored  bool `json:"censored"`
	YearsMin  int  `json:"years_min"` // full years from Start to AsOf when censored
	Level     *int `json:"level"`     // nil when the censored bound does not decide it
}

// SlopeTruth is the analytic mean slope of the talhão.
type SlopeTruth struct {
	MeanPct         float64 `json:"mean_pct"`
	ContourRequired bool    `json:"contour_required"` // ≥ 3 % (IN 3.2.1 I)
}

// MODISTruth counts the MODIS 250 m pixels (sinusoidal grid) wholly inside
// the talhão: an upper bound of the eligible points a grid can have.
type MODISTruth struct {
	WholePixels int  `json:"whole_pixels"`
	Required    int  `json:"required"` // ⌈area / 10 ha⌉
	Eligible    bool `json:"eligible"` // area > 100 ha and whole_pixels ≥ required
}

// CloudTruth summarizes what the atmosphere did to the talhão. Per-item
// arrays follow Truth.Items.
type CloudTruth struct {
	LossPct      float64   `json:"loss_pct"`      // pixel-observations masked by SCL or without data, %
	ResiduePct   float64   `json:"residue_pct"`   // unflagged contaminated share of the unmasked ones, %
	CloudyDates  []Day     `json:"cloudy_dates"`  // ≥ 50 % of the pixels masked or without data
	ResidueDates []Day     `json:"residue_dates"` // ≥ 5 % of the pixels contaminated and unflagged
	MaskedPct    []float64 `json:"masked_pct"`
	NodataPct    []float64 `json:"nodata_pct"`
	ResidueByPct []float64 `json:"residue_by_item_pct"`
}

// ReadTruth reads a truth.json written by Generate.
func ReadTruth(name string) (Truth, error) {
	b, err := os.ReadFile(name)
	if err != nil {
		return Truth{}, fmt.Errorf("read truth: %w", err)
	}
	var t Truth
	if err := json.Unmarshal(b, &t); err != nil {
		return Truth{}, fmt.Errorf("parse %s: %w", name, err)
	}
	return t, nil
}

// FullYears returns the whole years from a to b, anniversary-based (0 when b
// is before a's first anniversary). It is written apart from
// tillage.FullYears on purpose: the truth the estimator is judged against
// must not come from the estimator's own code.
func FullYears(a, b time.Time) int {
	y := b.Year() - a.Year()
	if b.Month() < a.Month() || (b.Month() == a.Month() && b.Day() < a.Day()) {
		y--
	}
	return max(y, 0)
}

// truth assembles the ground truth.
func (sc *scene) truth(items []*item) Truth {
	o := sc.o
	cy, _ := seasonStartYear(o.Contract)
	bb := orb.MultiPoint(sc.corners[:]).Bound()
	tr := Truth{
		Seed: o.Seed, Collection: Collection, EPSG: sc.epsg, MGRS: sc.mgrs,
		Start: Day{o.Start}, End: Day{o.End}, RevisitDays: o.RevisitDays, AsOf: Day{o.AsOf},
		Contract: o.Contract, Assessed: []string{seasonName(cy - 3), seasonName(cy - 2), seasonName(cy - 1)},
		Scene: SceneTruth{SizePx: sc.n, PixelM: pixelM, OriginX: sc.x0, OriginY: sc.y0,
			BBox: [4]float64{num.Round(bb.Min[0], 7), num.Round(bb.Min[1], 7), num.Round(bb.Max[0], 7), num.Round(bb.Max[1], 7)}},
	}
	for _, it := range items {
		tr.Items = append(tr.Items, ItemTruth{ID: it.ID, Date: Day{it.Date}, Baseline: it.Baseline,
			BOAOffsetApplied: it.Applied, RasterBandsOffset: it.RasterOffset, DNOffset: it.DNOffset,
			CloudCover: num.Round(it.CloudCover(), 3), NodataPct: it.Nodata})
	}
	for k, f := range sc.fields {
		tr.Fields = append(tr.Fields, sc.fieldTruth(k, f, items, tr.Assessed))
	}
	return tr
}

func (sc *scene) fieldTruth(k int, f *field, items []*item, assessed []string) FieldTruth {
	o := sc.o
	ft := FieldTruth{ID: f.ID, Crop: f.Crop, Shape: f.Shape, Design: f.Design,
		AreaHa: num.Round(sc.areaHa(f), 2), Pixels: f.pixels, PlantioContorno: f.contorno, Terraceamento: f.terraco,
		Cycles: []CycleTruth{}, Tillage: []TillageTruth{}, Headland: []HeadlandTruth{}}
	for _, c := range f.sc.Cycles {
		if c.Harvest.Before(o.Start) || c.Sowing.After(o.End) {
			continue
		}
		ft.Cycles = append(ft.Cycles, CycleTruth{Crop: c.Crop, Main: c.Main, Season: seasonOf(c.Sowing),
			Sowing: Day{c.Sowing}, Emergence: Day{c.Emergence}, Peak: Day{c.Peak}, Senesce: Day{c.Senesce}, Harvest: Day{c.Harvest}})
	}
	var last *Day
	for _, t := range f.sc.Tillage {
		ft.Tillage = append(ft.Tillage, TillageTruth{Date: Day{t.Date}, Kind: t.Kind, Retention: num.Round(t.Retention, 3)})
		if !t.Date.After(o.AsOf) {
			last = dayp(t.Date)
		}
	}
	if h := f.head; h != nil {
		ft.Headland = append(ft.Headland, sc.headlandTruth(f, h))
	}
	ft.T = o.tTruth(last)
	ft.Seasons = o.seasonsTruth(f, assessed)
	ft.C = cTruth(ft.Seasons, assessed)
	slope := sc.meanSlopePct(f)
	ft.Slope = SlopeTruth{MeanPct: num.Round(slope, 2), ContourRequired: slope >= 3}
	ft.MODIS = sc.modisTruth(f, ft.AreaHa)
	ft.Clouds = cloudTruth(k, f, items)
	return ft
}

// headlandTruth is the headland strip of a talhão tilled on its own.
func (sc *scene) headlandTruth(f *field, h *headland) HeadlandTruth {
	strip := 0
	for _, s := range sc.cls {
		if int(s) == f.surf+1 {
			strip++
		}
	}
	return HeadlandTruth{
		TillageTruth: TillageTruth{Date: Day{h.Till.Date}, Kind: h.Till.Kind, Retention: num.Round(h.Till.Retention, 3)},
		Edge:         h.Edge, WidthM: h.WidthM, AreaPct: num.Round(100*float64(strip)/float64(f.pixels), 1)}
}

// tTruth is T at AsOf: anniversary-based full years since the last event,
// censored when there is none.
func (o Options) tTruth(last *Day) TTruth {
	t := TTruth{AsOf: Day{o.AsOf}, LastEvent: last}
	if last != nil {
		y := FullYears(last.Time, o.AsOf)
		l := zarc.TLevel(float64(y))
		t.Years, t.Level = &y, &l
		return t
	}
	t.Censored = true
	t.YearsMin = FullYears(o.Start, o.AsOf)
	if t.YearsMin >= 8 {
		l := 4
		t.Level = &l
	}
	return t
}

// seasonsTruth is the main-crop sowing and pre-sowing straw of each season
// whose sowing lies in the archive.
func (o Options) seasonsTruth(f *field, assessed []string) []SeasonTruth {
	declared := map[int]bool{}
	for _, y := range f.declared {
		declared[y] = true
	}
	var out []SeasonTruth
	for _, c := range f.sc.MainCycles() {
		if c.Sowing.Before(o.Start) || c.Sowing.After(o.End) {
			continue
		}
		y := agriYear(c.Sowing)
		ws := c.Sowing.AddDate(0, 0, -30)
		st := SeasonTruth{Season: seasonName(y), MainCrop: c.Crop, Sowing: Day{c.Sowing}, WindowStart: Day{ws},
			StrawPct: num.Round(f.sc.StrawPct(ws, c.Sowing), 2), InArchive: !ws.Before(o.Start),
			Declared: declared[y]}
		for _, a := range assessed {
			if a == st.Season {
				st.Assessed = true
			}
		}
		out = append(out, st)
	}
	return out
}

// cTruth is C: the mean straw of the assessed seasons, missing when one of
// them has no window in the archive.
func cTruth(seasons []SeasonTruth, assessed []string) CTruth {
	straw := map[string]float64{}
	for _, st := range seasons {
		if st.InArchive {
			straw[st.Season] = st.StrawPct
		}
	}
	c := CTruth{Seasons: assessed}
	var sum float64
	for _, s := range assessed {
		v, ok := straw[s]
		if !ok {
			c.Reason = "season " + s + " has no main-crop sowing with its 30-day window in the archive"
			return c
		}
		sum += v
	}
	v := num.Round(sum/float64(len(assessed)), 2)
	l := zarc.CLevel(v)
	c.Value, c.Level = &v, &l
	return c
}

// cloudTruth is what clouds, shadows and no-data took from talhão k on each
// date.
func cloudTruth(k int, f *field, items []*item) CloudTruth {
	cl := CloudTruth{CloudyDates: []Day{}, ResidueDates: []Day{}}
	var lost, res, clear float64
	for _, it := range items {
		px := float64(f.pixels)
		m, nd, r := float64(it.masked[k]), float64(it.nodata[k]), float64(it.residue[k])
		cl.MaskedPct = append(cl.MaskedPct, num.Round(100*m/px, 1))
		cl.NodataPct = append(cl.NodataPct, num.Round(100*nd/px, 1))
		cl.ResidueByPct = append(cl.ResidueByPct, num.Round(100*r/px, 1))
		lost += (m + nd) / px
		res += r
		clear += px - m - nd
		if (m+nd)/px >= 0.5 {
			cl.CloudyDates = append(cl.CloudyDates, Day{it.Date})
		}
		if r/px >= 0.05 {
			cl.ResidueDates = append(cl.ResidueDates, Day{it.Date})
		}
	}
	if len(items) > 0 {
		cl.LossPct = num.Round(100*lost/float64(len(items)), 2)
	}
	if clear > 0 {
		cl.ResiduePct = num.Round(100*res/clear, 2)
	}
	return cl
}

// areaHa is the talhão's area on the ellipsoid: its UTM area divided by the
// square of the UTM point scale factor at its centre.
func (sc *scene) areaHa(f *field) float64 {
	var a float64
	r := f.ring
	for i := 1; i < len(r); i++ {
		a += r[i-1][0]*r[i][1] - r[i][0]*r[i-1][1]
	}
	b := bounds(r)
	e := sc.x0 + (b[0]+b[2])/2 - 500000
	const k0, R = 0.9996, 6371000.0
	k := k0 * (1 + e*e/(2*R*R))
	return math.Abs(a) / 2 / (k * k) / 1e4
}

// MODIS sinusoidal grid (MOD13Q1 250 m).
const (
	modisR  = 6371007.181
	modisPx = 231.656358263958
	modisX0 = -20015109.354
	modisY0 = 10007554.677
)

func sinusoidal(lon, lat float64) (x, y float64) {
	phi := lat * math.Pi / 180
	return modisR * lon * math.Pi / 180 * math.Cos(phi), modisR * phi
}

func unsinusoidal(x, y float64) (lon, lat float64) {
	phi := y / modisR
	return x / (modisR * math.Cos(phi)) * 180 / math.Pi, phi * 180 / math.Pi
}

// modisTruth counts the MODIS pixels wholly inside the talhão: every point
// of their boundary (8 per side) inside, and no talhão vertex inside them.
func (sc *scene) modisTruth(f *field, areaHa float64) MODISTruth {
	ring := f.lonlat[0]
	bb := ring.Bound()
	x0, y1 := sinusoidal(bb.Min[0], bb.Max[1])
	x1, _ := sinusoidal(bb.Max[0], bb.Max[1])
	xa, y0 := sinusoidal(bb.Min[0], bb.Min[1])
	xb, _ := sinusoidal(bb.Max[0], bb.Min[1])
	x0, x1 = math.Min(x0, xa), math.Max(x1, xb)
	c0, c1 := int(math.Floor((x0-modisX0)/modisPx)), int(math.Floor((x1-modisX0)/modisPx))
	r0, r1 := int(math.Floor((modisY0-y1)/modisPx)), int(math.Floor((modisY0-y0)/modisPx))
	count := 0
	for r := r0; r <= r1; r++ {
		for c := c0; c <= c1; c++ {
			px0, py1 := modisX0+float64(c)*modisPx, modisY0-float64(r)*modisPx
			px1, py0 := px0+modisPx, py1-modisPx
			ok := true
			const k = 8
			for i := 0; i < 4*k && ok; i++ {
				t := float64(i%k) / k
				var x, y float64
				switch i / k {
				case 0:
					x, y = px0+t*modisPx, py0
				case 1:
					x, y = px1, py0+t*modisPx
				case 2:
					x, y = px1-t*modisPx, py1
				default:
					x, y = px0, py1-t*modisPx
				}
				lon, lat := unsinusoidal(x, y)
				ok = inRing(ring, lon, lat)
			}
			for _, v := range ring {
				x, y := sinusoidal(v[0], v[1])
				if x > px0 && x < px1 && y > py0 && y < py1 {
					ok = false
				}
			}
			if ok {
				count++
			}
		}
	}
	req := int(math.Ceil(areaHa / 10))
	return MODISTruth{WholePixels: count, Required: req, Eligible: areaHa > 100 && count >= req}
}

// GeoJSON of the talhões.
type geoFC struct {
	Type     string    `json:"type"`
	Name     string    `json:"name"`
	Features []geoFeat `json:"features"`
}

type geoFeat struct {
	Type       string   `json:"type"`
	Properties geoProps `json:"properties"`
	Geometry   geoPoly  `json:"geometry"`
}

type geoProps struct {
	ID              string `json:"id"`
	Crop            string `json:"crop"`
	PlantioContorno *int   `json:"plantioContorno,omitempty"`
	Terraceamento   *int   `json:"terraceamento,omitempty"`
}

type geoPoly struct {
	Type        string         `json:"type"`
	Coordinates [][][2]float64 `json:"coordinates"`
}

// writeFields writes talhoes.geojson (RFC 7946: lon/lat, exterior rings
// counterclockwise).
func (sc *scene) writeFields() error {
	fc := geoFC{Type: "FeatureCollection", Name: "talhoes"}
	for _, f := range sc.fields {
		ring := make([][2]float64, len(f.lonlat[0]))
		for i, p := range f.lonlat[0] {
			ring[i] = [2]float64{p[0], p[1]}
		}
		fc.Features = append(fc.Features, geoFeat{Type: "Feature",
			Properties: geoProps{ID: f.ID, Crop: f.Crop, PlantioContorno: f.contorno, Terraceamento: f.terraco},
			Geometry:   geoPoly{Type: "Polygon", Coordinates: [][][2]float64{ring}}})
	}
	return writeJSON(filepath.Join(sc.o.Out, FieldsFile), fc)
}

// writeSowing writes sowing.csv: field_id,season,sowing_date,crop for the
// declared seasons (the truth's sowing date of the main crop).
func (sc *scene) writeSowing(tr Truth) error {
	var b bytes.Buffer
	b.WriteString("field_id,season,sowing_date,crop\n")
	for _, f := range tr.Fields {
		for _, s := range f.Seasons {
			if !s.Declared {
				continue
			}
			crop := s.MainCrop
			if crop == pheno.Safrinha {
				crop = pheno.Milho
			}
			fmt.Fprintf(&b, "%s,%s,%s,%s\n", f.ID, s.Season, s.Sowing.Format(dateLayout), crop)
		}
	}
	name := filepath.Join(sc.o.Out, SowingFile)
	if err := os.WriteFile(name, b.Bytes(), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	return nil
}
