package report

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/paulmach/orb"
	"github.com/paulmach/orb/encoding/wkb"

	"github.com/manejo/manejo/export"
	"github.com/manejo/manejo/sim/pheno"
	"github.com/manejo/manejo/zarc"
)

// writeOutput writes an output folder of n talhões with cells cells each,
// observed every 10 days over four agricultural years by sim/pheno:
// the shape of a real run, without running the pipeline.
func writeOutput(tb testing.TB, dir string, n, cells int) (obsRows int) {
	tb.Helper()
	start, end := time.Date(2022, 7, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 6, 30, 0, 0, 0, 0, time.UTC)
	dates := pheno.Revisit(start, end, 10)
	create := func(name string) *os.File {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			tb.Fatal(err)
		}
		return f
	}
	fObs, fCells := create("observations.parquet"), create("cells.parquet")
	wObs := export.NewWriter[export.ObsRow](fObs, export.Options{})
	wCells := export.NewWriter[export.CellRow](fCells, export.Options{})
	var inds []export.IndicatorRow
	var seasons []export.SeasonRow
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("BENCH-%05d", i)
		rng := rand.New(rand.NewPCG(uint64(i), 9))
		s := pheno.Random(rng, start, end, pheno.Options{})
		side := int(math.Ceil(math.Sqrt(float64(cells))))
		var crow []export.CellRow
		var orow []export.ObsRow
		for c := 0; c < cells; c++ {
			lon, lat := -55.6+float64(c%side)*0.001, -11.8-float64(c/side)*0.001
			poly := orb.Polygon{{{lon, lat}, {lon + 0.001, lat}, {lon + 0.001, lat - 0.001}, {lon, lat - 0.001}, {lon, lat}}}
			g, err := wkb.Marshal(poly)
			if err != nil {
				tb.Fatal(err)
			}
			cid := fmt.Sprintf("r%03dc%03d", c/side, c%side)
			crow = append(crow, export.CellRow{FieldID: id, CellID: cid, Geometry: g, CentreLon: lon + 0.0005, CentreLat: lat - 0.0005, AreaHa: 1.2})
			for _, o := range s.Observe(rng, dates, pheno.ObsOptions{}) {
				r := export.ObsRow{FieldID: id, CellID: cid, Date: zarc.DateOf(o.Date), Collection: "sentinel-2-l2a", ItemID: "S2"}
				if o.Cloud {
					m := "cloud"
					r.MaskReason = &m
				} else {
					v, t := float32(o.R.NDVI()), float32(o.R.NDTI())
					r.NDVI, r.NDTI = &v, &t
				}
				orow = append(orow, r)
			}
		}
		if err := wCells.Write(crow); err != nil {
			tb.Fatal(err)
		}
		if err := wObs.Write(orow); err != nil {
			tb.Fatal(err)
		}
		obsRows += len(orow)
		c := 50.0
		inds = append(inds, export.IndicatorRow{FieldID: id, Crop: "soja", AreaHa: 60, CellSizeHa: 1, NCells: int32(cells), CPct: &c, Status: export.StatusOK})
		for _, m := range s.MainCycles() {
			if m.Sowing.Before(start.AddDate(1, 0, 0)) || m.Sowing.After(end) {
				continue
			}
			sow := zarc.DateOf(m.Sowing)
			ws, we := sow-30, sow-1
			seasons = append(seasons, export.SeasonRow{FieldID: id, Season: fmt.Sprintf("%d/%d", m.Sowing.Year(), m.Sowing.Year()+1), SowingDate: &sow, WindowStart: &ws, WindowEnd: &we, CoverPct: &c})
		}
	}
	for _, w := range []io.Closer{wObs, wCells, fObs, fCells} {
		if err := w.Close(); err != nil {
			tb.Fatal(err)
		}
	}
	for name, write := range map[string]func(io.Writer) error{
		"indicators.parquet": func(w io.Writer) error { return export.Write(w, inds, export.Options{}) },
		"seasons.parquet":    func(w io.Writer) error { return export.Write(w, seasons, export.Options{}) },
	} {
		f := create(name)
		if err := write(f); err != nil {
			tb.Fatal(err)
		}
		f.Close()
	}
	return obsRows
}

// BenchmarkReport writes the report of outputs of 100 and 2,000 talhões
// (40 cells each, 146 dates): bytes of HTML and time per report.
func BenchmarkReport(b *testing.B) {
	for _, n := range []int{100, 2000} {
		b.Run(fmt.Sprintf("talhoes=%d", n), func(b *testing.B) {
			dir := b.TempDir()
			rows := writeOutput(b, dir, n, 40)
			b.ReportAllocs()
			b.ResetTimer()
			var st Stats
			for i := 0; i < b.N; i++ {
				var err error
				st, err = Write(context.Background(), io.Discard, os.DirFS(dir), Options{})
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(st.Bytes)/1e6, "MB/report")
			b.ReportMetric(float64(st.Bytes)/float64(n)/1e3, "kB/talhão")
			b.ReportMetric(float64(rows)/b.Elapsed().Seconds()*float64(b.N), "obs/s")
		})
	}
}
