package grid

import (
	"errors"
	"fmt"
	"math"

	"github.com/airbusgeo/godal"
	"github.com/paulmach/orb"
	"github.com/paulmach/orb/encoding/wkb"
	"github.com/paulmach/orb/planar"
)

// DefaultEdgeBufferM is the default minimum distance in metres between a
// cell centre and the talhão boundary: 15 m, half a Landsat pixel beyond the
// 10 m of Sentinel-2, so the sampled pixel of any ≤ 30 m sensor does not
// straddle the border.
const DefaultEdgeBufferM = 15.0

// maxCells bounds the number of grid squares scanned for one talhão.
const maxCells = 4_000_000

// FlagFallbackCentre marks a grid whose only point is the interior point of
// a talhão too small or thin to hold a regular centre (Grid.Flags).
const FlagFallbackCentre = "fallback-centre"

// ErrTooLarge reports a talhão whose bounding box holds more grid squares
// than Build scans (4 million).
var ErrTooLarge = errors.New("grid: talhão too large to grid")

// Options tune Build. The zero value means the defaults.
type Options struct {
	// CellHa is the nominal cell area in hectares; 0 picks the smallest
	// legal size for the talhão (CellSizeRange). Outside the legal range
	// Build fails with ErrCellSize.
	CellHa float64
	// EdgeBufferM is the minimum distance in metres from a cell centre to
	// the talhão boundary; 0 means DefaultEdgeBufferM. Negative values mean
	// no buffer (centre strictly inside).
	EdgeBufferM float64
}

func (o Options) buffer() float64 {
	switch {
	case o.EdgeBufferM == 0:
		return DefaultEdgeBufferM
	case o.EdgeBufferM < 0:
		return 0
	}
	return o.EdgeBufferM
}

// Build divides a talhão into square cells (IN 6.2 I–IV) and marks its
// MODIS-eligible points (IN 6.4 I).
//
// The talhão is validated (Validate) and measured (AreaHa); the cell area is
// o.CellHa or the smallest legal size. Cells are squares on a grid in the
// WGS84 UTM zone of the talhão's centroid (EPSG 326zz/327zz), even when the
// talhão crosses into the next zone; the grid is anchored at multiples of
// the cell side in UTM metres, so the same talhão always gets the same cells
// and ids ("r<row>c<col>", row 0 at the north, col 0 at the west of its
// bounding box). The side is scaled by the UTM scale factor at the centroid
// so a whole cell covers CellSizeHa on the ground.
//
// A cell is kept when its centre lies inside the talhão at least
// EdgeBufferM (ground metres) from the boundary; its polygon is the square
// clipped to the talhão by GEOS (through OGR), keeping the piece that holds
// the centre, and its AreaHa is the geodesic area of that piece. Squares cut
// off by the buffer are not sampled. Holes and multipolygons are handled.
// When no centre qualifies, the talhão gets one interior point (far from
// the boundary, possibly closer than the buffer) in a cell marked Fallback
// whose polygon is the part of the talhão holding it, and Grid.Flags gets
// FlagFallbackCentre.
//
// MODIS (IN 6.4 I): only talhões over 100 ha (strictly) can be eligible. A
// point is MODIS-eligible when the whole MODIS 250 m sinusoidal pixel that
// holds it lies inside the talhão; the talhão is eligible when it has at
// least ceil(AreaHa/10) such points ("ao menos um ponto de amostragem para
// cada 10 hectares" read as one per 10 ha or fraction: 100.1 ha needs 11).
func Build(f Field, o Options) (Grid, error) {
	return build(f, o, minIndexedParts)
}

