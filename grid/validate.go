package grid

import (
	"errors"
	"fmt"
	"math"
	"sort"

	"github.com/paulmach/orb"
)

// ErrInvalid is wrapped by every geometry error of Validate.
var ErrInvalid = errors.New("grid: invalid talhão")

// maxFieldHa is the largest talhão Validate accepts (1 million ha, ten
// thousand km²): anything larger is a projection or unit mistake.
const maxFieldHa = 1e6

// Validate checks that f is a talhão manejo can grid: a non-empty Polygon
// or MultiPolygon in lon/lat degrees whose rings are closed with at least 4
// positions, with no self-intersection (the error gives the lon/lat of the
// crossing), holes inside their shells, parts that do not overlap, non-zero
// area, and coordinates that look like lon/lat (not swapped lat/lon, not
// projected metres). Errors name the talhão and wrap ErrInvalid.
func Validate(f Field) error {
	if err := validate(f.Geometry); err != nil {
		return fmt.Errorf("talhão %s: %w: %w", f.ID, ErrInvalid, err)
	}
	return nil
}

func validate(mp orb.MultiPolygon) error {
	if len(mp) == 0 {
		return errors.New("empty geometry")
	}
	if err := checkCoords(mp); err != nil {
		return err
	}
	for i, p := range mp {
		if len(p) == 0 {
			return fmt.Errorf("polygon %d is empty", i+1)
		}
		for j, r := range p {
			if len(r) < 4 {
				return fmt.Errorf("%s has %d positions, need at least 4", ringName(i, j), len(r))
			}
			if r[0] != r[len(r)-1] {
				return fmt.Errorf("%s is not closed (first %v, last %v)", ringName(i, j), r[0], r[len(r)-1])
			}
		}
	}
	if err := checkCrossings(mp); err != nil {
		return err
	}
	for i, p := range mp {
		for j, r := range p {
			if ringArea(r) == 0 {
				return fmt.Errorf("%s has zero area", ringName(i, j))
			}
		}
	}
	// holes inside their shell, parts disjoint
	for i, p := range mp {
		for j := 1; j < len(p); j++ {
			if q, ok := outsideVertex(p[0], p[j]); ok {
				return fmt.Errorf("%s lies outside its shell (at lon %.7f lat %.7f)", ringName(i, j), q[0], q[1])
			}
		}
	}
	if err := checkOverlaps(mp); err != nil {
		return err
	}
	if a := AreaHa(mp); !(a > 0) {
		return errors.New("zero area")
	} else if a > maxFieldHa {
		return fmt.Errorf("area %.0f ha is implausible for a talhão (over %.0f ha): check the coordinate system", a, maxFieldHa)
	}
	return nil
}

// checkOverlaps finds a part with a shell vertex strictly inside another
// part (the rings do not cross, so that is how an overlap shows). Only parts
// whose bounding boxes meet are compared, by a sweep over the boxes sorted
// by west edge: thousands of disjoint parts take near O(n log n), not
// O(n²) (issue 19). Of several overlaps, the first polygon i, then the
// first other polygon k, is reported, as a scan of every pair would.
func checkOverlaps(mp orb.MultiPolygon) error {
	bs := make([]orb.Bound, len(mp))
	for i, p := range mp {
		bs[i] = p[0].Bound()
	}
	bi, bk := -1, -1
	var bq orb.Point
	try := func(i, k int) {
		if bi >= 0 && (i > bi || (i == bi && k > bk)) {
			return
		}
		if q, ok := insideVertex(orb.MultiPolygon{mp[k]}, mp[i][0]); ok {
			bi, bk, bq = i, k, q
		}
	}
	meetingPairs(bs, func(i, k int) error {
		try(i, k)
		try(k, i)
		return nil
	})
	if bi >= 0 {
		return fmt.Errorf("polygon %d overlaps polygon %d (at lon %.7f lat %.7f)", bi+1, bk+1, bq[0], bq[1])
	}
	return nil
}

func ringName(poly, ring int) string {
	if ring == 0 {
		return fmt.Sprintf("polygon %d shell", poly+1)
	}
	return fmt.Sprintf("polygon %d hole %d", poly+1, ring)
}

