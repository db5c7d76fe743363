package synth

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/airbusgeo/godal"
	"github.com/manejo/manejo/internal/num"
	"github.com/manejo/manejo/sim/pheno"
	"github.com/paulmach/orb"
)

const pixelM = 10.0 // resolution of red and nir, metres

// Background land covers, surface indices 0..3; talhões follow.
const (
	surfForest = iota
	surfPasture
	surfBare
	surfWater
	nBackground
)

// headland is a strip along one edge of a talhão tilled alone (a firebreak
// at the headland, IN 2.3 III): it must not count as a talhão event.
type headland struct {
	Edge   string  // "north"
	WidthM float64 // strip width, metres
	Till   pheno.Tillage
	sc     *pheno.Scenario
	ymax   float64 // local y (metres south of the scene's north edge) where the strip ends
}

// field is one talhão of the scene.
type field struct {
	ID       string
	Crop     string // talhão property: soja or milho
	Shape    string // "rectangle" or "L"
	Design   string // what the talhão is there to test
	ring     [][2]float64
	lonlat   orb.Polygon
	sc       *pheno.Scenario
	head     *headland
	contorno *int
	terraco  *int
	declared []int // agricultural years (start year) written to sowing.csv
	surf     int   // surface index of the talhão (the headland strip is surf+1)
	pixels   int   // 10 m pixels whose centre lies in the talhão
}

// design is the recipe of one designed talhão, in metres from the scene's
// north-west corner (x east, y south).
type design struct {
	id, crop, shape, what string
	ring                  [][2]float64
	po                    pheno.Options
	tillYears             []int // agricultural years with a whole-talhão tillage
	headYear              int   // agricultural year of a headland-only tillage (0: none)
	contorno, terraco     *int  // declared practices; nil is written as 0 (every talhão declares both, as SINM needs)
	declared              []int
}

func rect(x0, y0, x1, y1 float64) [][2]float64 {
	return [][2]float64{{x0, y0}, {x1, y0}, {x1, y1}, {x0, y1}, {x0, y0}}
}

// designs are the six talhões every archive starts with, on a 3.84 km
// scene. The west of the scene is a flat plateau (mean slope ≈ 1 %), the
// east a valley side (≈ 5 %): see terrain.
func designs() []design {
	return []design{
		{id: "SYN-001", crop: "soja", shape: "rectangle", what: "302 ha, cells of 5–10 ha, MODIS-eligible; soybean + second-crop maize every year; no tillage (T censored); flat",
			ring: rect(60, 60, 1800, 1800), po: pheno.Options{TillageProb: -1, SafrinhaProb: 1},
			declared: []int{2023, 2024}},
		{id: "SYN-002", crop: "soja", shape: "L", what: "76 ha L-shaped; soybean + cover crop; tilled before the 2022/2023 sowing (T = 3, level 2); flat",
			ring: [][2]float64{{60, 1900}, {1260, 1900}, {1260, 2300}, {460, 2300}, {460, 3000}, {60, 3000}, {60, 1900}},
			po:   pheno.Options{TillageProb: -1, SafrinhaProb: -1, CoverProb: 1}, tillYears: []int{2022}},
		{id: "SYN-003", crop: "soja", shape: "rectangle", what: "20 ha; soybean + cover crop; tilled before the 2023/2024 and 2024/2025 sowings (T = 1, C level 2); slope ≈ 5 %, contour planting and terraces declared",
			ring: rect(2300, 60, 2800, 460), po: pheno.Options{TillageProb: -1, SafrinhaProb: -1, CoverProb: 1},
			tillYears: []int{2023, 2024}, contorno: new(1), terraco: new(1)},
		{id: "SYN-004", crop: "milho", shape: "rectangle", what: "150 ha; summer maize + cover crop; only a 200 m headland strip tilled in 2024 (IN 2.3 III: no talhão event, T censored); slope ≈ 5 % without contour planting",
			ring: rect(2300, 600, 3800, 1600), po: pheno.Options{MainCrop: pheno.Milho, TillageProb: -1, CoverProb: 1},
			headYear: 2024, contorno: new(0), terraco: new(0), declared: []int{2023, 2024, 2025}},
		{id: "SYN-005", crop: "soja", shape: "rectangle", what: "45 ha; soybean + cover crop; tilled before the 2025/2026 sowing (T = 0); slope ≈ 5 %, contour planting",
			ring: rect(2300, 1750, 3200, 2250), po: pheno.Options{TillageProb: -1, SafrinhaProb: -1, CoverProb: 1},
			tillYears: []int{2025}, contorno: new(1)},
		{id: "SYN-006", crop: "soja", shape: "rectangle", what: "40 ha; soybean then fallow; tilled every year (T = 0, low straw); flat",
			ring: rect(700, 2450, 1500, 2950), po: pheno.Options{TillageProb: -1, SafrinhaProb: -1, CoverProb: -1},
			tillYears: []int{2022, 2023, 2024, 2025}, declared: []int{2025}},
	}
}

