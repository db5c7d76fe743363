package pipeline

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// TestMaxCellScenes: the memory budget per talhão (issue 19 defect 6) is
// the run's to set (Config.MaxCellScenes, manejo run --max-cell-scenes).
// With a budget of 200 cells × scenes, the synthetic archive's talhões
// (tens of cells over ~100 scene dates) each fail unread, with the reason
// naming their pairs and the budget; the run itself goes on to the end.
func TestMaxCellScenes(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the pipeline")
	}
	dir := archive(t)
	out := t.TempDir()
	cfg := baseConfig(t, dir, out)
	cfg.MaxCellScenes = 200
	sum, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	m, err := readManifest(context.Background(), filepath.Join(out, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	refused := 0
	for _, f := range m.Failures {
		if f.Stage == "series" && strings.Contains(f.Reason, "memory budget") && strings.Contains(f.Reason, "cells × ") {
			refused++
		}
	}
	if refused == 0 || sum.Payloads != 0 || sum.Failed < refused {
		t.Errorf("budget 200: %d talhões refused for memory, %d payloads, %d failed; want every talhão refused unread, none with a payload (failures %+v)", refused, sum.Payloads, sum.Failed, m.Failures)
	}
}
