package pipeline

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/manejo/manejo/grid"
)

// tenSquares lays 10 squares of 20.48 km of the Sentinel-2 grid (4 × 3 from
// the tile's corner, as synth --tiles 10 does) with k talhões of 300–700 m
// each at random places inside them (60 m from their edges), so some
// cross the lines of 5.12 and 10.24 km within.
func tenSquares(t *testing.T, k int, seed uint64) ([][5]float64, []grid.Field) {
	rng := rand.New(rand.NewPCG(26, seed))
	var rects [][5]float64
	for s := range 10 {
		x0, y0 := testULX+float64(s%4)*20_480, testULY-float64(s/4+1)*20_480
		for range k {
			w, h := 300+400*rng.Float64(), 300+400*rng.Float64()
			x, y := x0+60+rng.Float64()*(20_480-120-w), y0+60+rng.Float64()*(20_480-120-h)
			rects = append(rects, [5]float64{x, y, w, h})
		}
	}
	return rects, utmFields(t, rects)
}

// TestBlockShards: over 10 squares of 20.48 km cut into 16 shards (more
// shards than squares, so every square is split), the block search's
// shards reach fewer 512-px blocks of 10 m (5.12 km squares) in all than
// the cut on the grid's lines, whatever the input order; every shard
// keeps its estimated cells within ±25 % of the mean (plus the largest
// talhão); with 5 shards each takes 2 whole squares.
func TestBlockShards(t *testing.T) {
	rects, fields := tenSquares(t, 100, 5)
	const n = 16
	at := blockShards(fields, n, grid.Options{}, s2Layouts(512), nil)
	shuffled := slices.Clone(fields)
	rand.New(rand.NewPCG(26, 6)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	again := blockShards(shuffled, n, grid.Options{}, s2Layouts(512), nil)
	weight := make([]float64, n)
	total, largest := 0.0, 0.0
	for _, f := range fields {
		if again[f.ID] != at[f.ID] {
			t.Fatalf("talhão %s: shard %d, %d with the input shuffled", f.ID, at[f.ID], again[f.ID])
		}
		w := estimatedCells(f, grid.Options{})
		weight[at[f.ID]] += w
		total += w
		largest = max(largest, w)
	}
	for s, w := range weight {
		if tol := 2*cutSlack*total/n + largest; math.Abs(w-total/n) > tol {
			t.Errorf("shard %d holds %.0f estimated cells, want %.0f ± %.0f", s, w, total/n, tol)
		}
	}
	cut := spatialShards(fields, n, grid.Options{})
	for _, side := range []float64{5_120, 10_240} {
		a, b := touched(rects, fields, at, side), touched(rects, fields, cut, side)
		t.Logf("squares of %.2f km reached: block search %d, cut on grid lines %d", side/1000, a, b)
		if a >= b {
			t.Errorf("16 shards reach %d squares of %.2f km in all, the cut on grid lines %d", a, side/1000, b)
		}
	}
	at = blockShards(fields, 5, grid.Options{}, s2Layouts(512), nil)
	squares := map[int]map[int]bool{}
	for i, f := range fields {
		s := at[f.ID]
		if squares[s] == nil {
			squares[s] = map[int]bool{}
		}
		squares[s][i/100] = true
	}
	for s := range 5 {
		if len(squares[s]) != 2 {
			t.Errorf("shard %d holds talhões of %d squares, want 2 whole ones", s, len(squares[s]))
		}
	}
}

// TestShardBlockPxParams: the block search's block size is part of a
// space-sharded run's parameters hash (another size, another assignment),
// --shard-block-px -1 keeps the hash of the cut before it, and neither
// changes a hash-sharded or unsharded run's.
func TestShardBlockPxParams(t *testing.T) {
	hash := func(by string, count, px int) string {
		c := Config{ShardBy: by, Shard: Shard{0, count}, ShardBlockPx: px}
		return paramsHash(c, map[string]string{"talhoes.geojson": "x"})
	}
	if hash(ShardBySpace, 4, 0) != hash(ShardBySpace, 4, DefaultShardBlockPx) {
		t.Error("--shard-block-px 0 and its default give other hashes")
	}
	if hash(ShardBySpace, 4, 0) == hash(ShardBySpace, 4, 512) || hash(ShardBySpace, 4, 0) == hash(ShardBySpace, 4, -1) {
		t.Error("another block size or the cut alone keep the block search's hash")
	}
	if hash(ShardByHash, 4, 512) != hash(ShardByHash, 4, -1) || hash(ShardBySpace, 1, 512) != hash(ShardBySpace, 1, -1) {
		t.Error("the block size changes a hash-sharded or unsharded run's hash")
	}
}
