package pipeline

import (
	"math"
	"slices"
	"sort"

	"github.com/manejo/manejo/grid"
	"github.com/manejo/manejo/series"
)

// DefaultShardBlockPx is the side, in pixels, of the COG blocks spatial
// shards are planned on when the archive does not tell (Config.ShardBlockPx):
// the blocks of Sentinel-2 L2A COGs on Earth Search and Planetary Computer.
const DefaultShardBlockPx = 1024

// blockLayout is one grid of image blocks a scene's assets are cut on, as
// the sharder counts reads: square blocks of side metres from the tile's
// north-west corner, and what a block of it costs to read, per scene: the
// sum over the assets a run reads that are cut on it of their weight
// (bandWeight for a reflectance band, qaWeight for the classification).
type blockLayout struct {
	side float64
	cost int64
}

// Weights of one compressed block of an asset: blocks of equal pixels
// hold about equal bytes whatever the resolution, a classification band
// (few values, long runs) far fewer. On the 10× benchmark portfolio a 20 m
// block of the three 20 m assets holds 1.07 times the bytes of a 10 m
// block of the two 10 m bands.
const (
	bandWeight = 4
	qaWeight   = 1
)

// s2Layouts are the block grids of a Sentinel-2 L2A scene whose COGs are
// cut in blocks of px pixels: its 10 m bands a run reads (red, nir) and
// its 20 m ones (swir16, swir22 and the scene classification).
func s2Layouts(px int) []blockLayout {
	return []blockLayout{{10 * float64(px), 2 * bandWeight}, {20 * float64(px), 2*bandWeight + qaWeight}}
}

// blockKey is one block of a layout of the tile of MGRS square column e,
// row n of UTM zone epsg.
type blockKey struct {
	epsg, layout int
	e, n         float64
	col, row     int64
}

// tilesOver calls f with the MGRS square (column e, row n) and image corner
// of each tile of the zone whose image meets box (west, south, east,
// north): a tile's image runs tileImageM east and south of its corner, so
// near a square's west or north edge a talhão lies in two or four tiles'
// images, each read by a run (tiles of other zones are left out).
func tilesOver(box [4]float64, f func(e, n, ulx, uly float64)) {
	for n := math.Floor(box[1] / tileSquareM); n <= math.Floor(box[3]/tileSquareM)+1; n++ {
		for e := math.Floor(box[0]/tileSquareM) - 1; e <= math.Floor(box[2]/tileSquareM); e++ {
			ulx, uly := tileCorner(e, n)
			if box[2] >= ulx && box[0] < ulx+tileImageM && box[1] < uly && box[3] >= uly-tileImageM {
				f(e, n, ulx, uly)
			}
		}
	}
}

// tileID is a tile of the Sentinel-2 grid: its UTM zone's EPSG code and
// the column and row of its MGRS square (eastings and northings over
// 100 km).
type tileID struct {
	epsg int
	e, n float64
}

// imageTiles is the tiles of the catalog's items (the square of each
// item's footprint centre, where a Sentinel-2 image's centre lies): the
// images a run may read. nil for no catalog.
func imageTiles(cat *series.Catalog) map[tileID]bool {
	if cat == nil {
		return nil
	}
	out := map[tileID]bool{}
	for _, it := range cat.Items {
		epsg, x, y := grid.UTM(it.BBox.Center())
		out[tileID{epsg, math.Floor(x / tileSquareM), math.Floor(y / tileSquareM)}] = true
	}
	return out
}

// blockPlan is the state of blockShards' search: the talhões in spatial
// order with the blocks each needs, and a shard for each.
type blockPlan struct {
	ids    map[blockKey]int32
	need   [][]int32 // talhão → blocks it needs, ascending
	users  [][]int32 // block → talhões needing it, ascending
	cost   []int64   // block → assets cut on its layout
	sigs   [][]int32 // runs of talhões needing the same blocks, each ascending
	weight []float64 // talhão → estimated cells
	shard  []int     // talhão → shard
	load   []float64 // shard → estimated cells
	refs   []map[int32]int32
	lo, hi float64
}

