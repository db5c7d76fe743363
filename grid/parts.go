package grid

import (
	"math"
	"slices"

	"github.com/paulmach/orb"
)

// minIndexedParts is the number of parts from which Build indexes a
// talhão's parts by square; below it every query looks at every part.
const minIndexedParts = 16

// maxIndexEntries bounds the (square, part) pairs of an index; beyond it
// (huge nested bounding boxes) the parts are not indexed.
const maxIndexEntries = 8_000_000

// partIndex finds the parts of a talhão in the grid plane near a box
// without looking at the others: each part is listed under every square of
// the layout that its bounding box meets. Parts are disjoint (Validate), so
// a point is inside the talhão when it is inside a part whose box holds it,
// and only those parts have edges near it: queries through the index give
// the answers the whole MultiPolygon gives, in time that does not grow with
// the number of far parts (issue 19: 20k parts were quadratic).
type partIndex struct {
	l      *layout
	bounds []orb.Bound
	by     [][]int32 // parts by square, row*ncol+col
	mark   []int     // query stamp by part, for deduplication
	stamp  int
}

// newPartIndex indexes the parts of l.pm, or returns nil when there are
// too few to be worth it (fewer than minParts), or too many entries.
func newPartIndex(l *layout, minParts int) *partIndex {
	if len(l.pm) < minParts {
		return nil
	}
	x := &partIndex{l: l, bounds: make([]orb.Bound, len(l.pm)), by: make([][]int32, l.ncol*l.nrow), mark: make([]int, len(l.pm))}
	n := 0
	for i, p := range l.pm {
		x.bounds[i] = p.Bound()
		c0, c1, r0, r1 := x.squares(x.bounds[i])
		n += (c1 - c0 + 1) * (r1 - r0 + 1)
		if n > maxIndexEntries {
			return nil
		}
		for row := r0; row <= r1; row++ {
			for col := c0; col <= c1; col++ {
				x.by[row*l.ncol+col] = append(x.by[row*l.ncol+col], int32(i))
			}
		}
	}
	return x
}

// squares returns the columns and rows of the layout's squares that b
// meets, clamped to the grid.
func (x *partIndex) squares(b orb.Bound) (c0, c1, r0, r1 int) {
	l := x.l
	c0 = max(int(math.Floor(b.Min[0]/l.side))-l.gi0, 0)
	c1 = min(int(math.Floor(b.Max[0]/l.side))-l.gi0, l.ncol-1)
	r0 = max(l.gj1-int(math.Floor(b.Max[1]/l.side)), 0)
	r1 = min(l.gj1-int(math.Floor(b.Min[1]/l.side)), l.nrow-1)
	return c0, c1, r0, r1
}

// near returns the parts whose bounding box meets b, in their order in the
// talhão; with a nil index, the whole talhão of l.
func (x *partIndex) near(l *layout, b orb.Bound) orb.MultiPolygon {
	if x == nil {
		return l.pm
	}
	x.stamp++
	var ids []int
	c0, c1, r0, r1 := x.squares(b)
	for row := r0; row <= r1; row++ {
		for col := c0; col <= c1; col++ {
			for _, i := range x.by[row*l.ncol+col] {
				if x.mark[i] != x.stamp && x.bounds[i].Intersects(b) {
					x.mark[i] = x.stamp
					ids = append(ids, int(i))
				}
			}
		}
	}
	slices.Sort(ids)
	out := make(orb.MultiPolygon, len(ids))
	for k, i := range ids {
		out[k] = l.pm[i]
	}
	return out
}
