package series

import (
	"path/filepath"
	"testing"

	"github.com/manejo/manejo/grid"
	"github.com/paulmach/orb"
)

func TestGapsAndCoarseRevisit(t *testing.T) {
	dir := t.TempDir()
	var feats []map[string]any
	var pts []orb.Point
	// Scenes every 20 days; the second is cloudy over both cells.
	for i, d := range []string{"2024-01-01", "2024-01-21", "2024-02-10", "2024-03-01"} {
		scl := 4.0
		if i == 1 {
			scl = 9
		}
		spec := s2Spec(scl, 1200)
		spec.cells[1].dn["scl"] = scl
		it, p := spec.build(t, dir, "s"+d, d+"T13:00:00Z")
		feats = append(feats, it)
		pts = p
	}
	writeJSON(t, filepath.Join(dir, "catalog.json"), collection(feats...))
	g := fieldAround("f1", 0.0002, pts...)
	_, st := sampleDir(t, filepath.Join(dir, "catalog.json"), []grid.Grid{g}, Options{})
	gp := st.Gaps["f1"]
	want := Gap{Scenes: 4, UsableDates: 3, LargestGapDays: 40, GapFrom: mustTime("2024-01-01"), GapTo: mustTime("2024-02-10"), RevisitDays: 20, Coarse: true}
	if gp != want {
		t.Errorf("gap %+v, want %+v", gp, want)
	}
	if st.Masked["cloud"] != 2 || st.Masked[""] != 6 {
		t.Errorf("masked %v, want 2 cloud 6 clear", st.Masked)
	}
}