// checkCoords rejects non-finite values and coordinates that are not
// plausibly lon/lat.
func checkCoords(mp orb.MultiPolygon) error {
	b := mp.Bound()
	for _, poly := range mp {
		for _, r := range poly {
			for _, q := range r {
				if math.IsNaN(q[0]) || math.IsNaN(q[1]) || math.IsInf(q[0], 0) || math.IsInf(q[1], 0) {
					return fmt.Errorf("non-finite coordinate %v", q)
				}
			}
		}
	}
	q := b.Min
	switch {
	case math.Max(math.Abs(b.Min[0]), math.Abs(b.Max[0])) > 1000 || math.Max(math.Abs(b.Min[1]), math.Abs(b.Max[1])) > 1000:
		return fmt.Errorf("coordinates look projected (e.g. x %.1f y %.1f, metres?), not lon/lat degrees: give GeoJSON in EPSG:4326 or a GPKG/SHP with its CRS", q[0], q[1])
	case math.Abs(b.Min[1]) > 90 || math.Abs(b.Max[1]) > 90:
		if math.Abs(b.Min[0]) <= 90 && math.Abs(b.Max[0]) <= 90 && math.Abs(b.Min[1]) <= 180 && math.Abs(b.Max[1]) <= 180 {
			return fmt.Errorf("latitude %.6f out of range: axes look swapped (lat,lon); GeoJSON is lon,lat", q[1])
		}
		return fmt.Errorf("latitude %.6f out of range [-90, 90]", q[1])
	case math.Abs(b.Min[0]) > 180 || math.Abs(b.Max[0]) > 180:
		return fmt.Errorf("longitude %.6f out of range [-180, 180]", q[0])
	case b.Max[0]-b.Min[0] > 180:
		return errors.New("spans more than 180° of longitude (crosses the antimeridian?)")
	}
	// Read as lat,lon, a Brazilian talhão falls in the South Atlantic or
	// off Antarctica (x in [-34, 6], y in [-74, -28]), where no farm is.
	if b.Min[0] >= -34 && b.Max[0] <= 6 && b.Min[1] >= -74 && b.Max[1] <= -28 {
		return fmt.Errorf("position lon %.6f lat %.6f is in the South Atlantic; as lat,lon it is in Brazil: axes look swapped (GeoJSON is lon,lat)", q[0], q[1])
	}
	return nil
}

type edge struct {
	a, b       orb.Point
	poly, ring int
	idx, n     int // index of the edge in its ring, edges in the ring
}

// checkCrossings finds two edges of mp that cross or touch, other than
// consecutive edges of one ring at their shared vertex. Edges are compared
// within each polygon, then between polygons whose bounding boxes meet; a
// sweep over the edges sorted by west end keeps each comparison near
// O(n log n) for real talhões, and thousands of parts are not compared
// pairwise (issue 19).
func checkCrossings(mp orb.MultiPolygon) error {
	byPoly := make([][]edge, len(mp))
	bs := make([]orb.Bound, len(mp))
	for i, p := range mp {
		for j, r := range p {
			// drop repeated positions, harmless in GeoJSON
			rr := make(orb.Ring, 0, len(r))
			for _, q := range r {
				if len(rr) == 0 || rr[len(rr)-1] != q {
					rr = append(rr, q)
				}
			}
			n := len(rr) - 1
			if n < 3 {
				return fmt.Errorf("%s has fewer than 3 distinct positions", ringName(i, j))
			}
			for k := 1; k < len(rr); k++ {
				byPoly[i] = append(byPoly[i], edge{rr[k-1], rr[k], i, j, k - 1, n})
			}
		}
		sort.Slice(byPoly[i], func(a, b int) bool { return edgeMinX(byPoly[i][a]) < edgeMinX(byPoly[i][b]) })
		if err := sweepCrossings(byPoly[i], false); err != nil {
			return err
		}
		bs[i] = p.Bound()
	}
	return meetingPairs(bs, func(i, k int) error {
		es := append(append(make([]edge, 0, len(byPoly[i])+len(byPoly[k])), byPoly[i]...), byPoly[k]...)
		sort.Slice(es, func(a, b int) bool { return edgeMinX(es[a]) < edgeMinX(es[b]) })
		return sweepCrossings(es, true)
	})
}