// build is Build indexing a talhão's parts from minParts parts on
// (newPartIndex).
func build(f Field, o Options, minParts int) (Grid, error) {
	g := Grid{Field: f}
	if math.IsNaN(o.EdgeBufferM) || math.IsInf(o.EdgeBufferM, 0) {
		return g, fmt.Errorf("talhão %s: edge buffer %v m: want a finite distance", f.ID, o.EdgeBufferM)
	}
	if err := Validate(f); err != nil {
		return g, err
	}
	g.AreaHa = AreaHa(f.Geometry)
	cellHa, err := CellSize(g.AreaHa, o.CellHa)
	if err != nil {
		return g, fmt.Errorf("talhão %s: %w", f.ID, err)
	}
	g.CellSizeHa = cellHa
	g.CellSizeM = math.Sqrt(cellHa * 1e4)

	l, err := newLayout(&g, o.buffer())
	if err != nil {
		return g, err
	}
	l.markCut()
	l.parts = newPartIndex(l, minParts)
	if g.Cells, err = l.cells(f.ID); err != nil {
		return g, err
	}
	if len(g.Cells) == 0 {
		cell, err := fallbackCell(f, l.pm, l.tm, l.gi0, l.gj1, l.side)
		if err != nil {
			return g, err
		}
		g.Cells = append(g.Cells, cell)
		g.Flags = append(g.Flags, FlagFallbackCentre)
	}
	modis(&g, func(b orb.Bound) orb.MultiPolygon { return l.parts.near(l, b) }, l.tm, l.clear)
	return g, nil
}

// layout is the square grid of one talhão in its UTM plane: squares of side
// side (grid-plane metres) anchored at multiples of side, columns gi0.. and
// rows from gj1 down, and the squares the boundary touches.
type layout struct {
	tm         *tmProj
	pm         orb.MultiPolygon // the talhão in the UTM plane
	side, buf  float64          // cell side and edge buffer in grid-plane metres
	gi0, gj1   int              // grid index of column 0 and of row 0
	ncol, nrow int
	cut        []bool     // by row*ncol+col: the boundary touches the square
	parts      *partIndex // nil: few parts, every query looks at all
}

// newLayout projects the talhão of g to the UTM zone of its centroid (g.EPSG
// is set), scales the cell side and the buffer bufM to grid-plane metres
// and bounds the grid. It fails with ErrTooLarge beyond maxCells squares.
func newLayout(g *Grid, bufM float64) (*layout, error) {
	f := g.Field
	centroid, _ := planar.CentroidArea(f.Geometry)
	zone, epsg := utmZone(centroid)
	g.EPSG = epsg
	l := &layout{tm: newUTM(zone, centroid[1] < 0)}
	l.pm = projectMP(f.Geometry, l.tm.forward)

	// Grid-plane metres per ground metre at the centroid, from the
	// geodesic area of a 1 km square around it.
	c := l.tm.forward(centroid)
	probe := orb.Polygon{orb.Ring{{c[0] - 500, c[1] - 500}, {c[0] + 500, c[1] - 500}, {c[0] + 500, c[1] + 500}, {c[0] - 500, c[1] + 500}, {c[0] - 500, c[1] - 500}}}
	k := math.Sqrt(100 / polygonAreaHa(projectPoly(probe, l.tm.inverse)))
	l.side = g.CellSizeM * k
	l.buf = bufM * k

	b := l.pm.Bound()
	gi0, gi1 := int(math.Floor(b.Min[0]/l.side)), int(math.Floor(b.Max[0]/l.side))
	gj0, gj1 := int(math.Floor(b.Min[1]/l.side)), int(math.Floor(b.Max[1]/l.side))
	l.gi0, l.gj1 = gi0, gj1
	l.ncol, l.nrow = gi1-gi0+1, gj1-gj0+1
	if float64(l.ncol)*float64(l.nrow) > maxCells {
		return nil, fmt.Errorf("talhão %s: %.0f ha in %g ha cells needs %d×%d squares: %w", f.ID, g.AreaHa, g.CellSizeHa, l.ncol, l.nrow, ErrTooLarge)
	}
	return l, nil
}

// sq returns the square at col, row.
func (l *layout) sq(col, row int) orb.Bound {
	x0, y0 := float64(l.gi0+col)*l.side, float64(l.gj1-row)*l.side
	return orb.Bound{Min: orb.Point{x0, y0}, Max: orb.Point{x0 + l.side, y0 + l.side}}
}

