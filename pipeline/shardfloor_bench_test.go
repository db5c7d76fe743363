package pipeline

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/airbusgeo/godal"
	"github.com/manejo/manejo/grid"
	"github.com/manejo/manejo/series"
	"github.com/manejo/manejo/storage"
)

// floorLayout is the block grid the COGs of one tile and resolution share,
// with what its files hold: the compressed bytes of each block summed over
// the files, and the files' headers (series.HeaderBytes, or the bytes
// before the first tile when fewer), as series.Minimum counts them.
type floorLayout struct {
	x0, y0, res float64
	block       int
	nx, ny      int
	bytes       []int64 // by block, row-major
	headers     int64
}

// floorCalc computes the least bytes a set of talhões needs from an
// archive, as run.json's io.min_bytes counts them (the headers of the
// files of every layout the talhões touch, and each block holding a cell
// centre once), for any partition of the talhões: the floor no reading of
// that partition can go below.
type floorCalc struct {
	layouts []*floorLayout
	need    map[string][]int64 // talhão → sorted keys layout<<32 | block
	weight  map[string]float64 // talhão → estimated cells (as spatialShards weighs)
}

// newFloorCalc reads the tile tables of every COG under dir's
// sentinel-2-l2a folder and lays the cells of fields on them.
func newFloorCalc(tb testing.TB, dir string, fields []grid.Field) *floorCalc {
	tb.Helper()
	storage.InitGDAL()
	var paths []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".tif") && strings.Contains(p, "sentinel-2-l2a") {
			paths = append(paths, p)
		}
		return err
	})
	if err != nil {
		tb.Fatal(err)
	}
	sort.Strings(paths)
	fc := &floorCalc{need: map[string][]int64{}, weight: map[string]float64{}}
	byKey := map[[3]float64]*floorLayout{}
	for _, p := range paths {
		ds, err := godal.Open(p)
		if err != nil {
			tb.Fatal(err)
		}
		gt, err := ds.GeoTransform()
		if err != nil {
			tb.Fatal(err)
		}
		b := ds.Bands()[0]
		st := b.Structure()
		k := [3]float64{gt[0], gt[3], gt[1]}
		l := byKey[k]
		if l == nil {
			l = &floorLayout{x0: gt[0], y0: gt[3], res: gt[1], block: st.BlockSizeX,
				nx: (st.SizeX + st.BlockSizeX - 1) / st.BlockSizeX, ny: (st.SizeY + st.BlockSizeY - 1) / st.BlockSizeY}
			l.bytes = make([]int64, l.nx*l.ny)
			byKey[k] = l
			fc.layouts = append(fc.layouts, l)
		}
		get := func(what string, x, y int) int64 {
			v, _ := strconv.ParseInt(b.Metadata(fmt.Sprintf("BLOCK_%s_%d_%d", what, x, y), godal.Domain("TIFF")), 10, 64)
			return v
		}
		l.headers += min(int64(series.HeaderBytes), get("OFFSET", 0, 0))
		for y := range l.ny {
			for x := range l.nx {
				l.bytes[y*l.nx+x] += get("SIZE", x, y)
			}
		}
		ds.Close()
	}
	for _, f := range fields {
		g, err := grid.Build(f, grid.Options{})
		if err != nil {
			continue
		}
		set := map[int64]bool{}
		for _, c := range g.Cells {
			_, x, y := grid.UTM(c.Centre)
			for li, l := range fc.layouts {
				col, row := math.Floor((x-l.x0)/l.res), math.Floor((l.y0-y)/l.res)
				bx, by := int(col)/l.block, int(row)/l.block
				if col < 0 || row < 0 || bx >= l.nx || by >= l.ny {
					continue
				}
				set[int64(li)<<32|int64(by*l.nx+bx)] = true
			}
		}
		keys := make([]int64, 0, len(set))
		for k := range set {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
		fc.need[f.ID] = keys
		fc.weight[f.ID] = estimatedCells(f, grid.Options{})
	}
	return fc
}

// cost is the floor of one shard whose talhões need the blocks counted in
// refs (key → number of talhões needing it).
func (fc *floorCalc) cost(refs map[int64]int) int64 {
	var n int64
	used := map[int64]bool{}
	for k := range refs {
		l := fc.layouts[k>>32]
		n += l.bytes[k&0xffffffff]
		if !used[k>>32] {
			used[k>>32] = true
			n += l.headers
		}
	}
	return n
}

