package tillage

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestEventEvidence: a tilled field of the note world (drop 0.07 of NDTI)
// read by two sensors, one of them 0.03 of NDTI higher: the event carries
// its test, the drop against its noise, the dates of both levels and both
// sensors, and the sensor offset does not enter the drop.
func TestEventEvidence(t *testing.T) {
	fields, tilled := noteWorld(rand.New(rand.NewPCG(7, 0x2026)), 0.012, 0.005, 0.07)
	if !tilled[0] {
		t.Fatal("field 0 of the note world is not tilled")
	}
	cells := fields[0]
	for c := range cells {
		for k := range cells[c].Obs {
			if o := &cells[c].Obs[k]; k%2 == 1 {
				o.Sensor = "landsat-c2-l2"
				o.NDTI += 0.03
			}
		}
	}
	ev := Detect(cells, Calibrate(cells, DefaultParams()))
	if len(ev) != 1 {
		t.Fatalf("%d events, want 1: %+v", len(ev), ev)
	}
	e := ev[0]
	t.Logf("%+v", e)
	if e.Test == "" {
		t.Error("event without its test")
	}
	if math.Abs(e.NDTIDrop-0.07) > 0.015 {
		t.Errorf("NDTI drop %.4f, want 0.07 ± 0.015 (the sensor offset removed)", e.NDTIDrop)
	}
	if !(e.NDTINoise > 0 && e.NDTINoise < e.NDTIDrop/4) {
		t.Errorf("noise %.4f, want in (0, drop/4) for a drop 0.07 with date σ 0.005", e.NDTINoise)
	}
	if e.DatesBefore < 3 || e.DatesAfter < 2 {
		t.Errorf("dates before / after %d / %d, want ≥ 3 / ≥ 2", e.DatesBefore, e.DatesAfter)
	}
	if want := []string{"landsat-c2-l2", "sentinel-2-l2a"}; !slices.Equal(e.Sensors, want) {
		t.Errorf("sensors %v, want %v", e.Sensors, want)
	}
	if e.NInterior < len(cells)/2 {
		t.Errorf("%d points agree of %d, want at least half", e.NInterior, len(cells))
	}
}

// TestStrongestStep: on a six-month series without an event the strongest
// step is reported below the threshold; on a tilled field with a clean
// drop it is the tillage, above it.
func TestStrongestStep(t *testing.T) {
	fields, tilled := noteWorld(rand.New(rand.NewPCG(3, 0x2026)), 0.012, 0, 0.07)
	asOf := fields[0][0].Obs[len(fields[0][0].Obs)-1].Date
	for i, cells := range fields {
		b, ok := StrongestStep(cells, DefaultParams(), asOf)
		if !ok {
			t.Fatalf("field %d: no step measured on a six-month series", i)
		}
		if tilled[i] != (b.MagnitudeSigma > StepK) {
			t.Errorf("field %d (tilled %v): strongest step z %.1f on %s", i, tilled[i], b.MagnitudeSigma, b.After.Format("2006-01-02"))
		}
		if tilled[i] && math.Abs(b.PreLevel-b.PostLevel-0.07) > 0.01 {
			t.Errorf("field %d: strongest step %.3f → %.3f, want a drop of 0.07", i, b.PreLevel, b.PostLevel)
		}
	}
}