// markCut marks the squares the boundary touches.
func (l *layout) markCut() {
	l.cut = make([]bool, l.ncol*l.nrow)
	side, gi0, gj1 := l.side, l.gi0, l.gj1
	for _, poly := range l.pm {
		for _, r := range poly {
			for i := 1; i < len(r); i++ {
				a, bb := r[i-1], r[i]
				c0 := int(math.Floor(math.Min(a[0], bb[0])/side)) - gi0
				c1 := int(math.Floor(math.Max(a[0], bb[0])/side)) - gi0
				r0 := gj1 - int(math.Floor(math.Max(a[1], bb[1])/side))
				r1 := gj1 - int(math.Floor(math.Min(a[1], bb[1])/side))
				for row := max(r0, 0); row <= min(r1, l.nrow-1); row++ {
					for col := max(c0, 0); col <= min(c1, l.ncol-1); col++ {
						if !l.cut[row*l.ncol+col] && segRect(a, bb, l.sq(col, row)) {
							l.cut[row*l.ncol+col] = true
						}
					}
				}
			}
		}
	}
}

// nearCut reports whether the square at col, row or one of its eight
// neighbours is touched by the boundary.
func (l *layout) nearCut(col, row int) bool {
	for r := max(row-1, 0); r <= min(row+1, l.nrow-1); r++ {
		for c := max(col-1, 0); c <= min(col+1, l.ncol-1); c++ {
			if l.cut[r*l.ncol+c] {
				return true
			}
		}
	}
	return false
}

// clear reports whether no square the boundary touches meets b: a region
// inside b holding an inside point is then wholly inside.
func (l *layout) clear(b orb.Bound) bool {
	c0, c1 := int(math.Floor(b.Min[0]/l.side))-l.gi0, int(math.Floor(b.Max[0]/l.side))-l.gi0
	r0, r1 := l.gj1-int(math.Floor(b.Max[1]/l.side)), l.gj1-int(math.Floor(b.Min[1]/l.side))
	for row := r0; row <= r1; row++ {
		for col := c0; col <= c1; col++ {
			if row < 0 || col < 0 || row >= l.nrow || col >= l.ncol || l.cut[row*l.ncol+col] {
				return false
			}
		}
	}
	return true
}

// cells returns the cells whose centre lies inside the talhão at least the
// buffer from its boundary, row by row from the north. Squares the boundary
// touches are clipped to the talhão by GEOS.
func (l *layout) cells(fieldID string) ([]Cell, error) {
	var clipper *geosClipper
	defer func() {
		if clipper != nil {
			clipper.close()
		}
	}()
	var out []Cell
	var xs []float64
	for row := 0; row < l.nrow; row++ {
		yc := (float64(l.gj1-row) + 0.5) * l.side
		xs = rowCrossings(l.pm, yc, xs)
		k := 0
		for col := 0; col < l.ncol; col++ {
			xc := (float64(l.gi0+col) + 0.5) * l.side
			for k < len(xs) && xs[k] <= xc {
				k++
			}
			if k%2 == 0 { // even number of crossings to the west: outside
				continue
			}
			centre := orb.Point{xc, yc}
			cell, ok := l.cell(fieldID, col, row, centre)
			if !ok {
				continue
			}
			piece, err := l.piece(&clipper, fieldID, cell.ID, col, row, centre)
			if err != nil {
				return nil, err
			}
			cell.Polygon = projectPoly(piece, l.tm.inverse)
			cell.AreaHa = polygonAreaHa(cell.Polygon)
			out = append(out, cell)
		}
	}
	return out, nil
}

// cell returns the cell of the square at col, row, whose centre (grid
// plane) lies inside the talhão; ok is false when the centre is closer to
// the boundary than the buffer.
func (l *layout) cell(fieldID string, col, row int, centre orb.Point) (c Cell, ok bool) {
	isCut := l.cut[row*l.ncol+col]
	dist := math.Inf(1)
	if l.nearCut(col, row) || l.buf >= 1.5*l.side {
		r := math.Max(l.buf, l.side) // only edges this close matter
		dist = boundaryDist(l.parts.near(l, orb.Bound{Min: orb.Point{centre[0] - r, centre[1] - r}, Max: orb.Point{centre[0] + r, centre[1] + r}}), centre)
		if dist < l.buf || dist == 0 {
			return Cell{}, false
		}
	}
	return Cell{
		FieldID: fieldID,
		ID:      cellID(row, col),
		Row:     row,
		Col:     col,
		Centre:  l.tm.inverse(centre),
		Border:  isCut || dist < l.side,
	}, true
}