// reservoir is a small lake in the valley (SCL class 6), local metres.
var reservoir = struct{ cx, cy, rx, ry float64 }{3250, 3150, 300, 170}

// scene is everything the renderer and the truth need.
type scene struct {
	o      Options
	epsg   int
	mgrs   string  // MGRS tile code, e.g. "21LXG"
	x0, y0 float64 // UTM of the north-west corner
	n      int     // 10 m pixels per side
	dates  []time.Time
	fields []*field
	// surfaces: 0..3 background, then per field its own and, with a
	// headland, the strip's.
	surfaces []func(time.Time) pheno.Reflectance
	cls      []uint16  // surface index per 10 m pixel, row-major from the north-west
	gain     []float32 // static multiplicative gain per 10 m pixel
	corners  [4]orb.Point
	// tileCode names the scene's tile in item ids and grid:code (mgrs, or
	// mgrs and the scene's number in a mosaic); idPrefix starts its talhão ids.
	tileCode, idPrefix string
}

func rngFor(seed int64, stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(seed), 0x5eed0000+stream))
}

func newScene(o Options) (*scene, error) {
	zone := int(math.Floor((o.Lon+180)/6)) + 1
	epsg := 32600 + zone
	if o.Lat < 0 {
		epsg = 32700 + zone
	}
	pr, err := newProjector(epsg)
	if err != nil {
		return nil, err
	}
	defer pr.close()
	cx, cy, err := pr.toUTM(o.Lon, o.Lat)
	if err != nil {
		return nil, err
	}
	half := float64(o.SceneSizePx) * pixelM / 2
	sc := &scene{
		o:    o,
		epsg: epsg,
		x0:   math.Round((cx-half)/20) * 20,
		y0:   math.Round((cy+half)/20) * 20,
		n:    o.SceneSizePx,
	}
	sc.mgrs = mgrsTile(zone, o.Lat, cx, cy)
	sc.tileCode = sc.mgrs
	if o.Tiles > 0 {
		if sc.x0, sc.y0, err = gridOrigin(o, cx, cy); err != nil {
			return nil, err
		}
	}
	if o.Tiles > 1 {
		sc.tileCode, sc.idPrefix = fmt.Sprintf("%s%02d", sc.mgrs, o.tile+1), fmt.Sprintf("T%02d-", o.tile+1)
	}
	sc.dates = pheno.Revisit(o.Start, o.End, o.RevisitDays)
	side := float64(sc.n) * pixelM
	for i, p := range [][2]float64{{0, 0}, {side, 0}, {side, side}, {0, side}} {
		lon, lat, err := pr.toLonLat(sc.x0+p[0], sc.y0-p[1])
		if err != nil {
			return nil, err
		}
		sc.corners[i] = orb.Point{lon, lat}
	}

	sc.surfaces = make([]func(time.Time) pheno.Reflectance, nBackground)
	sc.surfaces[surfForest] = forest
	sc.surfaces[surfPasture] = pasture
	sc.surfaces[surfBare] = bare
	sc.surfaces[surfWater] = func(time.Time) pheno.Reflectance { return waterRefl }

	if err := sc.layFields(); err != nil {
		return nil, err
	}
	for _, f := range sc.fields {
		ll := make(orb.Ring, len(f.ring))
		for i, p := range f.ring {
			lon, lat, err := pr.toLonLat(sc.x0+p[0], sc.y0-p[1])
			if err != nil {
				return nil, err
			}
			ll[i] = orb.Point{num.Round(lon, 7), num.Round(lat, 7)}
		}
		if signedArea(ll) < 0 { // RFC 7946: exterior rings counterclockwise
			for i, j := 0, len(ll)-1; i < j; i, j = i+1, j-1 {
				ll[i], ll[j] = ll[j], ll[i]
			}
		}
		f.lonlat = orb.Polygon{ll}
	}
	sc.rasterize()
	return sc, nil
}

func signedArea(r orb.Ring) float64 {
	var a float64
	for i := 1; i < len(r); i++ {
		a += r[i-1][0]*r[i][1] - r[i][0]*r[i-1][1]
	}
	return a / 2
}

