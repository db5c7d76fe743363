package sinm_test

import (
	"bytes"
	"fmt"
	"os"
	"time"

	"github.com/manejo/manejo/export"
	"github.com/manejo/manejo/grid"
	"github.com/manejo/manejo/sinm"
	"github.com/manejo/manejo/zarc"
)

func ExampleParseSatelliteCodes() {
	codes, err := sinm.ParseSatelliteCodes("sentinel-2-l2a=S01,landsat-c2-l2=S02,dem=S09")
	if err != nil {
		panic(err)
	}
	fmt.Println(codes.Code("landsat-c2-l2"))
	_, err = codes.Code("HLSS30")
	fmt.Println(err)
	// Output:
	// S02 <nil>
	// collection "HLSS30": sinm: no SINM satellite code configured (configured: dem, landsat-c2-l2, sentinel-2-l2a; add it with --satellite-codes 'HLSS30=S0n')
}

func ExampleBuildPayload() {
	start, end := zarc.DateOf(time.Date(2023, 7, 1, 0, 0, 0, 0, time.UTC)), zarc.DateOf(time.Date(2026, 6, 30, 0, 0, 0, 0, time.UTC))
	slope := 3.6
	ndvi, ndti := float32(0.19874), float32(0.06105)
	day := zarc.DateOf(time.Date(2025, 9, 22, 0, 0, 0, 0, time.UTC))
	in := sinm.PayloadInput{
		Field:     grid.Field{ID: "MT-SIN-001", PlantioContorno: new(1), Terraceamento: new(0)},
		Indicator: export.IndicatorRow{FieldID: "MT-SIN-001", PeriodStart: &start, PeriodEnd: &end, SlopeMeanPct: &slope},
		Cells:     []export.CellRow{{FieldID: "MT-SIN-001", CellID: "r000c000", CentreLon: -51.93451234, CentreLat: -24.10437712}},
		Observations: []export.ObsRow{{FieldID: "MT-SIN-001", CellID: "r000c000", Date: day,
			Collection: "sentinel-2-l2a", ItemID: "S2B_22JDQ_20250922_0_L2A", NDVI: &ndvi, NDTI: &ndti}},
		Events: []export.EventRow{{FieldID: "MT-SIN-001", Date: day, Operation: new("GRADAGEM")}},
	}
	codes, _ := sinm.ParseSatelliteCodes("sentinel-2-l2a=S01,dem=S09")
	p, err := sinm.BuildPayload(in, codes)
	if err != nil {
		panic(err)
	}
	sinm.WritePayload(os.Stdout, p)
	var buf bytes.Buffer
	sinm.WritePayload(&buf, p)
	fmt.Println(sinm.ValidatePayload(&buf) == nil)
	// Output:
	// {"dataInicial":"2023-07-01","dataFinal":"2026-06-30","declividadeMedia":4,"codigoSateliteDeclividadeMedia":"S09","plantioContorno":1,"terraceamento":0,"indices":[{"codigoSatelite":"S01","longitude":-51.934512,"latitude":-24.104377,"data":"2025-09-22","ndvi":0.1987,"ndti":0.0611}],"interpretacoesCoberturaSolo":[],"interpretacoesCultura":[],"interpretacoesManejo":[{"data":"2025-09-22","operacao":"Revolvimento do solo","tipoOperacao":"GRADAGEM"}]}
	// true
}

func ExampleValidatePayload() {
	doc := `{"dataInicial":"2023-07-01","dataFinal":"2026-06-30","declividadeMedia":4.5,"codigoSateliteDeclividadeMedia":"S09",
	"indices":[{"codigoSatelite":"S1","longitude":-51.9,"latitude":-24.1,"data":"2025-09-22","ndvi":0.19,"ndti":0.06}]}`
	for _, v := range sinm.ValidatePayload(bytes.NewReader([]byte(doc))) {
		fmt.Println(v.Path)
	}
	// Output:
	// $
	// $.declividadeMedia
	// $.indices[0].codigoSatelite
}
