package series

import (
	"encoding/binary"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/airbusgeo/godal"
)

// tileTable reads TileOffsets (324) and TileByteCounts (325) of the first
// IFD of a little-endian classic TIFF: the sizes GDAL's metadata must
// give, read here without GDAL.
func tileTable(t *testing.T, path string) (offs, sizes []int64) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	le := binary.LittleEndian
	if string(b[:4]) != "II*\x00" {
		t.Fatalf("%s: not a little-endian classic TIFF", path)
	}
	ifd := le.Uint32(b[4:])
	n := int(le.Uint16(b[ifd:]))
	read := func(typ uint16, count uint32, at []byte) []int64 {
		size := map[uint16]uint32{3: 2, 4: 4}[typ]
		data := at
		if size*count > 4 {
			data = b[le.Uint32(at):]
		}
		out := make([]int64, count)
		for i := range out {
			if typ == 3 {
				out[i] = int64(le.Uint16(data[2*i:]))
			} else {
				out[i] = int64(le.Uint32(data[4*i:]))
			}
		}
		return out
	}
	for i := 0; i < n; i++ {
		e := b[int(ifd)+2+12*i:]
		tag, typ, count := le.Uint16(e), le.Uint16(e[2:]), le.Uint32(e[4:])
		switch tag {
		case 324:
			offs = read(typ, count, e[8:12])
		case 325:
			sizes = read(typ, count, e[8:12])
		}
	}
	return offs, sizes
}

// TestMinimumTiles: the minimum of a read is the header (the bytes before
// the first tile, at most 16 KiB) and the compressed size of each needed
// tile, each once, as the file's own tile table gives them; requests are
// one per header and one per run of adjacent tiles.
func TestMinimumTiles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "b.tif")
	registerGDAL()
	ds, err := godal.Create(godal.GTiff, path, 1, godal.UInt16, 64, 64,
		godal.CreationOption("TILED=YES", "BLOCKXSIZE=16", "BLOCKYSIZE=16", "COMPRESS=DEFLATE"))
	if err != nil {
		t.Fatal(err)
	}
	px := make([]uint16, 64*64)
	rng := rand.New(rand.NewPCG(26, 1))
	for i := range px {
		px[i] = uint16(rng.IntN(1 << (4 + i%9))) // tiles of different sizes
	}
	if err := ds.Bands()[0].Write(0, 0, px, 64, 64); err != nil {
		t.Fatal(err)
	}
	if err := ds.Close(); err != nil {
		t.Fatal(err)
	}
	offs, sizes := tileTable(t, path)
	if len(offs) != 16 || len(sizes) != 16 {
		t.Fatalf("tile table: %d offsets, %d sizes, want 16", len(offs), len(sizes))
	}
	ds, err = godal.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ds.Close()
	m := NewMinimum()
	band := ds.Bands()[0]
	// Tiles (column, row): (1, 0) twice and (2, 0) beside it, then (3, 3)
	// in a second read of the same file, (1, 0) again.
	m.band("c", path, band, [][2]int{{1, 0}, {2, 0}, {1, 0}})
	m.band("c", path+"?sig=2", band, [][2]int{{3, 3}, {1, 0}})
	header := min(int64(HeaderBytes), offs[0])
	want := header + sizes[1] + sizes[2] + sizes[15]
	requests := int64(3) // the header, tiles 1–2, tile 15
	if offs[1]+sizes[1] != offs[2] {
		requests++ // tiles 1 and 2 not adjacent in the file: two runs
	}
	got := m.ByCollection()["c"]
	if got.Bytes != want || got.Tiles != 3 || got.Requests != requests {
		t.Errorf("minimum = %+v, want %d bytes, 3 tiles, %d requests (header %d, tiles %d %d %d)", got, want, requests, header, sizes[1], sizes[2], sizes[15])
	}
}