// floor is the sum of the shards' floors under the assignment at (talhão
// → shard, n shards).
func (fc *floorCalc) floor(at map[string]int, n int) int64 {
	refs := fc.refs(at, n)
	var sum int64
	for _, r := range refs {
		sum += fc.cost(r)
	}
	return sum
}

func (fc *floorCalc) refs(at map[string]int, n int) []map[int64]int {
	refs := make([]map[int64]int, n)
	for i := range refs {
		refs[i] = map[int64]int{}
	}
	for id, keys := range fc.need {
		for _, k := range keys {
			refs[at[id]][k]++
		}
	}
	return refs
}

// improve moves groups of talhões between shards while that lowers the
// sum of the shards' floors and keeps every shard within ±2·cutSlack of
// the mean cells (the balance spatialShards keeps): for each block a shard
// needs, the group of its talhões needing it, to each other shard. It
// returns the assignment found (a local optimum, not a proof of the best).
func (fc *floorCalc) improve(at map[string]int, n int) map[string]int {
	m := floorMoves{fc: fc, at: map[string]int{}, w: make([]float64, n)}
	total := 0.0
	for id, s := range at {
		m.at[id] = s
		m.w[s] += fc.weight[id]
		total += fc.weight[id]
	}
	m.lo, m.hi = total/float64(n)*(1-2*cutSlack), total/float64(n)*(1+2*cutSlack)
	m.refs = fc.refs(m.at, n)
	for pass := 0; pass < 20; pass++ {
		moved := false
		for a := range n {
			groups := m.groups(a)
			keys := make([]int64, 0, len(groups))
			for k := range groups {
				keys = append(keys, k)
			}
			sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
			for _, k := range keys {
				moved = m.move(a, groups[k]) || moved
			}
		}
		if !moved {
			break
		}
	}
	return m.at
}

// floorMoves is the state of improve: the assignment, the blocks each
// shard needs (key → talhões needing it), the shards' cells and the
// balance bounds.
type floorMoves struct {
	fc     *floorCalc
	at     map[string]int
	refs   []map[int64]int
	w      []float64
	lo, hi float64
}

// groups returns shard a's groups of talhões by block they need (blocks
// needed by at most 64 of its talhões).
func (m *floorMoves) groups(a int) map[int64][]string {
	groups := map[int64][]string{}
	for id, s := range m.at {
		if s != a {
			continue
		}
		for _, k := range m.fc.need[id] {
			if m.refs[a][k] <= 64 {
				groups[k] = append(groups[k], id)
			}
		}
	}
	return groups
}

// move moves group g out of shard a to the shard where it lowers the sum
// of the floors most, within the balance bounds; false when none does (or
// a talhão of g has moved already).
func (m *floorMoves) move(a int, g []string) bool {
	fc := m.fc
	blockBytes := func(k int64) int64 { return fc.layouts[k>>32].bytes[k&0xffffffff] }
	sort.Strings(g)
	var gw float64
	cnt := map[int64]int{}
	for _, id := range g {
		if m.at[id] != a {
			return false
		}
		gw += fc.weight[id]
		for _, kk := range fc.need[id] {
			cnt[kk]++
		}
	}
	if m.w[a]-gw < m.lo {
		return false
	}
	var save int64
	for kk, c := range cnt {
		if m.refs[a][kk] == c {
			save += blockBytes(kk)
		}
	}
	best, bestDelta := -1, int64(0)
	for b := range m.w {
		if b == a || m.w[b]+gw > m.hi {
			continue
		}
		var add int64
		for kk := range cnt {
			if m.refs[b][kk] == 0 {
				add += blockBytes(kk)
			}
		}
		if d := add - save; d < bestDelta {
			best, bestDelta = b, d
		}
	}
	if best < 0 {
		return false
	}
	for _, id := range g {
		for _, kk := range fc.need[id] {
			m.refs[a][kk]--
			if m.refs[a][kk] == 0 {
				delete(m.refs[a], kk)
			}
			m.refs[best][kk]++
		}
		m.at[id] = best
	}
	m.w[a] -= gw
	m.w[best] += gw
	return true
}