// layFields builds the designed talhões, then random ones up to o.Fields.
func (sc *scene) layFields() error {
	ds := designs()
	side := float64(sc.n) * pixelM
	for i := 0; i < sc.o.Fields && i < len(ds); i++ {
		d := ds[i]
		rng := rngFor(sc.o.Seed, uint64(100+i))
		s := pheno.Random(rng, sc.o.Start, sc.o.End, d.po)
		f := &field{ID: d.id, Crop: d.crop, Shape: d.shape, Design: d.what, ring: d.ring,
			contorno: cmp.Or(d.contorno, new(0)), terraco: cmp.Or(d.terraco, new(0)), declared: d.declared}
		// Planned operations of seasons outside [Start, End] are dropped.
		for _, y := range d.tillYears {
			t, ok, err := plannedTillage(rng, s, y, tillKind(rng, y))
			if err != nil {
				return fmt.Errorf("talhão %s: %w", d.id, err)
			}
			if ok {
				s = withTillage(s, t)
			}
		}
		f.sc = s
		if d.headYear != 0 {
			t, ok, err := plannedTillage(rng, s, d.headYear, pheno.Tillage{Kind: "GRADAGEM", Retention: 0.12})
			if err != nil {
				return fmt.Errorf("talhão %s headland: %w", d.id, err)
			}
			if ok {
				b := bounds(d.ring)
				f.head = &headland{Edge: "north", WidthM: 200, Till: t, sc: withTillage(s, t), ymax: b[1] + 200}
			}
		}
		sc.addField(f)
	}
	// Random talhões: rectangles of 10–80 ha in free space.
	rng := rngFor(sc.o.Seed, 99)
	taken := make([][4]float64, 0, sc.o.Fields+1)
	for _, f := range sc.fields {
		taken = append(taken, bounds(f.ring))
	}
	taken = append(taken, [4]float64{reservoir.cx - reservoir.rx, reservoir.cy - reservoir.ry, reservoir.cx + reservoir.rx, reservoir.cy + reservoir.ry})
	for i := len(sc.fields); i < sc.o.Fields; i++ {
		placed := false
		for try := 0; try < 2000 && !placed; try++ {
			ha := 10 + 70*rng.Float64()
			ratio := 1 + 1.5*rng.Float64()
			w := math.Round(math.Sqrt(ha*1e4*ratio)/10) * 10
			h := math.Round(ha*1e4/w/10) * 10
			if rng.Float64() < 0.5 {
				w, h = h, w
			}
			x := 60 + math.Round((side-120-w)*rng.Float64()/10)*10
			y := 60 + math.Round((side-120-h)*rng.Float64()/10)*10
			b := [4]float64{x, y, x + w, y + h}
			if x < 60 || y < 60 || b[2] > side-60 || b[3] > side-60 || overlaps(b, taken, 60) {
				continue
			}
			placed = true
			taken = append(taken, b)
			po := pheno.Options{}
			crop := "soja"
			if rng.Float64() < 0.2 {
				crop, po.MainCrop = "milho", pheno.Milho
			}
			f := &field{ID: fmt.Sprintf("SYN-%03d", i+1), Crop: crop, Shape: "rectangle",
				Design: "random rectangle, random pheno history",
				ring:   rect(b[0], b[1], b[2], b[3]), contorno: new(0), terraco: new(0),
				sc: pheno.Random(rngFor(sc.o.Seed, uint64(100+i)), sc.o.Start, sc.o.End, po)}
			sc.addField(f)
		}
		if !placed {
			return fmt.Errorf("%w: no room for talhão %d of %d in a %d px scene", ErrOptions, i+1, sc.o.Fields, sc.n)
		}
	}
	return nil
}

func (sc *scene) addField(f *field) {
	f.ID = sc.idPrefix + f.ID
	f.surf = len(sc.surfaces)
	s := f.sc
	sc.surfaces = append(sc.surfaces, s.Reflectance)
	if f.head != nil {
		sc.surfaces = append(sc.surfaces, f.head.sc.Reflectance)
	}
	sc.fields = append(sc.fields, f)
}

func bounds(r [][2]float64) [4]float64 {
	b := [4]float64{math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)}
	for _, p := range r {
		b[0], b[1] = math.Min(b[0], p[0]), math.Min(b[1], p[1])
		b[2], b[3] = math.Max(b[2], p[0]), math.Max(b[3], p[1])
	}
	return b
}