// piece returns the part of the square at col, row that the cell covers
// (grid plane): the whole square unless the boundary touches it, else the
// piece of the square clipped to the talhão that holds centre, by the GEOS
// clipper *clipper (made on first use).
func (l *layout) piece(clipper **geosClipper, fieldID, cellID string, col, row int, centre orb.Point) (orb.Polygon, error) {
	s := l.sq(col, row)
	if !l.cut[row*l.ncol+col] {
		return orb.Polygon{orb.Ring{s.Min, {s.Max[0], s.Min[1]}, s.Max, {s.Min[0], s.Max[1]}, s.Min}}, nil
	}
	if l.parts != nil { // many parts: clip against the few near the square
		c, err := newGEOSClipper(l.parts.near(l, s))
		if err != nil {
			return nil, fmt.Errorf("talhão %s: %w", fieldID, err)
		}
		defer c.close()
		p, err := c.clip(s, centre)
		if err != nil {
			return nil, fmt.Errorf("talhão %s: cell %s: %w", fieldID, cellID, err)
		}
		return p, nil
	}
	if *clipper == nil {
		c, err := newGEOSClipper(l.pm)
		if err != nil {
			return nil, fmt.Errorf("talhão %s: %w", fieldID, err)
		}
		*clipper = c
	}
	p, err := (*clipper).clip(s, centre)
	if err != nil {
		return nil, fmt.Errorf("talhão %s: cell %s: %w", fieldID, cellID, err)
	}
	return p, nil
}

// cellID is the stable id of the cell at row, col.
func cellID(row, col int) string { return fmt.Sprintf("r%03dc%03d", row, col) }

// fallbackCell gives a talhão with no regular centre one interior point, in
// its largest part.
func fallbackCell(f Field, pm orb.MultiPolygon, tm *tmProj, gi0, gj1 int, side float64) (Cell, error) {
	best, bestA := -1, 0.0
	for i, p := range pm {
		if a := polyArea(p); a > bestA {
			best, bestA = i, a
		}
	}
	if best < 0 {
		return Cell{}, fmt.Errorf("talhão %s: no interior point: zero area", f.ID)
	}
	pt, ok := interiorPoint(pm[best])
	if !ok {
		return Cell{}, fmt.Errorf("talhão %s: no interior point in polygon %d", f.ID, best+1)
	}
	col := int(math.Floor(pt[0]/side)) - gi0
	row := gj1 - int(math.Floor(pt[1]/side))
	return Cell{
		FieldID:  f.ID,
		ID:       cellID(row, col),
		Row:      row,
		Col:      col,
		Centre:   tm.inverse(pt),
		Polygon:  f.Geometry[best],
		AreaHa:   polygonAreaHa(f.Geometry[best]),
		Border:   true,
		Fallback: true,
	}, nil
}

