package pipeline

import (
	"context"
	"slices"
	"testing"

	"github.com/manejo/manejo/coverage"
	"github.com/manejo/manejo/export"
	"github.com/manejo/manejo/grid"
	"github.com/manejo/manejo/series"
	"github.com/paulmach/orb"
)

// TestAnalyseNoReadingsReasons (issue 29): a talhão without a clear
// observation gets one reason for T and one for C, both saying so, where C
// used to repeat each season's failure to find a crop cycle in no
// readings; typed, each reason's text is its subject and detail.
func TestAnalyseNoReadingsReasons(t *testing.T) {
	season, _ := coverage.ParseSeason("2026/2027", coverage.MonthDay{})
	f := grid.Field{ID: "T01", Crop: "soja",
		Geometry: orb.MultiPolygon{{{{-55.6, -11.8}, {-55.59, -11.8}, {-55.59, -11.79}, {-55.6, -11.79}, {-55.6, -11.8}}}}}
	g, err := grid.Build(f, grid.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := newStage(&inputs{cfg: Config{Season: season, AsOf: season.Start.AddDate(0, 0, -1)}}, "test")
	out := s.analyse(context.Background(), g, nil, series.Gap{}, nil, nil)
	want := []string{
		"T: no clear observation in the archive",
		"C: no clear observation in the archive",
		"slope: no usable DEM (--dem)",
		"sinm: build payload of talhão T01: sinm: monitored period missing",
	}
	if !slices.Equal(out.Indicator.Reasons, want) {
		t.Errorf("reasons %q, want %q", out.Indicator.Reasons, want)
	}
	for i, why := range export.ParseReasons(out.Indicator.Reasons) {
		if sub := []export.Subject{export.SubjectT, export.SubjectC, export.SubjectSlope, export.SubjectSINM}[i]; why.Subject != sub {
			t.Errorf("reason %d read back with subject %q, want %q", i, why.Subject, sub)
		}
	}
}
