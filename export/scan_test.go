package export_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/manejo/manejo/export"
	"github.com/manejo/manejo/zarc"
)

func TestScanChunks(t *testing.T) {
	var rows []export.ObsRow
	for i := 0; i < 1000; i++ {
		v := float32(i) / 1000
		rows = append(rows, export.ObsRow{FieldID: fmt.Sprintf("F%03d", i/100), CellID: "r000c000", Date: zarc.Date(19000 + i%100), Collection: "sentinel-2-l2a", ItemID: "x", NDVI: &v})
	}
	var buf bytes.Buffer
	if err := export.Write(&buf, rows, export.Options{}); err != nil {
		t.Fatal(err)
	}
	var got []export.ObsRow
	chunks := 0
	err := export.Scan(bytes.NewReader(buf.Bytes()), int64(buf.Len()), 64, func(c []export.ObsRow) error {
		if len(c) > 64 {
			t.Fatalf("chunk of %d rows, want ≤ 64", len(c))
		}
		chunks++
		got = append(got, c...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(rows) || chunks < 16 {
		t.Fatalf("Scan gave %d rows in %d chunks, want %d rows in ≥ 16 chunks", len(got), chunks, len(rows))
	}
	for i := range rows {
		if got[i].FieldID != rows[i].FieldID || got[i].Date != rows[i].Date || *got[i].NDVI != *rows[i].NDVI {
			t.Fatalf("row %d = %+v, want %+v", i, got[i], rows[i])
		}
	}
}
