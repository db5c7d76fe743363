package export

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/paulmach/orb"
	"github.com/paulmach/orb/encoding/wkb"
)

// copyCells are n cells of talhões F0000…, in the dataset order, with
// polygons big enough (WKB of 20 vertices) that parquet-go cuts pages
// every couple of thousand rows.
func copyCells(t *testing.T, from, n int) []CellRow {
	t.Helper()
	rows := make([]CellRow, n)
	for i := range rows {
		k := from + i
		x, y := -55+float64(k%1000)*1e-3, -12+float64(k/1000)*1e-3
		ring := orb.Ring{}
		for v := range 20 {
			ring = append(ring, orb.Point{x + float64(v%5)*1e-5, y + float64(v/5)*1e-5 + float64(k%7)*1e-7})
		}
		ring = append(ring, ring[0])
		g, err := wkb.Marshal(orb.Polygon{ring})
		if err != nil {
			t.Fatal(err)
		}
		rows[i] = CellRow{FieldID: fmt.Sprintf("F%04d", k/300), CellID: fmt.Sprintf("F%04d-c%06d", k/300, k), Row: int32(k % 300), Col: int32(k % 17),
			Geometry: g, CentreLon: x, CentreLat: y, AreaHa: 5 + float64(k%11)/10, Border: k%3 == 0}
	}
	return rows
}

// TestCopySameBytes: publishing a dataset by Copy of each batch's file
// gives the bytes that one Write of each batch's rows gives, with row
// groups cut inside batches and at their edges; and a chunk size that is
// not a multiple of 64 would not (so the test can tell).
func TestCopySameBytes(t *testing.T) {
	sizes := []int{7001, 12345, 1, 0, 9653, 640, 10000}
	var batches [][]byte
	from := 0
	for _, n := range sizes {
		var b bytes.Buffer
		if err := Write(&b, copyCells(t, from, n), Options{}); err != nil {
			t.Fatal(err)
		}
		batches = append(batches, b.Bytes())
		from += n
	}
	o := Options{Version: "test", RowGroupRows: 10000}
	var want bytes.Buffer
	w := NewWriter[CellRow](&want, o)
	for _, raw := range batches {
		rows, err := Read[CellRow](bytes.NewReader(raw), int64(len(raw)))
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Write(rows); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	copied := func(chunk int64) []byte {
		var got bytes.Buffer
		w := NewWriter[CellRow](&got, o)
		for _, raw := range batches {
			cp := func() error { return w.copyChunks(bytes.NewReader(raw), int64(len(raw)), chunk) }
			if chunk == copyChunkRows { // the exported Copy, at its own chunk size
				cp = func() error { return w.Copy(bytes.NewReader(raw), int64(len(raw))) }
			}
			if err := cp(); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if w.Rows() != int64(from) {
			t.Fatalf("chunks of %d: %d rows copied, want %d", chunk, w.Rows(), from)
		}
		return got.Bytes()
	}
	for _, chunk := range []int64{64, 128, copyChunkRows, 1 << 20} {
		if got := copied(chunk); !bytes.Equal(got, want.Bytes()) {
			t.Errorf("chunks of %d rows: %d bytes, differ from one Write per batch (%d bytes)", chunk, len(got), want.Len())
		}
	}
	if bytes.Equal(copied(100), want.Bytes()) {
		t.Errorf("chunks of 100 rows give the same bytes: the test does not see page cuts")
	}
}
