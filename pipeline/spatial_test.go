package pipeline

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/manejo/manejo/grid"
	"github.com/paulmach/orb"
)

// TestHilbertKeyQuadtree: the keys of the cells of any aligned 4 × 4
// block of the curve's grid are 16 consecutive values (a stretch of the
// curve fills a square before it leaves it), and cells next to each other
// along the curve are neighbours on the ground.
func TestHilbertKeyQuadtree(t *testing.T) {
	const n = 1 << hilbertOrder
	fr := frame{lon0: -56, lat0: -13, kx: 1, side: 1}
	at := func(x, y int) uint64 { return fr.key(-56+(float64(x)+0.5)/n, -13+(float64(y)+0.5)/n) }
	rng := rand.New(rand.NewPCG(26, 2))
	for range 200 {
		x0, y0 := 4*rng.IntN(n/4), 4*rng.IntN(n/4)
		var keys []uint64
		pos := map[uint64][2]int{}
		for dx := range 4 {
			for dy := range 4 {
				k := at(x0+dx, y0+dy)
				keys = append(keys, k)
				pos[k] = [2]int{dx, dy}
			}
		}
		slices.Sort(keys)
		if keys[15]-keys[0] != 15 || len(pos) != 16 {
			t.Fatalf("block at (%d, %d): keys %v are not 16 consecutive values", x0, y0, keys)
		}
		for i := 1; i < 16; i++ {
			a, b := pos[keys[i-1]], pos[keys[i]]
			if d := math.Abs(float64(a[0]-b[0])) + math.Abs(float64(a[1]-b[1])); d != 1 {
				t.Fatalf("block at (%d, %d): keys %d and %d are %v and %v, not neighbours", x0, y0, keys[i-1], keys[i], a, b)
			}
		}
	}
}

// square is a talhão of side metres (roughly) with its south-west corner
// at (lon, lat).
func square(id string, lon, lat, side float64) grid.Field {
	d := side / 111_000
	return grid.Field{ID: id, Geometry: orb.MultiPolygon{{{{lon, lat}, {lon + d, lat}, {lon + d, lat + d}, {lon, lat + d}, {lon, lat}}}}}
}

// TestSpatialShards: the assignment is the same whatever the input order,
// each shard holds about a quarter of the cells (within the largest
// talhão), and a shard holds a compact area: the talhões of a 10 × 10
// checkerboard of blocks cut into 4 shards, each shard's bounding box at
// most half the portfolio's area.
func TestSpatialShards(t *testing.T) {
	var fields []grid.Field
	rng := rand.New(rand.NewPCG(26, 3))
	for i := range 400 {
		side := 300 + rng.Float64()*700
		fields = append(fields, square(fmt.Sprintf("T%03d", i), -55+float64(i%20)*0.01, -12+float64(i/20)*0.01, side))
	}
	a := spatialShards(fields, 4, grid.Options{})
	shuffled := slices.Clone(fields)
	rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	b := spatialShards(shuffled, 4, grid.Options{})
	weight := make([]float64, 4)
	bounds := make([]orb.Bound, 4)
	total, largest := 0.0, 0.0
	for _, f := range fields {
		s := a[f.ID]
		if b[f.ID] != s {
			t.Fatalf("talhão %s: shard %d, %d with the input shuffled", f.ID, s, b[f.ID])
		}
		w := estimatedCells(f, grid.Options{})
		weight[s] += w
		total += w
		largest = max(largest, w)
		if weight[s] == w {
			bounds[s] = f.Geometry.Bound()
		} else {
			bounds[s] = bounds[s].Union(f.Geometry.Bound())
		}
	}
	all := fields[0].Geometry.Bound()
	for _, f := range fields {
		all = all.Union(f.Geometry.Bound())
	}
	area := func(b orb.Bound) float64 { return (b.Max[0] - b.Min[0]) * (b.Max[1] - b.Min[1]) }
	for s := range 4 {
		if math.Abs(weight[s]-total/4) > largest {
			t.Errorf("shard %d holds %.0f estimated cells, want %.0f ± %.0f", s, weight[s], total/4, largest)
		}
		if area(bounds[s]) > area(all)/2 {
			t.Errorf("shard %d spans %.1f %% of the portfolio's bounding box", s, 100*area(bounds[s])/area(all))
		}
	}
}

// TestSpatialGroups: groups follow the spatial order, hold at most the
// cells asked (a larger talhão alone) and every talhão once.
func TestSpatialGroups(t *testing.T) {
	var fields []grid.Field
	for i := range 50 {
		fields = append(fields, square(fmt.Sprintf("G%02d", i), -55+float64(i%10)*0.02, -12+float64(i/10)*0.02, 600))
	}
	fields = append(fields, square("BIG", -54.5, -12, 5000))
	groups := spatialGroups(fields, 100, grid.Options{})
	seen := map[string]bool{}
	for _, g := range groups {
		cells := 0.0
		for _, f := range g {
			if seen[f.ID] {
				t.Fatalf("talhão %s in two groups", f.ID)
			}
			seen[f.ID] = true
			cells += estimatedCells(f, grid.Options{})
		}
		if cells > 100 && len(g) > 1 {
			t.Errorf("group of %d talhões holds %.0f estimated cells, over 100", len(g), cells)
		}
	}
	if len(seen) != len(fields) {
		t.Errorf("%d talhões in groups, want %d", len(seen), len(fields))
	}
}