// modis fills the MODIS fields of g (IN 6.4 I).
func modis(g *Grid, near func(orb.Bound) orb.MultiPolygon, tm *tmProj, clear func(orb.Bound) bool) {
	if !(g.AreaHa > LargeFieldHa) {
		g.MODISReason = fmt.Sprintf("area %.2f ha is not over %g ha (IN 6.4 I)", g.AreaHa, LargeFieldHa)
		return
	}
	for i := range g.Cells {
		c := &g.Cells[i]
		// Fast path: the pixel's corners in UTM, its box widened by 1 m for
		// the curvature of its sides (under 1 mm), clear of the boundary.
		x0, y0, x1, y1 := modisPixelBounds(c.Centre)
		var b orb.Bound
		for k, q := range [4][2]float64{{x0, y0}, {x1, y0}, {x1, y1}, {x0, y1}} {
			lat := q[1] / modisR
			u := tm.forward(orb.Point{q[0] / (modisR * math.Cos(lat)) / degRad, lat / degRad})
			if k == 0 {
				b = orb.Bound{Min: u, Max: u}
			} else {
				b = b.Extend(u)
			}
		}
		b = b.Pad(1)
		if !c.Fallback && clear(b) {
			c.MODIS = true
			g.MODISPoints++
			continue
		}
		pr := projectRing(modisPixel(c.Centre), tm.forward)
		if ringInside(near(pr.Bound()), pr) {
			g.Cells[i].MODIS = true
			g.MODISPoints++
		}
	}
	need := int(math.Ceil(g.AreaHa / modisHaPerPoint))
	if g.MODISPoints >= need {
		g.MODISEligible = true
		return
	}
	g.MODISReason = fmt.Sprintf("%d points with their whole MODIS pixel inside the talhão, need %d (one per 10 ha of %.2f ha, IN 6.4 I)", g.MODISPoints, need, g.AreaHa)
}

func projectRing(r orb.Ring, f func(orb.Point) orb.Point) orb.Ring {
	out := make(orb.Ring, len(r))
	for i, p := range r {
		out[i] = f(p)
	}
	return out
}

func projectPoly(p orb.Polygon, f func(orb.Point) orb.Point) orb.Polygon {
	out := make(orb.Polygon, len(p))
	for i, r := range p {
		out[i] = projectRing(r, f)
	}
	return out
}

func projectMP(mp orb.MultiPolygon, f func(orb.Point) orb.Point) orb.MultiPolygon {
	out := make(orb.MultiPolygon, len(mp))
	for i, p := range mp {
		out[i] = projectPoly(p, f)
	}
	return out
}

// geosClipper intersects squares with one talhão through OGR/GEOS.
type geosClipper struct {
	field *godal.Geometry
}

func newGEOSClipper(pm orb.MultiPolygon) (*geosClipper, error) {
	b, err := wkb.Marshal(pm)
	if err != nil {
		return nil, fmt.Errorf("encode talhão: %w", err)
	}
	g, err := godal.NewGeometryFromWKB(b, nil)
	if err != nil {
		return nil, fmt.Errorf("load talhão in OGR: %w", err)
	}
	return &geosClipper{field: g}, nil
}

func (c *geosClipper) close() { c.field.Close() }

// clip returns the piece of square s inside the talhão that holds centre.
func (c *geosClipper) clip(s orb.Bound, centre orb.Point) (orb.Polygon, error) {
	b, err := wkb.Marshal(s.ToPolygon())
	if err != nil {
		return nil, fmt.Errorf("encode square: %w", err)
	}
	sg, err := godal.NewGeometryFromWKB(b, nil)
	if err != nil {
		return nil, fmt.Errorf("load square in OGR: %w", err)
	}
	defer sg.Close()
	ig, err := c.field.Intersection(sg)
	if err != nil {
		return nil, fmt.Errorf("clip square: %w", err)
	}
	defer ig.Close()
	ib, err := ig.WKB()
	if err != nil {
		return nil, fmt.Errorf("clip square: %w", err)
	}
	geom, err := wkb.Unmarshal(ib)
	if err != nil {
		return nil, fmt.Errorf("decode clipped square: %w", err)
	}
	var polys []orb.Polygon
	var collect func(orb.Geometry)
	collect = func(g orb.Geometry) {
		switch t := g.(type) {
		case orb.Polygon:
			polys = append(polys, t)
		case orb.MultiPolygon:
			polys = append(polys, t...)
		case orb.Collection:
			for _, m := range t {
				collect(m)
			}
		}
	}
	collect(geom)
	var best orb.Polygon
	bestD := math.Inf(1)
	for _, p := range polys {
		if inside(orb.MultiPolygon{p}, centre) {
			return p, nil
		}
		// centre on an edge of the piece: take the nearest piece
		if d := boundaryDist(orb.MultiPolygon{p}, centre); d < bestD {
			best, bestD = p, d
		}
	}
	if best == nil {
		return nil, errors.New("clip square: empty intersection")
	}
	return best, nil
}