func overlaps(b [4]float64, taken [][4]float64, gap float64) bool {
	for _, t := range taken {
		if b[0] < t[2]+gap && t[0] < b[2]+gap && b[1] < t[3]+gap && t[1] < b[3]+gap {
			return true
		}
	}
	return false
}

// inRing reports whether (x, y) lies inside the closed ring r (even-odd);
// r is a plain coordinate ring or an orb.Ring.
func inRing[P ~[2]float64](r []P, x, y float64) bool {
	in := false
	for i, j := 0, len(r)-1; i < len(r); j, i = i, i+1 {
		a, b := r[i], r[j]
		if (a[1] > y) != (b[1] > y) && x < (b[0]-a[0])*(y-a[1])/(b[1]-a[1])+a[0] {
			in = !in
		}
	}
	return in
}

// rasterize assigns a surface to every 10 m pixel (by its centre) and draws
// the static per-pixel gain.
func (sc *scene) rasterize() {
	n := sc.n
	sc.cls = make([]uint16, n*n)
	sc.gain = make([]float32, n*n)
	land := newValueNoise(sc.o.Seed, 1, 700)
	patch := newValueNoise(sc.o.Seed, 2, 90)
	for row := 0; row < n; row++ {
		y := (float64(row) + 0.5) * pixelM
		for col := 0; col < n; col++ {
			x := (float64(col) + 0.5) * pixelM
			p := row*n + col
			var c int
			dx, dy := (x-reservoir.cx)/reservoir.rx, (y-reservoir.cy)/reservoir.ry
			switch v := land.at(x, y); {
			case dx*dx+dy*dy <= 1:
				c = surfWater
			case v < 0.4:
				c = surfForest
			case v < 0.8:
				c = surfPasture
			default:
				c = surfBare
			}
			sc.cls[p] = uint16(c)
			amp := 0.06
			if c == surfWater {
				amp = 0.02
			}
			g := 1 + amp*(2*patch.at(x, y)-1) + 0.01*(2*unit(hash(uint64(sc.o.Seed), 7, uint64(p)))-1)
			sc.gain[p] = float32(g)
		}
	}
	for _, f := range sc.fields {
		b := bounds(f.ring)
		c0, c1 := int(b[0]/pixelM), int(math.Ceil(b[2]/pixelM))
		r0, r1 := int(b[1]/pixelM), int(math.Ceil(b[3]/pixelM))
		for row := max(r0, 0); row < min(r1, n); row++ {
			y := (float64(row) + 0.5) * pixelM
			for col := max(c0, 0); col < min(c1, n); col++ {
				x := (float64(col) + 0.5) * pixelM
				if !inRing(f.ring, x, y) {
					continue
				}
				p := row*n + col
				s := f.surf
				if f.head != nil && y < f.head.ymax {
					s++
				}
				sc.cls[p] = uint16(s)
				// Within a talhão the crop is more even: ±3 % plus ±1 %.
				sc.gain[p] = float32(1 + 0.03*(2*patch.at(x, y)-1) + 0.01*(2*unit(hash(uint64(sc.o.Seed), 7, uint64(p)))-1))
				f.pixels++
			}
		}
	}
}

// plannedTillage places a tillage of the kind in k before the main-crop
// sowing of agricultural year y (starting in July of y): 15–30 days before
// it, never before the last cash-crop harvest. ok is false when that
// sowing or the operation falls outside the archive.
func plannedTillage(rng *rand.Rand, s *pheno.Scenario, y int, k pheno.Tillage) (t pheno.Tillage, ok bool, err error) {
	var sow time.Time
	for _, c := range s.MainCycles() {
		if agriYear(c.Sowing) == y {
			sow = c.Sowing
		}
	}
	if sow.IsZero() || sow.After(s.End) {
		return k, false, nil
	}
	last := time.Time{}
	for _, c := range s.Cycles {
		if c.Crop == pheno.Pousio || c.Crop == pheno.Cobertura || !c.Harvest.Before(sow) {
			continue
		}
		if c.Harvest.After(last) {
			last = c.Harvest
		}
	}
	d := sow.AddDate(0, 0, -(15 + rng.IntN(16)))
	if lo := last.AddDate(0, 0, 3); d.Before(lo) {
		d = last.Add(sow.Sub(last) / 2)
	}
	d = day(d)
	if !d.After(last) || !d.Before(sow) {
		return k, false, fmt.Errorf("no room for tillage between harvest %s and sowing %s", last.Format(dateLayout), sow.Format(dateLayout))
	}
	if d.Before(s.Start) || d.After(s.End) {
		return k, false, nil
	}
	k.Date = d
	return k, true, nil
}

