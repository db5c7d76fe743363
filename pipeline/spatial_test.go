package pipeline

import (
	"fmt"
	"github.com/airbusgeo/godal"
	"github.com/manejo/manejo/storage"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
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
	at := func(x, y int) uint64 { return hilbertKey(uint64(x), uint64(y)) }
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
// each shard holds about a quarter of the cells (within the slack a cut
// may take to fall on a line of the tiling grid, plus the largest
// talhão), and shards keep the imagery's blocks together: the talhões of
// a 20 × 20 checkerboard over parts of four 20.48 km squares of the
// Sentinel-2 grid cut into 4 shards, the talhões that lie inside one
// 5.12 km square of that grid (a 512-px block at 10 m) are in one shard.
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
	block := map[[2]int]int{}
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
		sq := squaresOf(lonLatBox(f), 5_120)
		if len(sq) > 1 {
			continue
		}
		for k := range sq {
			if o, ok := block[k]; ok && o != s {
				t.Errorf("shards %d and %d both hold talhões inside the 5.12 km square %v", o, s, k)
			}
			block[k] = s
		}
	}
	for s := range 4 {
		if tol := 2*cutSlack*total/4 + largest; math.Abs(weight[s]-total/4) > tol {
			t.Errorf("shard %d holds %.0f estimated cells, want %.0f ± %.0f", s, weight[s], total/4, tol)
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

// utmFields lays talhões given in UTM metres of EPSG:32721 (x, y of the
// south-west corner, width, height) as lon/lat fields, through PROJ.
func utmFields(t *testing.T, rects [][5]float64) []grid.Field {
	t.Helper()
	storage.InitGDAL()
	utm, err := godal.NewSpatialRefFromEPSG(32721)
	if err != nil {
		t.Fatal(err)
	}
	defer utm.Close()
	wgs, err := godal.NewSpatialRefFromEPSG(4326)
	if err != nil {
		t.Fatal(err)
	}
	defer wgs.Close()
	tr, err := godal.NewTransform(utm, wgs)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	var out []grid.Field
	for i, r := range rects {
		x := []float64{r[0], r[0] + r[2], r[0] + r[2], r[0], r[0]}
		y := []float64{r[1], r[1], r[1] + r[3], r[1] + r[3], r[1]}
		if err := tr.TransformEx(x, y, nil, nil); err != nil {
			t.Fatal(err)
		}
		ring := orb.Ring{}
		for k := range x {
			ring = append(ring, orb.Point{x[k], y[k]})
		}
		out = append(out, grid.Field{ID: fmt.Sprintf("U%04d", i), Geometry: orb.MultiPolygon{{ring}}})
	}
	return out
}

// The north-west corner of MGRS square 21L, column 7 (700 km E), row 86
// (8,600–8,700 km N) on the Sentinel-2 grid: 699960 E, 8700000 N.
const testULX, testULY = 699_960.0, 8_700_000.0

// alignedTile lays a regular portfolio over the 20.48 km square whose
// north-west corner is (col, row) squares of 20.48 km from the tile's
// corner: k × k talhões of 300–700 m inside it, some across a block line.
func alignedTile(col, row, k int, rng *rand.Rand) [][5]float64 {
	var rects [][5]float64
	x0, y0 := testULX+float64(col)*20_480, testULY-float64(row+1)*20_480
	step := 20_480 / float64(k)
	for i := range k {
		for j := range k {
			w, h := 300+400*rng.Float64(), 300+400*rng.Float64()
			cx, cy := x0+(float64(i)+0.5)*step, y0+(float64(j)+0.5)*step
			// Inside the square, 60 m from its edges, as a scene's talhões.
			cx = min(max(cx, x0+60+w/2), x0+20_480-60-w/2)
			cy = min(max(cy, y0+60+h/2), y0+20_480-60-h/2)
			rects = append(rects, [5]float64{cx - w/2, cy - h/2, w, h})
		}
	}
	return rects
}

// lonLatBox is f's bounding box in metres of EPSG:32721 (its corners
// projected), as [x0, y0, width, height].
func lonLatBox(f grid.Field) [5]float64 {
	bb := f.Geometry.Bound()
	x0, y0, x1, y1 := math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)
	for _, q := range []orb.Point{bb.Min, bb.Max, {bb.Min[0], bb.Max[1]}, {bb.Max[0], bb.Min[1]}} {
		x, y := grid.UTMInZone(q, 32721)
		x0, x1, y0, y1 = min(x0, x), max(x1, x), min(y0, y), max(y1, y)
	}
	return [5]float64{x0, y0, x1 - x0, y1 - y0}
}

// squaresOf is the set of squares of side metres of the grid from the
// tile corner (testULX, testULY) that the box r ([x0, y0, w, h]) touches.
func squaresOf(r [5]float64, side float64) map[[2]int]bool {
	out := map[[2]int]bool{}
	for i := int(math.Floor((r[0] - testULX) / side)); i <= int(math.Floor((r[0]+r[2]-testULX)/side)); i++ {
		for j := int(math.Floor((testULY - r[1] - r[3]) / side)); j <= int(math.Floor((testULY-r[1])/side)); j++ {
			out[[2]int{i, j}] = true
		}
	}
	return out
}

// touched is the number of (shard, square of side metres) pairs: how many
// times the squares the shards' talhões reach would be read, one shard
// after the other.
func touched(rects [][5]float64, fields []grid.Field, at map[string]int, side float64) int {
	pairs := map[[3]int]bool{}
	for i, f := range fields {
		for k := range squaresOf(rects[i], side) {
			pairs[[3]int{at[f.ID], k[0], k[1]}] = true
		}
	}
	return len(pairs)
}

// TestSpatialShardsBlockAligned: on one 20.48 km square of the Sentinel-2
// grid (one synthetic 2,048-px tile, or one 20 m block of a real one), 4
// shards take its 10.24 km quadrants (whole 20 m blocks of 512-px COGs):
// the talhões inside a quadrant are in one shard, each quadrant's in
// another, and the talhões that cross the quadrants' lines go together,
// so the shards reach into 7 quadrants in all (one shard all four, the
// others their own) against 4 for one shard; with 16 shards they reach
// fewer 5.12 km squares than shards cut at the same places by the
// talhões' centres; over 10 such squares, 5 shards take 2 whole squares
// each.
func TestSpatialShardsBlockAligned(t *testing.T) {
	rng := rand.New(rand.NewPCG(26, 4))
	one := alignedTile(2, 1, 32, rng)
	fields := utmFields(t, one)
	at := spatialShards(fields, 4, grid.Options{})
	owner := map[[2]int]int{}
	for i, f := range fields {
		sq := squaresOf(one[i], 10_240)
		if len(sq) > 1 {
			continue
		}
		for k := range sq {
			if o, ok := owner[k]; ok && o != at[f.ID] {
				t.Errorf("talhões inside quadrant %v in shards %d and %d", k, o, at[f.ID])
			}
			owner[k] = at[f.ID]
		}
	}
	if seen := map[int]bool{}; len(owner) == 4 {
		for _, s := range owner {
			seen[s] = true
		}
		if len(seen) != 4 {
			t.Errorf("the quadrants' talhões are in %d shards, want 4", len(seen))
		}
	} else {
		t.Errorf("talhões inside %d quadrants, want 4", len(owner))
	}
	if n := touched(one, fields, at, 10_240); n > 7 {
		t.Errorf("4 shards reach %d quadrants in all, want at most 7", n)
	}
	at16 := spatialShards(fields, 16, grid.Options{})
	byCentre := centreShards(fields, 16)
	if a, b := touched(one, fields, at16, 5_120), touched(one, fields, byCentre, 5_120); a >= b {
		t.Errorf("16 shards reach %d squares of 5.12 km in all, cut by centres %d", a, b)
	}
	var many [][5]float64
	for k := range 10 {
		many = append(many, alignedTile(k%4, k/4, 8, rng)...)
	}
	fields = utmFields(t, many)
	at = spatialShards(fields, 5, grid.Options{})
	tileOf := map[int]int{}
	count := map[int]int{}
	for i, f := range fields {
		tile := i / 64
		if s, ok := tileOf[tile]; ok && s != at[f.ID] {
			t.Fatalf("square %d split between shards %d and %d", tile, s, at[f.ID])
		}
		if _, ok := tileOf[tile]; !ok {
			count[at[f.ID]]++
		}
		tileOf[tile] = at[f.ID]
	}
	for s := range 5 {
		if count[s] != 2 {
			t.Errorf("shard %d holds %d squares, want 2", s, count[s])
		}
	}
}

// centreShards cuts the talhões sorted by the key of their centre on the
// tiling grid into n runs of equal cells, each talhão where the middle of
// its weight falls: the cut before the straddling talhões were ordered
// with the square they cross.
func centreShards(fields []grid.Field, n int) map[string]int {
	order, cum := spatialOrder(fields, grid.Options{})
	sort.SliceStable(order, func(i, j int) bool {
		a, b := order[i].pos, order[j].pos
		return a.tile < b.tile || a.tile == b.tile && a.centre < b.centre
	})
	total := cum[len(order)]
	out := map[string]int{}
	acc := 0.0
	for _, p := range order {
		out[p.field.ID] = min(n-1, int((acc+p.weight/2)/total*float64(n)))
		acc += p.weight
	}
	return out
}
