package pipeline

import (
	"context"
	"strings"
	"testing"

	"github.com/manejo/manejo/coverage"
	"github.com/manejo/manejo/grid"
	"github.com/manejo/manejo/series"
	"github.com/paulmach/orb"
)

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
	out := s.analyse(context.Background(), g, nil, series.Gap{Coarse: true}, nil, nil)
	why := strings.Join(out.Indicator.Reasons, "\n")
	if strings.Contains(why, "revisit 0 days") || !strings.Contains(why, "0 scene date(s) cover the talhão") {
		t.Errorf("reasons %q: want the scene count, not a revisit of 0 days", why)
	}
	if !strings.Contains(why, "cpfProdutor is not a valid CPF") || strings.Contains(why, "123") {
		t.Errorf("reasons %q: want the CPF note without the number", why)
	}
}
