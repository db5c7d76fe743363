package pipeline

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/manejo/manejo/coverage"
	"github.com/manejo/manejo/grid"
	"github.com/manejo/manejo/series"
	"github.com/paulmach/orb"
)

// TestReadSowingReports: issue 19 defect 11 at the run. A sowing file with
// no usable row fails the run instead of silently falling back to detected
// dates; bad rows and declared ids that are no talhão (or differ in case)
// are warnings in run.json; the pt-BR dialect is read.
func TestReadSowingReports(t *testing.T) {
	write := fileWriter(t)
	newRun := func(src string) (*run, *inputs) { return inputRun(Config{Sowing: src}) }
	known := []string{"T01", "T02"}

	r, in := newRun(write("br.csv", "field_id;season;sowing_date\nT01;2024/2025;14/10/2024\nt02;2024/2025;20/10/2024\nT01;2024/2025;99/99/2024\n"))
	if err := r.readSowing(in, known, r.startSowing(context.Background())); err != nil {
		t.Fatal(err)
	}
	if d := in.declared.For("T01"); d["2024/2025"].Date.Format(time.DateOnly) != "2024-10-14" {
		t.Errorf("T01 declared %v", d)
	}
	w := strings.Join(r.m.Warnings, "\n")
	if !strings.Contains(w, "line 4:") || !strings.Contains(w, `talhão "t02" is not among`) || !strings.Contains(w, `"T02" differs only in case`) {
		t.Errorf("warnings %q: want the bad line 4 and the case mismatch", w)
	}

	r, in = newRun(write("none.csv", "field_id,season,sowing_date\nT01,2024/2025,2024-13-01\n"))
	if err := r.readSowing(in, known, r.startSowing(context.Background())); !errors.Is(err, coverage.ErrNoSowing) {
		t.Errorf("no usable row: err = %v, want ErrNoSowing", err)
	}
}

// TestManifestCoverageEffective: run.json's parameters.coverage showed
// Params{} as zeros, not the values used (issue 19 defect 12).
func TestManifestCoverageEffective(t *testing.T) {
	m := newManifest(Config{}, time.Now(), "test")
	if c := m.Parameters["coverage"]; !strings.Contains(c, "Lambda:50") || !strings.Contains(c, "WindowDays:30") || !strings.Contains(c, "soja:25.7") {
		t.Errorf("parameters.coverage = %s", c)
	}
}

// TestAnalyseNotes: a talhão outside every scene was told "revisit 0 days
// is coarser than 16 days"; an invalid CPF was dropped from the payload
// without a note (issue 19 defects 12 and 10). The note never holds the
// number.
func TestAnalyseNotes(t *testing.T) {
	season, _ := coverage.ParseSeason("2026/2027", coverage.MonthDay{})
	f := grid.Field{ID: "T01", Crop: "soja", CPFProdutor: "123.456.789-00",
		Geometry: orb.MultiPolygon{{{{-55.6, -11.8}, {-55.59, -11.8}, {-55.59, -11.79}, {-55.6, -11.79}, {-55.6, -11.8}}}}}
	g, err := grid.Build(f, grid.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := newStage(&inputs{cfg: Config{Season: season, AsOf: season.Start.AddDate(0, 0, -1)}}, "test")
	out := s.analyse(context.Background(), g, nil, series.Gap{Coarse: true}, nil)
	why := strings.Join(out.Indicator.Reasons, "\n")
	if strings.Contains(why, "revisit 0 days") || !strings.Contains(why, "0 scene date(s) cover the talhão") {
		t.Errorf("reasons %q: want the scene count, not a revisit of 0 days", why)
	}
	if !strings.Contains(why, "cpfProdutor is not a valid CPF") || strings.Contains(why, "123") {
		t.Errorf("reasons %q: want the CPF note without the number", why)
	}
}
