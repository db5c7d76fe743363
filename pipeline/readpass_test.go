package pipeline

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/manejo/manejo/storage/s3test"
)

// TestReadPassSameOutputs: a run whose scenes are read by the read pass
// (forced on local files), in groups small enough that the talhões of a
// batch come from several groups and a group's scenes are read in several
// date ranges, writes the same datasets and payloads, byte for byte, as
// the reference run, and records the pass in run.json.
func TestReadPassSameOutputs(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end runs skipped in -short mode")
	}
	t.Parallel()
	ref, _ := reference(t)
	cfg := baseConfig(t, archive(t), t.TempDir())
	cfg.ReadPass, cfg.ReadCells, cfg.ReadPairs = ReadPassOn, 40, 2000
	if _, err := Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	sameOutputs(t, "read pass", ref, cfg.Out)
	m, err := readManifest(context.Background(), filepath.Join(cfg.Out, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	if m.Counts["read_pass_scenes"] == 0 {
		t.Errorf("run.json counts no scene read by the read pass: %v", m.Counts)
	}
}

// TestProgressWithinBatch: a portfolio smaller than one batch, read from
// a loopback S3 server, reports progress while the read pass and the
// batch run (not only at the start and the end), with the bytes GDAL
// received: at the end at least what run.json's io counts for the scenes,
// and a rate in MB/s.
func TestProgressWithinBatch(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end runs skipped in -short mode")
	}
	cfg, _ := remoteRun(t, s3test.Faults{Latency: 5 * time.Millisecond})
	cfg.Out, cfg.BatchSize, cfg.ProgressEvery = t.TempDir(), 64, 20*time.Millisecond
	var mu sync.Mutex
	var ps []Progress
	cfg.OnProgress = func(p Progress) {
		mu.Lock()
		ps = append(ps, p)
		mu.Unlock()
	}
	if _, err := Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	m, err := readManifest(context.Background(), filepath.Join(cfg.Out, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	var scenes int64
	for _, v := range m.IO {
		scenes += v.Bytes
	}
	phases := map[string]int{}
	for _, p := range ps {
		phases[p.Phase]++
	}
	if phases["read"] == 0 || phases["batch"] < 2 {
		t.Errorf("progress by phase %v: want reports during the read pass and during the one batch", phases)
	}
	last := ps[len(ps)-1]
	if last.Phase != "done" || scenes == 0 || last.BytesRead < scenes || !(last.MBps > 0) {
		t.Errorf("last progress %+v: want done with at least the %d bytes run.json counts for the scenes, and MB/s", last, scenes)
	}
}
