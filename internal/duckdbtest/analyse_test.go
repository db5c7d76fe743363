package duckdbtest

import (
	"context"
	"database/sql"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/manejo/manejo/coverage"
	"github.com/manejo/manejo/export"
	"github.com/manejo/manejo/pipeline"
	"github.com/manejo/manejo/sinm"
	"github.com/manejo/manejo/zarc"
)

// checkAnalyse runs the export query of docs/series.md ("Observation
// tables") as written on the demo run, writes its result as CSV with
// DuckDB, analyses that CSV with manejo analyse's pipeline.AnalyseTable and
// finds the run's events, seasons, cycles, and T and C with their levels
// (issue 17 item 4: analyse on the demo run's own observations exported to
// CSV with DuckDB). The query gives no declared practices, so no payload is
// compared.
func checkAnalyse(t *testing.T, db *sql.DB, dir, archive, doc string) {
	var stmt string
	for _, s := range sqlStatements(doc) {
		if strings.Contains(s, "AS point_id") {
			stmt = strings.TrimSuffix(s, ";")
		}
	}
	if stmt == "" {
		t.Fatal("docs/series.md has no observation-table query")
	}
	table := filepath.Join(dir, "table.csv")
	if _, err := db.Exec("COPY (" + stmt + ") TO '" + table + "' (HEADER)"); err != nil {
		t.Fatalf("DuckDB: %v\n%s", err, stmt)
	}
	season, _ := coverage.ParseSeason("2026/2027", coverage.MonthDay{})
	out := filepath.Join(dir, "analysed")
	sum, err := pipeline.AnalyseTable(context.Background(), pipeline.TableConfig{Observations: table, Sowing: filepath.Join(archive, "sowing.csv"),
		Out: out, Season: season, AsOf: time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC),
		Codes: sinm.SatelliteCodes{"sentinel-2-l2a": "S01", "dem": "S09"}, Version: "test", Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("analysis of the DuckDB export: %+v", sum)
	run, ana := os.DirFS(filepath.Join(dir, "out")), os.DirFS(out)
	same[export.EventRow](t, run, ana)
	same[export.SeasonRow](t, run, ana)
	same[export.CycleRow](t, run, ana)
	ri, _ := export.ReadDataset[export.IndicatorRow](run)
	ai, err := export.ReadDataset[export.IndicatorRow](ana)
	if err != nil || len(ai) != len(ri) || len(ri) == 0 {
		t.Fatalf("indicators: run %d, analysis %d (%v)", len(ri), len(ai), err)
	}
	sort.Slice(ri, func(i, j int) bool { return ri[i].FieldID < ri[j].FieldID })
	sort.Slice(ai, func(i, j int) bool { return ai[i].FieldID < ai[j].FieldID })
	for i := range ri {
		r, a := ri[i], ai[i]
		type tc struct {
			T, TMin, C, Slope *float64
			TLevel, CLevel    *int32
			Seasons           []string
			Start, End        *zarc.Date
			AreaHa            float64
		}
		want := tc{r.TYears, r.TYearsMin, r.CPct, r.SlopeMeanPct, r.TLevel, r.CLevel, r.CSeasons, r.PeriodStart, r.PeriodEnd, r.AreaHa}
		got := tc{a.TYears, a.TYearsMin, a.CPct, a.SlopeMeanPct, a.TLevel, a.CLevel, a.CSeasons, a.PeriodStart, a.PeriodEnd, a.AreaHa}
		if r.FieldID != a.FieldID || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: analysis T/C %+v, run %+v", r.FieldID, got, want)
		}
	}
}

// same checks that dataset T holds the same rows in both outputs.
func same[T export.Row](t *testing.T, a, b fs.FS) {
	t.Helper()
	ra, err := export.ReadDataset[T](a)
	if err != nil {
		t.Fatal(err)
	}
	rb, err := export.ReadDataset[T](b)
	if err != nil {
		t.Fatal(err)
	}
	name := export.DatasetOf[T]().Name
	// Shards split the rows by talhão: compare them in one order.
	byValue := func(rs []T) {
		sort.Slice(rs, func(i, j int) bool {
			x, _ := json.Marshal(rs[i])
			y, _ := json.Marshal(rs[j])
			return string(x) < string(y)
		})
	}
	byValue(ra)
	byValue(rb)
	if len(ra) == 0 || len(ra) != len(rb) {
		t.Errorf("%s: run %d rows, analysis %d", name, len(ra), len(rb))
		return
	}
	for i := range ra {
		if !reflect.DeepEqual(ra[i], rb[i]) {
			t.Errorf("%s row %d: run %+v, analysis %+v", name, i, ra[i], rb[i])
			return
		}
	}
	t.Logf("%s: %d rows, the same", name, len(ra))
}