func tillKind(rng *rand.Rand, y int) pheno.Tillage {
	if y%2 == 0 {
		return pheno.Tillage{Kind: "GRADAGEM", Retention: 0.12 + 0.08*rng.Float64()}
	}
	return pheno.Tillage{Kind: "ARAÇÃO", Retention: 0.04 + 0.04*rng.Float64()}
}

// withTillage returns s with t added; weeds or cover crops standing on the
// day are cut by it (their cycle ends that day), as in pheno.Random.
func withTillage(s *pheno.Scenario, t pheno.Tillage) *pheno.Scenario {
	c := *s
	c.Cycles = append([]pheno.Cycle(nil), s.Cycles...)
	for i := range c.Cycles {
		cy := &c.Cycles[i]
		if (cy.Crop == pheno.Pousio || cy.Crop == pheno.Cobertura) && cy.Emergence.Before(t.Date) && cy.Harvest.After(t.Date) {
			cy.Harvest = t.Date
			if !cy.Senesce.Before(t.Date) {
				cy.Senesce = t.Date.AddDate(0, 0, -1)
			}
			if cy.Crop == pheno.Pousio {
				cy.Yield = 0
			}
		}
	}
	return c.WithTillage(t)
}

// agriYear returns the start year of the agricultural year (July–June) of d.
func agriYear(d time.Time) int {
	if d.Month() >= time.July {
		return d.Year()
	}
	return d.Year() - 1
}

// projector converts between the scene's UTM zone and lon/lat.
type projector struct {
	utm, ll      *godal.SpatialRef
	toLL, fromLL *godal.Transform
}

func newProjector(epsg int) (*projector, error) {
	utm, err := godal.NewSpatialRefFromEPSG(epsg)
	if err != nil {
		return nil, fmt.Errorf("open EPSG:%d: %w", epsg, err)
	}
	ll, err := godal.NewSpatialRefFromEPSG(4326)
	if err != nil {
		utm.Close()
		return nil, fmt.Errorf("open EPSG:4326: %w", err)
	}
	toLL, err := godal.NewTransform(utm, ll)
	if err != nil {
		return nil, fmt.Errorf("transform EPSG:%d → 4326: %w", epsg, err)
	}
	fromLL, err := godal.NewTransform(ll, utm)
	if err != nil {
		return nil, fmt.Errorf("transform EPSG:4326 → %d: %w", epsg, err)
	}
	return &projector{utm: utm, ll: ll, toLL: toLL, fromLL: fromLL}, nil
}

func (p *projector) close() {
	p.toLL.Close()
	p.fromLL.Close()
	p.utm.Close()
	p.ll.Close()
}

func (p *projector) toLonLat(x, y float64) (float64, float64, error) {
	xs, ys := []float64{x}, []float64{y}
	if err := p.toLL.TransformEx(xs, ys, nil, nil); err != nil {
		return 0, 0, fmt.Errorf("transform %.1f,%.1f to lon/lat: %w", x, y, err)
	}
	return xs[0], ys[0], nil
}

func (p *projector) toUTM(lon, lat float64) (float64, float64, error) {
	xs, ys := []float64{lon}, []float64{lat}
	if err := p.fromLL.TransformEx(xs, ys, nil, nil); err != nil {
		return 0, 0, fmt.Errorf("transform %.6f,%.6f to UTM: %w", lon, lat, err)
	}
	return xs[0], ys[0], nil
}

// mgrsTile returns the MGRS 100 km square code of a UTM position (zone,
// latitude band, column and row letters), e.g. "21LXG".
func mgrsTile(zone int, lat, x, y float64) string {
	bands := "CDEFGHJKLMNPQRSTUVWX"
	bi := int(math.Floor((lat + 80) / 8))
	bi = max(0, min(bi, len(bands)-1))
	cols := [3]string{"ABCDEFGH", "JKLMNPQR", "STUVWXYZ"}
	col := cols[(zone-1)%3][int(x/100000)-1]
	rows := "ABCDEFGHJKLMNPQRSTUV"
	// Rows are counted on the northing as written (south: with the false
	// northing), cycling every 2,000 km, offset by 5 letters in even zones.
	ri := int(math.Floor(y/100000)) % 20
	if zone%2 == 0 {
		ri = (ri + 5) % 20
	}
	return fmt.Sprintf("%02d%c%c%c", zone, bands[bi], col, rows[ri])
}
