package grid

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/paulmach/orb"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// TestGolden grids testdata/golden/input.geojson (the L-shaped 250 ha demo
// talhão MT-SIN-004) and compares the cell centres with expected.geojson:
// strings and booleans exactly, numbers to two units of their last printed
// decimal (coordinates 2e-8°, about 2 mm; areas 2e-6 ha), so a value that
// moves by a rounding step on another platform does not fail it.
// Regenerate with `go test ./grid -update` after an intended change.
func TestGolden(t *testing.T) {
	dir := filepath.Join("testdata", "golden")
	fs, errs := Read(context.Background(), filepath.Join(dir, "input.geojson"), ReadOptions{})
	if len(errs) > 0 || len(fs) != 1 {
		t.Fatalf("Read: %d fields, %v", len(fs), errs)
	}
	g := mustBuild(t, fs[0], Options{})
	checkGrid(t, g, fs[0].Geometry, DefaultEdgeBufferM, noFallback) // the golden is checked by the oracles too
	var buf bytes.Buffer
	if err := WriteCellsGeoJSON(&buf, []Grid{g}); err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(dir, "expected.geojson")
	if *update {
		if err := os.WriteFile(want, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s", want)
	}
	exp, err := os.ReadFile(want)
	if err != nil {
		t.Fatalf("%v (run go test ./grid -update)", err)
	}
	type fc struct {
		Features []struct {
			Geometry struct {
				Coordinates orb.Point `json:"coordinates"`
			} `json:"geometry"`
			Properties map[string]any `json:"properties"`
		} `json:"features"`
	}
	var got, ex fc
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatalf("output is not JSON: %v", err)
	}
	if err := json.Unmarshal(exp, &ex); err != nil {
		t.Fatal(err)
	}
	if len(got.Features) != len(ex.Features) {
		t.Fatalf("%d cells, golden %d", len(got.Features), len(ex.Features))
	}
	for i := range ex.Features {
		gf, ef := got.Features[i], ex.Features[i]
		gc, ec := gf.Geometry.Coordinates, ef.Geometry.Coordinates
		if math.Abs(gc[0]-ec[0]) > 2e-8 || math.Abs(gc[1]-ec[1]) > 2e-8 {
			t.Errorf("cell %d centre %v, golden %v", i, gc, ec)
		}
		for k, ev := range ef.Properties {
			gv := gf.Properties[k]
			if en, ok := ev.(float64); ok {
				if gn, ok := gv.(float64); !ok || math.Abs(gn-en) > 2e-6 {
					t.Errorf("cell %d %s = %v, golden %v", i, k, gv, ev)
				}
			} else if gv != ev {
				t.Errorf("cell %d %s = %v, golden %v", i, k, gv, ev)
			}
		}
		if len(gf.Properties) != len(ef.Properties) {
			t.Errorf("cell %d has properties %v, golden %v", i, gf.Properties, ef.Properties)
		}
	}
}