// newBlockPlan lays the talhões of order on the block grids of layouts:
// each needs every block its bounding box meets, in the image of each
// tile it lies in that is among tiles (any tile when tiles is nil). Block numbers follow the
// order, so the plan depends on the portfolio alone.
func newBlockPlan(order []placed, layouts []blockLayout, tiles map[tileID]bool) *blockPlan {
	ids := map[blockKey]int32{}
	p := &blockPlan{ids: ids, need: make([][]int32, len(order)), weight: make([]float64, len(order))}
	sigOf := map[string]int{}
	for i, o := range order {
		p.weight[i] = o.weight
		var need []int32
		b := o.pos.box
		tilesOver(b, func(e, n, ulx, uly float64) {
			if tiles != nil && !tiles[tileID{o.pos.epsg, e, n}] {
				return
			}
			for li, l := range layouts {
				c0, c1 := int64(math.Floor((b[0]-ulx)/l.side)), int64(math.Floor((b[2]-ulx)/l.side))
				r0, r1 := int64(math.Floor((uly-b[3])/l.side)), int64(math.Floor((uly-b[1])/l.side))
				for r := max(r0, 0); r <= r1; r++ {
					for c := max(c0, 0); c <= c1; c++ {
						k := blockKey{o.pos.epsg, li, e, n, c, r}
						id, ok := ids[k]
						if !ok {
							id = int32(len(p.cost))
							ids[k] = id
							p.cost = append(p.cost, l.cost)
							p.users = append(p.users, nil)
						}
						need = append(need, id)
						p.users[id] = append(p.users[id], int32(i))
					}
				}
			}
		})
		slices.Sort(need)
		p.need[i] = need
		sig := string(int32Bytes(need))
		s, ok := sigOf[sig]
		if !ok {
			s = len(p.sigs)
			sigOf[sig] = s
			p.sigs = append(p.sigs, nil)
		}
		p.sigs[s] = append(p.sigs[s], int32(i))
	}
	return p
}

// id is the number of block k, false when no talhão needs it.
func (p *blockPlan) id(k blockKey) (int32, bool) {
	id, ok := p.ids[k]
	return id, ok
}

func int32Bytes(v []int32) []byte {
	out := make([]byte, 0, 4*len(v))
	for _, x := range v {
		out = append(out, byte(x), byte(x>>8), byte(x>>16), byte(x>>24))
	}
	return out
}

// assign starts the plan from shard (talhão → one of n shards), with every
// shard to keep its estimated cells within ±2·cutSlack of the mean.
func (p *blockPlan) assign(shard []int, n int) {
	p.shard = slices.Clone(shard)
	p.load = make([]float64, n)
	p.refs = make([]map[int32]int32, n)
	for s := range p.refs {
		p.refs[s] = map[int32]int32{}
	}
	total := 0.0
	for i, s := range p.shard {
		p.load[s] += p.weight[i]
		total += p.weight[i]
		for _, b := range p.need[i] {
			p.refs[s][b]++
		}
	}
	mean := total / float64(n)
	p.lo, p.hi = mean*(1-2*cutSlack), mean*(1+2*cutSlack)
}

// total is the plan's cost: over the shards, the blocks each reads, each
// weighed by the assets cut on its layout.
func (p *blockPlan) total() int64 {
	var sum int64
	for _, r := range p.refs {
		for b := range r {
			sum += p.cost[b]
		}
	}
	return sum
}

// improve moves groups of talhões between shards while that lowers the
// plan's cost and keeps both shards within the balance bounds, for at most
// passes passes over the groups: for each block, the talhões of one shard
// that need it (a block's area changing hands); for each run of talhões
// needing the same blocks, those of one shard (the talhões across one
// block line going to the side that saves most). A group goes to the shard
// that saves most (the lowest-numbered among equals) among those already
// reading one of its blocks. Every move lowers the cost, so it ends; the
// order of everything is the plan's, so the result depends on the
// portfolio alone.
func (p *blockPlan) improve(passes int) {
	for range passes {
		moved := false
		for b := range p.users {
			moved = p.moveEach(p.users[b], []int32{int32(b)}) || moved
		}
		for _, sig := range p.sigs {
			moved = p.moveEach(sig, p.need[sig[0]]) || moved
		}
		if !moved {
			return
		}
	}
}

