package report

import (
	"strings"
	"testing"
	"time"

	"github.com/manejo/manejo/export"
	"github.com/manejo/manejo/zarc"
)

// TestReportShowsEventEvidence: each event row shows its interval, test,
// size, NDTI drop against its noise with the dates of both levels, the
// points that agree and the sensors (issue 30).
func TestReportShowsEventEvidence(t *testing.T) {
	dir := t.TempDir()
	writeOutput(t, dir, 2, 4)
	d := func(s string) zarc.Date {
		x, err := time.Parse(time.DateOnly, s)
		if err != nil {
			t.Fatal(err)
		}
		return zarc.DateOf(x)
	}
	rows := []export.EventRow{
		{FieldID: "BENCH-00000", Date: d("2025-04-27"), Before: d("2025-04-11"), After: d("2025-04-27"), CellFraction: 0.75, NCells: 3,
			MagnitudeSigma: 4.2, Test: "ndti-step", NInterior: 3, NDTIDrop: new(float32(0.0712)), NDTINoise: new(float32(0.0141)),
			DatesBefore: 6, DatesAfter: 3, Sensors: []string{"landsat-c2-l2", "sentinel-2-l2a"}},
		{FieldID: "BENCH-00001", Date: d("2024-09-02"), Before: d("2024-08-20"), After: d("2024-09-02"), CellFraction: 0.5, NCells: 2,
			MagnitudeSigma: 3.3, Test: "straw-share", NInterior: 2},
	}
	page := renderWith(t, dir, "events.parquet", rows)
	for _, want := range []string{
		"2025-04-27, in (2025-04-11, 2025-04-27] · ndti-step 4.2 σ · NDTI −0.071 ± 0.014 (6 + 3 dates) · 3 of 4 points agree · landsat-c2-l2, sentinel-2-l2a",
		"2024-09-02, in (2024-08-20, 2024-09-02] · straw-share 3.3 σ · NDTI drop not readable (0 + 0 dates) · 2 of 4 points agree · sensors not recorded",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("report lacks %q", want)
		}
	}
}
