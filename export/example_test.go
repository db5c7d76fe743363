package export_test

import (
	"bytes"
	"fmt"
	"time"

	"github.com/manejo/manejo/export"
	"github.com/manejo/manejo/zarc"
)

func ExamplePartName() {
	fmt.Println(export.PartName("indicators", 0, 1))
	fmt.Println(export.PartName("indicators", 3, 16))
	// Output:
	// indicators.parquet
	// indicators.parquet/part-00003-of-00016.parquet
}

func ExampleWrite() {
	ndvi, ndti := float32(0.2134), float32(0.1532)
	day := zarc.DateOf(time.Date(2025, 9, 12, 0, 0, 0, 0, time.UTC))
	rows := []export.ObsRow{
		{FieldID: "MT-SIN-001", CellID: "r000c001", Date: day, Collection: "sentinel-2-l2a", ItemID: "S2A_21LXH_20250912_0_L2A", NDVI: &ndvi, NDTI: &ndti},
		{FieldID: "MT-SIN-001", CellID: "r000c000", Date: day, Collection: "sentinel-2-l2a", ItemID: "S2A_21LXH_20250912_0_L2A", MaskReason: export.OptString("cloud")},
	}
	var buf bytes.Buffer
	if err := export.Write(&buf, rows, export.Options{Version: "v1.0.0"}); err != nil {
		panic(err)
	}
	back, err := export.Read[export.ObsRow](bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		panic(err)
	}
	for _, r := range back { // sorted by field, cell, date
		fmt.Println(r.CellID, r.Date, r.NDVI != nil, r.MaskReason != nil)
	}
	// Output:
	// r000c000 2025-09-12 false true
	// r000c001 2025-09-12 true false
}