// lowerBound is a floor no partition into n shards whose estimated cells
// stay under 1 + 2·cutSlack times the mean can go below, whatever the
// search: every talhão needing a block is in a shard that reads it, so a
// block needed by talhões of W estimated cells is read by at least
// ⌈W / max⌉ shards, and a layout's headers likewise.
func (fc *floorCalc) lowerBound(n int) int64 {
	total := 0.0
	for _, w := range fc.weight {
		total += w
	}
	most := total / float64(n) * (1 + 2*cutSlack)
	block := map[int64]float64{}
	layout := map[int64]float64{}
	for id, keys := range fc.need {
		seen := map[int64]bool{}
		for _, k := range keys {
			block[k] += fc.weight[id]
			if !seen[k>>32] {
				seen[k>>32] = true
				layout[k>>32] += fc.weight[id]
			}
		}
	}
	var sum int64
	for k, w := range block {
		sum += fc.layouts[k>>32].bytes[k&0xffffffff] * int64(math.Ceil(w/most))
	}
	for l, w := range layout {
		sum += fc.layouts[l].headers * int64(math.Ceil(w/most))
	}
	return sum
}

// BenchmarkShardFloor computes, for each portfolio of readPortfolios whose
// archive is built (BenchmarkReadOnce builds them), the floor of its
// shards: the sum of the shards' own minimums (run.json io.min_bytes,
// computed here from the COGs' tile tables and the talhões' cells, the
// headers included) as a ratio to the unsharded minimum, for the cut on
// grid lines (spatialShards, --shard-block-px -1), for the default
// assignment (blockShards on the archive's 512-px blocks and its
// catalog's tiles), for the best one a local search on the actual bytes
// finds from the latter or from the cut by the talhões' centres
// (centreShards): groups of talhões moved between shards while the sum
// falls and every shard stays within ±25 % of the mean cells; and the
// lower bound no partition within ±25 % can go below (lowerBound). It
// reads files only; no run.
func BenchmarkShardFloor(b *testing.B) {
	for _, p := range readPortfolios {
		dir := benchArchivePath(p.o)
		if _, err := os.Stat(filepath.Join(dir, ".complete")); err != nil {
			b.Logf("%s: no archive at %s (BenchmarkReadOnce builds it)", p.name, dir)
			continue
		}
		b.Run(p.name, func(b *testing.B) {
			fields, errs := grid.Read(context.Background(), filepath.Join(dir, "talhoes.geojson"), grid.ReadOptions{})
			if len(errs) > 0 {
				b.Fatal(errs[0])
			}
			fc := newFloorCalc(b, dir, fields)
			cat, problems := LoadCatalog(context.Background(), filepath.Join(dir, "catalog.json"), nil)
			if cat == nil {
				b.Fatal(problems)
			}
			one := map[string]int{}
			for _, f := range fields {
				one[f.ID] = 0
			}
			base := fc.floor(one, 1)
			b.ReportMetric(float64(base)/1e6, "min_MB")
			for _, n := range []int{4, 16} {
				cut := fc.floor(spatialShards(fields, n, grid.Options{}), n)
				at := blockShards(fields, n, grid.Options{}, s2Layouts(p.o.BlockSize), imageTiles(cat))
				got := fc.floor(at, n)
				bound := fc.lowerBound(n)
				b.Logf("%s: %d shards: cut on grid lines %.2f×, block search %.2f×; no partition within ±25 %% below %.2f×", p.name, n, float64(cut)/float64(base), float64(got)/float64(base), float64(bound)/float64(base))
				b.ReportMetric(float64(bound)/float64(base), fmt.Sprintf("bound%d/min", n))
				b.ReportMetric(float64(cut)/float64(base), fmt.Sprintf("cutfloor%d/min", n))
				best := min(fc.floor(fc.improve(at, n), n), fc.floor(fc.improve(centreShards(fields, n), n), n))
				b.Logf("%s: unsharded minimum %.1f MB; %d shards: blockShards %.1f MB (%.2f×), local search %.1f MB (%.2f×)",
					p.name, float64(base)/1e6, n, float64(got)/1e6, float64(got)/float64(base), float64(best)/1e6, float64(best)/float64(base))
				b.ReportMetric(float64(got)/float64(base), fmt.Sprintf("floor%d/min", n))
				b.ReportMetric(float64(best)/float64(base), fmt.Sprintf("searched%d/min", n))
			}
		})
	}
}