// moveEach tries to move, for each shard holding some of talhões, those
// it holds, to one of the shards reading one of blocks.
func (p *blockPlan) moveEach(talhoes, blocks []int32) bool {
	moved := false
	for _, a := range p.shardsOf(talhoes) {
		var group []int32
		for _, t := range talhoes {
			if p.shard[t] == a {
				group = append(group, t)
			}
		}
		var cands []int
		for _, b := range blocks {
			cands = append(cands, p.shardsOf(p.users[b])...)
		}
		slices.Sort(cands)
		moved = p.move(group, a, slices.Compact(cands)) || moved
	}
	return moved
}

// shardsOf is the shards holding some of talhões, ascending.
func (p *blockPlan) shardsOf(talhoes []int32) []int {
	var out []int
	for _, t := range talhoes {
		out = append(out, p.shard[t])
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// move moves group (talhões of shard a) to the candidate shard that lowers
// the cost most, if any does within the balance bounds.
func (p *blockPlan) move(group []int32, a int, cands []int) bool {
	gw := 0.0
	cnt := map[int32]int32{}
	for _, t := range group {
		gw += p.weight[t]
		for _, b := range p.need[t] {
			cnt[b]++
		}
	}
	if p.load[a]-gw < p.lo {
		return false
	}
	var save int64
	for b, c := range cnt {
		if p.refs[a][b] == c {
			save += p.cost[b]
		}
	}
	best, bestDelta := -1, int64(0)
	for _, c := range cands {
		if c == a || p.load[c]+gw > p.hi {
			continue
		}
		var add int64
		for b := range cnt {
			if p.refs[c][b] == 0 {
				add += p.cost[b]
			}
		}
		if d := add - save; d < bestDelta {
			best, bestDelta = c, d
		}
	}
	if best < 0 {
		return false
	}
	for _, t := range group {
		for _, b := range p.need[t] {
			if p.refs[a][b]--; p.refs[a][b] == 0 {
				delete(p.refs[a], b)
			}
			p.refs[best][b]++
		}
		p.shard[t] = best
	}
	p.load[a] -= gw
	p.load[best] += gw
	return true
}

// blockShardPasses bounds the passes of blockShards' search.
const blockShardPasses = 50

// splitCosts is, for each position i of the plan's order (0…len), about
// what a cut before talhão i costs in blocks read twice (each weighed by
// its layout's cost), the talhões across it placed on the cheaper side: a
// block whose own talhões (those whose centre lies in it, centre in
// order, at positions home[b]) fall on both sides is read by both; one on
// one side only is read by the other as well when the talhões across the
// cut go to that other side, so the cut costs the blocks of one side that
// talhões needing the other side's need, on the cheaper side.
func (p *blockPlan) splitCosts(home [][2]int) []int64 {
	n := len(p.need)
	both, left, right := make([]int64, n+2), make([]int64, n+2), make([]int64, n+2)
	add := func(d []int64, from, to int, v int64) { // v on positions from…to
		if from <= to {
			d[from] += v
			d[to+1] -= v
		}
	}
	// span of each talhão: the homes of the blocks it needs.
	lo, hi := make([]int, n), make([]int, n)
	for t, need := range p.need {
		lo[t], hi[t] = n, 0
		for _, b := range need {
			lo[t], hi[t] = min(lo[t], home[b][0]), max(hi[t], home[b][1])
		}
	}
	for b, u := range p.users {
		c0, c1 := home[b][0], home[b][1]
		add(both, c0+1, c1, p.cost[b])
		uLo, uHi := n, 0
		for _, t := range u {
			uLo, uHi = min(uLo, lo[t]), max(uHi, hi[t])
		}
		// Block on the right of cuts i ≤ c0 needed by talhões left of them;
		// on the left of cuts i > c1 needed by talhões right of them.
		add(right, uLo+1, c0, p.cost[b])
		add(left, c1+1, uHi, p.cost[b])
	}
	out := make([]int64, n+1)
	var rb, rl, rr int64
	for i := range out {
		rb, rl, rr = rb+both[i], rl+left[i], rr+right[i]
		out[i] = rb + min(rl, rr)
	}
	return out
}

// usersSplits is, for each position i of the plan's order, the blocks
// needed both before and after a cut before talhão i (each weighed by its
// layout's cost), the talhões staying where the order puts them.
func (p *blockPlan) usersSplits() []int64 {
	d := make([]int64, len(p.need)+2)
	for b, u := range p.users {
		d[u[0]+1] += p.cost[b]
		d[u[len(u)-1]+1] -= p.cost[b]
	}
	out := make([]int64, len(p.need)+1)
	var run int64
	for i := range out {
		run += d[i]
		out[i] = run
	}
	return out
}

// homes is, for each block of the plan, the first and last positions of
// the talhões of order whose centre lies in it (the first talhão needing
// it, twice, when none does).
func (p *blockPlan) homes(order []placed, layouts []blockLayout, ids func(blockKey) (int32, bool)) [][2]int {
	out := make([][2]int, len(p.users))
	for b := range out {
		out[b] = [2]int{-1, -1}
	}
	for i, o := range order {
		b := o.pos.box
		cx, cy := (b[0]+b[2])/2, (b[1]+b[3])/2
		tilesOver([4]float64{cx, cy, cx, cy}, func(e, n, ulx, uly float64) {
			for li, l := range layouts {
				id, ok := ids(blockKey{o.pos.epsg, li, e, n, int64(math.Floor((cx - ulx) / l.side)), int64(math.Floor((uly - cy) / l.side))})
				if !ok {
					continue
				}
				if out[id][0] < 0 {
					out[id][0] = i
				}
				out[id][1] = i
			}
		})
	}
	for b, h := range out {
		if h[0] < 0 {
			out[b] = [2]int{int(p.users[b][0]), int(p.users[b][0])}
		}
	}
	return out
}

// maxCutStates bounds the states of leastCuts (cut positions × shards,
// 4 bytes each kept); past it the cuts are chosen one after the other
// (cutsBy), as for 1,000 shards over more than 10,000 blocks.
const maxCutStates = 10_000_000

// leastCuts returns the n−1 cuts among the positions cand (ascending,
// 0 and the end included) whose summed cost is least while every shard
// keeps its weight (by cum) within ±2·cutSlack of the mean; among equal
// costs, the one nearest the equal split. False when no such cuts exist
// among cand or the search would pass maxCutStates.
func leastCuts(cum []float64, n int, cand []int, cost []int64) ([]int, bool) {
	items := len(cum) - 1
	total := cum[items]
	if n < 2 || len(cand) < 2 || len(cand)*n > maxCutStates || !(total > 0) {
		return nil, false
	}
	mean := total / float64(n)
	lo, hi := mean*(1-2*cutSlack), mean*(1+2*cutSlack)
	// score of a cut: its cost, then (below 1 in all) its distance from
	// the equal split; float64(…) rounds the product, so no architecture
	// fuses it into a multiply-add and every shard scores alike.
	score := func(c, j int) float64 {
		return float64(cost[c]) + math.Abs(cum[c]-float64(float64(j)*mean))/(total*float64(n))
	}
	inf := math.Inf(1)
	prev := make([]float64, len(cand))
	for x := range prev {
		prev[x] = inf
	}
	prev[0] = 0
	from := make([][]int32, n)
	for j := 1; j <= n; j++ {
		cur := make([]float64, len(cand))
		from[j-1] = make([]int32, len(cand))
		var dq []int // candidates of shard j's start, best score first
		head, next := 0, 0
		for x := range cand {
			cur[x] = inf
			w := cum[cand[x]]
			for next < x && cum[cand[next]] <= w-lo {
				if prev[next] < inf {
					for len(dq) > head && prev[dq[len(dq)-1]] > prev[next] {
						dq = dq[:len(dq)-1]
					}
					dq = append(dq, next)
				}
				next++
			}
			for head < len(dq) && cum[cand[dq[head]]] < w-hi {
				head++
			}
			if head == len(dq) || (j == n) != (cand[x] == items) {
				continue
			}
			v := prev[dq[head]]
			if j < n {
				v += score(cand[x], j)
			}
			cur[x] = v
			from[j-1][x] = int32(dq[head])
		}
		prev = cur
	}
	last := len(cand) - 1
	if cand[last] != items || prev[last] == inf {
		return nil, false
	}
	cuts := make([]int, n-1)
	for j, x := n-1, last; j > 0; j-- {
		x = int(from[j][x])
		cuts[j-1] = cand[x]
	}
	return cuts, true
}

// cutShards is the shard of each of items talhões under cuts (shard j+1
// starts at cuts[j]).
func cutShards(cuts []int, items int) []int {
	out := make([]int, items)
	s := 0
	for i := range out {
		for s < len(cuts) && i >= cuts[s] {
			s++
		}
		out[i] = s
	}
	return out
}

// blockShards assigns each talhão to one of n shards so that the shards
// read few image blocks in all (blocks of layouts in the images of tiles,
// each weighed by its layout's cost) while each keeps its estimated cells
// within ±2·cutSlack of the mean. Three starts: spatialShards' cut on the
// grid's lines, and the talhões in the order of their tile and of the
// Hilbert key of their centre cut into n runs at the block edges that
// leastCuts finds cheapest, by the blocks needed on both sides of a cut
// (usersSplits) or by those the talhões across it need from the other
// side, placed on the cheaper one (splitCosts). From each, groups of
// talhões move between shards while that lowers the blocks read
// (blockPlan.improve); the start that ends cheapest wins (the first among
// equals). It depends on the portfolio and tiles alone (geometries and
// ids), not on the input order.
func blockShards(fields []grid.Field, n int, o grid.Options, layouts []blockLayout, tiles map[tileID]bool) map[string]int {
	order, cum := spatialOrder(fields, o)
	var shard []int
	if n <= 1 || len(layouts) == 0 {
		shard = cutShards(alignedCuts(order, cum, n), len(order))
	} else {
		// One start: the cut on the grid's lines, in its own order.
		cut := map[string]int{}
		for i, s := range cutShards(alignedCuts(order, cum, n), len(order)) {
			cut[order[i].field.ID] = s
		}
		sort.SliceStable(order, func(i, j int) bool {
			a, b := order[i].pos, order[j].pos
			return a.tile < b.tile || a.tile == b.tile && a.centre < b.centre
		})
		for i, pl := range order {
			cum[i+1] = cum[i] + pl.weight
		}
		p := newBlockPlan(order, layouts, tiles)
		edges := blockEdges(order, layouts[0].side)
		starts := [][]int{make([]int, len(order))}
		for i, pl := range order {
			starts[0][i] = cut[pl.field.ID]
		}
		for _, split := range [][]int64{p.usersSplits(), p.splitCosts(p.homes(order, layouts, p.id))} {
			cuts, ok := leastCuts(cum, n, edges, split)
			if !ok {
				cuts = cutsBy(cum, n, func(i int) float64 { return float64(split[i]) })
			}
			starts = append(starts, cutShards(cuts, len(order)))
		}
		var best []int
		var bestCost int64
		for _, st := range starts {
			p.assign(st, n)
			p.improve(blockShardPasses)
			if c := p.total(); best == nil || c < bestCost {
				best, bestCost = p.shard, c
			}
		}
		shard = best
	}
	out := make(map[string]int, len(order))
	for i, pl := range order {
		out[pl.field.ID] = shard[i]
	}
	return out
}

// blockEdges is the positions of order (talhões by tile and centre key)
// where the block of side metres holding the talhão's centre changes, the
// start and end included: where leastCuts may cut.
func blockEdges(order []placed, side float64) []int {
	out := []int{0}
	at := func(p spatialPos) [3]float64 {
		return [3]float64{float64(p.tile), math.Floor((p.box[0] + p.box[2]) / 2 / side), math.Floor((p.box[1] + p.box[3]) / 2 / side)}
	}
	for i := 1; i < len(order); i++ {
		if at(order[i].pos) != at(order[i-1].pos) {
			out = append(out, i)
		}
	}
	if len(order) > 0 {
		out = append(out, len(order))
	}
	return out
}