// meetingPairs calls fn once for each pair of bounds that meet, by a sweep
// over the bounds sorted by west edge, so disjoint parts are never compared
// pairwise; the first error fn returns stops the sweep and is returned.
func meetingPairs(bs []orb.Bound, fn func(i, k int) error) error {
	order := make([]int, len(bs))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool { return bs[order[a]].Min[0] < bs[order[b]].Min[0] })
	for a, i := range order {
		for _, k := range order[a+1:] {
			if bs[k].Min[0] > bs[i].Max[0] {
				break
			}
			if bs[k].Min[1] > bs[i].Max[1] || bs[k].Max[1] < bs[i].Min[1] {
				continue
			}
			if err := fn(i, k); err != nil {
				return err
			}
		}
	}
	return nil
}

func edgeMinX(e edge) float64 { return math.Min(e.a[0], e.b[0]) }

// sweepCrossings checks the edges es, sorted by west end, for a crossing;
// with across, only between edges of different polygons (each polygon of
// the pair was checked on its own).
func sweepCrossings(es []edge, across bool) error {
	for i := range es {
		e := es[i]
		ex := math.Max(e.a[0], e.b[0])
		eyl, eyh := math.Min(e.a[1], e.b[1]), math.Max(e.a[1], e.b[1])
		for j := i + 1; j < len(es) && edgeMinX(es[j]) <= ex; j++ {
			o := es[j]
			if across && o.poly == e.poly {
				continue
			}
			if math.Max(o.a[1], o.b[1]) < eyl || math.Min(o.a[1], o.b[1]) > eyh {
				continue
			}
			q, hit := segCross(e.a, e.b, o.a, o.b)
			if !hit {
				continue
			}
			if e.poly == o.poly && e.ring == o.ring {
				d := (e.idx - o.idx + e.n) % e.n
				adjacent := d == 1 || d == e.n-1
				if adjacent && (q == e.a || q == e.b) && !collinearOverlap(e, o) {
					continue
				}
				return fmt.Errorf("%s self-intersects at lon %.7f lat %.7f", ringName(e.poly, e.ring), q[0], q[1])
			}
			// Rings of one polygon may touch at a single vertex (OGC).
			if e.poly == o.poly && (q == e.a || q == e.b) && (q == o.a || q == o.b) && !collinearOverlap(e, o) {
				continue
			}
			return fmt.Errorf("%s crosses %s at lon %.7f lat %.7f", ringName(e.poly, e.ring), ringName(o.poly, o.ring), q[0], q[1])
		}
	}
	return nil
}

// collinearOverlap reports whether two edges lie on one line and share
// more than a point (a spike going back on itself).
func collinearOverlap(e, o edge) bool {
	if orient(e.a, e.b, o.a) != 0 || orient(e.a, e.b, o.b) != 0 {
		return false
	}
	// project on the dominant axis
	ax := 0
	if math.Abs(e.b[0]-e.a[0]) < math.Abs(e.b[1]-e.a[1]) {
		ax = 1
	}
	lo := math.Max(math.Min(e.a[ax], e.b[ax]), math.Min(o.a[ax], o.b[ax]))
	hi := math.Min(math.Max(e.a[ax], e.b[ax]), math.Max(o.a[ax], o.b[ax]))
	return hi > lo
}

// outsideVertex returns a vertex of hole that lies outside shell (the rings
// do not cross, so one strictly-outside vertex proves it).
func outsideVertex(shell, hole orb.Ring) (orb.Point, bool) {
	mp := orb.MultiPolygon{{shell}}
	for _, q := range hole {
		if !inside(mp, q) && boundaryDist(mp, q) > 0 {
			return q, true
		}
	}
	return orb.Point{}, false
}

// insideVertex returns a vertex of ring strictly inside polygon p (its
// holes excluded).
func insideVertex(p orb.MultiPolygon, ring orb.Ring) (orb.Point, bool) {
	for _, q := range ring {
		if inside(p, q) && boundaryDist(p, q) > 0 {
			return q, true
		}
	}
	return orb.Point{}, false
}
