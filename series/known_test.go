package series

import (
	"math"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/manejo/manejo/grid"
)

// TestKnownPairs is the seam of the observation cache: a Sample that is
// told some (talhão, item) pairs are known, and is given their raw
// observations as SceneRead reported them, reads only the other pairs and
// returns exactly what a Sample reading everything returns (observations,
// scene counts, IN 6.5 gaps).
func TestKnownPairs(t *testing.T) {
	dir := t.TempDir()
	var feats []map[string]any
	var grids []grid.Grid
	for i, d := range []string{"2024-01-01", "2024-01-11", "2024-01-21", "2024-02-10"} {
		scl := 4.0
		if i == 2 {
			scl = 9 // cloudy over cell a
		}
		it, p := s2Spec(scl, 1200+float64(100*i)).build(t, dir, "s"+d, d+"T13:00:00Z")
		feats = append(feats, it)
		if grids == nil {
			grids = []grid.Grid{fieldAround("f1", 0.0002, p...), fieldAround("f2", 0.0002, p[1])}
		}
	}
	// A second tile of the last date: same-date observations collapse.
	it, _ := s2Spec(4, 1900).build(t, dir, "s2024-02-10-b", "2024-02-10T13:00:00Z")
	feats = append(feats, it)
	writeJSON(t, filepath.Join(dir, "catalog.json"), collection(feats...))
	cat := filepath.Join(dir, "catalog.json")

	var reads []SceneRead
	fresh, fst := sampleDir(t, cat, grids, Options{OnScene: func(s SceneRead) { reads = append(reads, s) }})
	if len(reads) != 10 {
		t.Fatalf("%d scene reads reported, want 5 scenes × 2 talhões", len(reads))
	}
	// Cache f1's first three scenes and f2's last two.
	known := map[[2]string]bool{}
	var cached []Obs
	for _, s := range reads {
		d := s.Item.Datetime.Format("2006-01-02")
		if (s.FieldID == "f1" && d < "2024-02-01") || (s.FieldID == "f2" && d >= "2024-02-01") {
			known[[2]string{s.FieldID, s.Item.ID}] = true
			cached = append(cached, s.Obs...)
		}
	}
	var again []SceneRead
	got, st := sampleDir(t, cat, grids, Options{
		Known:   func(f string, it *Item) bool { return known[[2]string{f, it.ID}] },
		Cached:  cached,
		OnScene: func(s SceneRead) { again = append(again, s) },
	})
	if len(again) != 10-len(known) {
		t.Errorf("%d pairs read with a cache of %d, want %d", len(again), len(known), 10-len(known))
	}
	for _, s := range again {
		if known[[2]string{s.FieldID, s.Item.ID}] {
			t.Errorf("known pair %s × %s was read", s.FieldID, s.Item.ID)
		}
	}
	if !sameObs(got, fresh) {
		t.Errorf("observations with known pairs differ from a full read:\n%+v\n%+v", got, fresh)
	}
	if !reflect.DeepEqual(st.Gaps, fst.Gaps) || st.Scenes != fst.Scenes {
		t.Errorf("gaps %+v scenes %d, want %+v %d", st.Gaps, st.Scenes, fst.Gaps, fst.Scenes)
	}
	// f1's three early scenes are not read at all; the later two are read
	// for f1, and the early ones for f2: every scene is still read once.
	if fst.ScenesRead != 5 || st.ScenesRead != 5 || st.Reads > fst.Reads || fst.Reads == 0 {
		t.Errorf("scenes read %d/%d, GDAL reads %d/%d", st.ScenesRead, fst.ScenesRead, st.Reads, fst.Reads)
	}
	// Everything known: nothing is read, the result is still the same.
	all, st2 := sampleDir(t, cat, grids, Options{Known: func(string, *Item) bool { return true }, Cached: cachedAll(reads)})
	if st2.ScenesRead != 0 || st2.Reads != 0 || !sameObs(all, fresh) || !reflect.DeepEqual(st2.Gaps, fst.Gaps) {
		t.Errorf("all known: %d scenes and %d GDAL calls read, same observations %v, gaps %+v", st2.ScenesRead, st2.Reads, sameObs(all, fresh), st2.Gaps)
	}
	// Cached observations of an item the run does not select (before
	// From) are not used.
	from := mustTime("2024-01-05")
	late, _ := sampleDir(t, cat, grids, Options{From: from})
	got, _ = sampleDir(t, cat, grids, Options{From: from, Known: func(string, *Item) bool { return true }, Cached: cachedAll(reads)})
	if len(late) == len(fresh) || !sameObs(got, late) {
		t.Errorf("from %s: %d observations with everything cached, want the %d of a full read (not %d)", from, len(got), len(late), len(fresh))
	}
}

func cachedAll(rs []SceneRead) []Obs {
	var out []Obs
	for _, s := range rs {
		out = append(out, s.Obs...)
	}
	return out
}

// sameObs compares observations field by field, NaN equal to NaN.
func sameObs(a, b []Obs) bool {
	if len(a) != len(b) {
		return false
	}
	eq := func(x, y float32) bool {
		return x == y || (math.IsNaN(float64(x)) && math.IsNaN(float64(y)))
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.FieldID != y.FieldID || x.CellID != y.CellID || !x.Date.Equal(y.Date) || x.Collection != y.Collection || x.ItemID != y.ItemID || x.Mask != y.Mask ||
			!eq(x.NDVI, y.NDVI) || !eq(x.NDTI, y.NDTI) || !eq(x.Red, y.Red) || !eq(x.NIR, y.NIR) || !eq(x.SWIR1, y.SWIR1) || !eq(x.SWIR2, y.SWIR2) {
			return false
		}
	}
	return true
}
