package series

import (
	"slices"
	"strings"
	"sync"

	"github.com/airbusgeo/godal"
)

// HeaderBytes is what Minimum counts for the header of each remote file
// opened: one 16 KiB range (GDAL reads a file's first bytes in chunks of
// that size), or the bytes before the file's first full-resolution tile
// when fewer (a small file holds its data in its first chunk).
const HeaderBytes = 16 << 10

// Minimum accumulates the least that a set of scene reads could have
// fetched from object stores: for each remote file opened, its header
// (HeaderBytes) and the compressed tiles of full resolution that hold at
// least one cell centre read, each tile counted once however many times,
// by however many batches or attempts, it was read. Its methods are safe
// for concurrent use. A run compares it with what GDAL received
// (IOStats.Bytes): the ratio is how many times over the run read what it
// needed.
type Minimum struct {
	mu    sync.Mutex
	files map[string]*minFile
}

type minFile struct {
	collection string
	header     int64
	tiles      map[int64]int64 // offset → compressed size
}

// MinStat is the minimum of one collection: bytes, HTTP requests (one for
// each file's header, one for each run of consecutive tiles: what GDAL's
// merged range requests could do at best) and tiles.
type MinStat struct {
	Bytes, Requests, Tiles int64
}

// NewMinimum returns an empty Minimum.
func NewMinimum() *Minimum { return &Minimum{files: map[string]*minFile{}} }

// band records the blocks (column, row) of a band of the remote file at
// path that hold cells, from the TIFF metadata GDAL exposes for each
// block (BLOCK_OFFSET_x_y, BLOCK_SIZE_x_y). Blocks without that metadata
// (not a tiled GeoTIFF) are left out.
func (m *Minimum) band(collection, path string, b godal.Band, blocks [][2]int) {
	if m == nil {
		return
	}
	first := blockMeta(b, "OFFSET", 0, 0)
	type tile struct{ off, size int64 }
	var ts []tile
	for _, k := range blocks {
		if off, size := blockMeta(b, "OFFSET", k[0], k[1]), blockMeta(b, "SIZE", k[0], k[1]); off >= 0 && size > 0 {
			ts = append(ts, tile{off, size})
		}
	}
	// A signed href's query string changes when the catalog is signed
	// again; the file is the same.
	path, _, _ = strings.Cut(path, "?")
	m.mu.Lock()
	defer m.mu.Unlock()
	f := m.files[path]
	if f == nil {
		f = &minFile{collection: collection, header: HeaderBytes, tiles: map[int64]int64{}}
		m.files[path] = f
	}
	if first >= 0 && first < f.header {
		f.header = first
	}
	for _, t := range ts {
		f.tiles[t.off] = t.size
	}
}

// ByCollection returns the minimum of each collection read so far.
func (m *Minimum) ByCollection() map[string]MinStat {
	out := map[string]MinStat{}
	if m == nil {
		return out
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, f := range m.files {
		s := out[f.collection]
		s.Bytes += f.header
		s.Requests++
		offs := make([]int64, 0, len(f.tiles))
		for o := range f.tiles {
			offs = append(offs, o)
		}
		slices.Sort(offs)
		end := int64(-1)
		for _, o := range offs {
			sz := f.tiles[o]
			// A tile inside the header's range costs nothing more.
			if o+sz <= f.header {
				continue
			}
			if o < f.header {
				sz -= f.header - o
				o = f.header
			}
			s.Bytes += sz
			s.Tiles++
			if o != end {
				s.Requests++
			}
			end = o + sz
		}
		out[f.collection] = s
	}
	return out
}
