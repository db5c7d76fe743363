package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/manejo/manejo/coverage"
	"github.com/manejo/manejo/export"
	"github.com/manejo/manejo/internal/testkit"
	"github.com/manejo/manejo/sim/synth"
	"github.com/manejo/manejo/sinm"
	"github.com/manejo/manejo/storage"
	"github.com/manejo/manejo/storage/s3test"
)

var (
	archiveOnce sync.Once
	archiveDir  string
	archiveErr  error
)

// archive builds one synthetic archive for every test of the package: 6
// talhões (one of them with a bad geometry added below), Sentinel-2 COGs
// every 10 days over four agricultural years.
func archive(tb testing.TB) string {
	tb.Helper()
	archiveOnce.Do(func() {
		archiveDir, archiveErr = sharedTempDir("worker-archive-")
		if archiveErr != nil {
			return
		}
		_, archiveErr = synth.Generate(context.Background(), synth.Options{Out: archiveDir, Seed: 42, RevisitDays: 10})
		if archiveErr != nil {
			return
		}
		// A talhão with a self-intersecting ring: it must fail alone.
		var b []byte
		b, archiveErr = os.ReadFile(filepath.Join(archiveDir, "talhoes.geojson"))
		if archiveErr != nil {
			return
		}
		bad := `{"type":"Feature","properties":{"id":"BAD-BOWTIE"},"geometry":{"type":"Polygon","coordinates":[[[-55.61,-11.81],[-55.60,-11.80],[-55.61,-11.80],[-55.60,-11.81],[-55.61,-11.81]]]}}`
		s := string(b)
		i := strings.LastIndex(s, "]")
		s = s[:i] + "," + bad + s[i:]
		archiveErr = os.WriteFile(filepath.Join(archiveDir, "talhoes.geojson"), []byte(s), 0o644)
	})
	if archiveErr != nil {
		tb.Fatalf("synthetic archive: %v", archiveErr)
	}
	return archiveDir
}

var (
	refOnce sync.Once
	refDir  string
	refSum  Summary
	refErr  error
)

// reference runs the pipeline once on the shared archive with baseConfig,
// uninterrupted and fault-free: the output every other run must reproduce.
func reference(tb testing.TB) (string, Summary) {
	tb.Helper()
	dir := archive(tb)
	refOnce.Do(func() {
		refDir, refErr = sharedTempDir("worker-reference-")
		if refErr != nil {
			return
		}
		refSum, refErr = Run(context.Background(), baseConfig(tb, dir, refDir))
	})
	if refErr != nil {
		tb.Fatalf("reference run: %v", refErr)
	}
	return refDir, refSum
}

// The end-to-end tests of this package call t.Parallel unless they change
// process-wide state: environment variables (t.Setenv, which every test on
// the S3 protocol server does through s3test) or the reference run's
// folder (TestRunEndToEnd reruns into it). Go starts the parallel tests
// only once every sequential one has ended, so they never meet such a
// change; among
// themselves they share the archives, the reference run and the manejo
// binary read-only, each writing into its own temporary folders. Their
// waits (a lease's TTL, a killed child, a throttled API) then overlap
// another test's work.
func TestMain(m *testing.M) {
	var err error
	if sharedRoot, err = storage.NewScratch("manejo-pipeline-test-"); err != nil {
		fmt.Fprintln(os.Stderr, "pipeline tests:", err)
		os.Exit(1)
	}
	code := m.Run()
	sharedRoot.Close()
	os.Exit(code)
}

// sharedRoot is this test process's storage.Scratch, in which the
// package's shared fixtures are made (the archives, the reference run, the
// manejo binary: about 180 MB). TestMain removes it; a test process killed
// or timed out before that (its TestMain never ends) leaves it to the next
// run of the package's tests, which removes it — never a live run's.
var sharedRoot *storage.Scratch

// sharedTempDir makes a folder for one shared fixture in sharedRoot.
func sharedTempDir(prefix string) (string, error) {
	return os.MkdirTemp(sharedRoot.Dir, prefix)
}

func baseConfig(tb testing.TB, dir, out string) Config {
	season, err := coverage.ParseSeason("2026/2027", coverage.MonthDay{})
	if err != nil {
		tb.Fatal(err)
	}
	return Config{
		Fields:  filepath.Join(dir, "talhoes.geojson"),
		Catalog: filepath.Join(dir, "catalog.json"),
		DEM:     filepath.Join(dir, "dem.tif"),
		Sowing:  filepath.Join(dir, "sowing.csv"),
		Out:     out,
		Season:  season,
		AsOf:    time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC),
		Codes:   sinm.SatelliteCodes{"sentinel-2-l2a": "S01", "dem": "S09"},
		Version: "test",
		Workers: 2,
		// 7 talhões in 3 batches: resuming and killing have batches to
		// skip, as they would over thousands of talhões.
		BatchSize: 3,
	}
}

func TestRunEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run skipped in -short mode")
	}
	dir := archive(t)
	ctx := context.Background()
	outA, sum := reference(t)
	outB := t.TempDir()
	// 6 talhões + 1 bad: the bad one fails alone, every good one ends with
	// a status.
	if sum.Total != 7 || sum.Failed != 1 || sum.OK+sum.Partial != 6 {
		t.Fatalf("summary = %+v, want 7 talhões with exactly 1 failed", sum)
	}
	m, err := readManifest(ctx, filepath.Join(outA, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	var bad *export.Failure
	for i, f := range m.Failures {
		if f.FieldID == "BAD-BOWTIE" {
			bad = &m.Failures[i]
		}
	}
	if bad == nil || bad.Status != export.StatusFailed || !strings.Contains(bad.Reason, "self-intersect") {
		t.Fatalf("failure of BAD-BOWTIE = %+v, want a failed status naming the self-intersection", bad)
	}
	inds, err := export.ReadDataset[export.IndicatorRow](os.DirFS(outA))
	if err != nil {
		t.Fatal(err)
	}
	if len(inds) != 6 {
		t.Fatalf("indicators.parquet has %d rows, want 6", len(inds))
	}
	for _, r := range inds {
		if r.Status != export.StatusOK && len(r.Reasons) == 0 {
			t.Errorf("talhão %s is %s with no reason", r.FieldID, r.Status)
		}
		// Every talhão's SINM payload exists and passes the JSON Schema
		// (santhosh-tekuri/jsonschema on the embedded SINM schema).
		f, err := os.Open(filepath.Join(outA, sinm.PayloadName(r.FieldID)))
		if err != nil {
			t.Errorf("talhão %s: no SINM payload: %v", r.FieldID, err)
			continue
		}
		if v := sinm.ValidatePayload(f); len(v) > 0 {
			t.Errorf("talhão %s: payload violates the SINM schema: %v", r.FieldID, v)
		}
		f.Close()
	}
	if _, err := os.Stat(filepath.Join(outA, "_staging")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("staging folder left behind after a complete run: %v", err)
	}

	// Same inputs, another folder: byte-identical data files.
	if _, err := Run(ctx, baseConfig(t, dir, outB)); err != nil {
		t.Fatal(err)
	}
	ha, hb := testkit.HashTree(t, outA, "run.json", "run/"), testkit.HashTree(t, outB, "run.json", "run/")
	if len(ha) < 12 {
		t.Fatalf("only %d output files: %v", len(ha), ha)
	}
	for k, v := range ha {
		if hb[k] != v {
			t.Errorf("%s differs between two runs of the same inputs", k)
		}
	}

	// A rerun of a complete run does nothing.
	again, err := Run(ctx, baseConfig(t, dir, outA))
	if err != nil || again.Skipped != again.Total {
		t.Fatalf("rerun of a complete run = %+v, %v; want every talhão skipped", again, err)
	}

	t.Run("resume after a killed run", func(t *testing.T) {
		out := t.TempDir()
		cfg := baseConfig(t, dir, out)
		cfg.BatchSize = 2
		killed, cancel := context.WithCancel(ctx)
		var lines bytes.Buffer
		cfg.Progress = &cancelAfter{w: &lines, after: "batch 2/", cancel: cancel}
		if _, err := Run(killed, cfg); !errors.Is(err, context.Canceled) {
			t.Fatalf("killed run error = %v, want context.Canceled", err)
		}
		// Cancelled (Ctrl-C): committed batches stay in staging; no temp
		// file, no final dataset, no manifest.
		_ = filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
			if err == nil && strings.Contains(d.Name(), ".tmp-") {
				t.Errorf("cancelled run left a temporary file %s", p)
			}
			return nil
		})
		for _, f := range []string{"indicators.parquet", "observations.parquet", "run.json"} {
			if _, err := os.Stat(filepath.Join(out, f)); err == nil {
				t.Errorf("cancelled run published %s", f)
			}
		}
		cfg.Progress = nil
		sum, err := Run(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if sum.Resumed < 2 {
			t.Fatalf("resumed %d batches, want the 2 committed before the kill", sum.Resumed)
		}
		// The resumed run's indicators equal the uninterrupted run's.
		got, err := export.ReadDataset[export.IndicatorRow](os.DirFS(out))
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(inds) {
			t.Fatalf("resumed run has %d talhões, want %d", len(got), len(inds))
		}
		hr := testkit.HashTree(t, out, "run.json", "run/")
		for _, f := range []string{"indicators.parquet", "events.parquet", "seasons.parquet"} {
			if hr[f] != ha[f] {
				// Batch size changes row groups, not values: compare values.
				t.Logf("%s bytes differ with another batch size; comparing rows", f)
			}
		}
		for i := range got {
			if got[i].FieldID != inds[i].FieldID || !equalPtr(got[i].CPct, inds[i].CPct) || !equalPtr(got[i].TYears, inds[i].TYears) {
				t.Errorf("talhão %s after resume = %+v, want %+v", got[i].FieldID, got[i], inds[i])
			}
		}
	})

	t.Run("sharded on S3", func(t *testing.T) {
		s3test.StartS3(t, "bucket")
		// Upload the archive: rasters are then read through GDAL /vsis3/.
		uploadDir(t, dir, "s3://bucket/archive")
		var all []export.IndicatorRow
		for i := 0; i < 2; i++ {
			cfg := baseConfig(t, "", "s3://bucket/out")
			remoteInputs(&cfg, "s3://bucket/archive")
			cfg.Shard = Shard{i, 2}
			if _, err := Run(ctx, cfg); err != nil {
				t.Fatalf("shard %d/2: %v", i, err)
			}
		}
		local, err := s3test.Download(ctx, "s3://bucket/out", t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"indicators.parquet/part-00000-of-00002.parquet", "indicators.parquet/part-00001-of-00002.parquet", "run/part-00000-of-00002.json", "run/part-00001-of-00002.json"} {
			if _, err := os.Stat(filepath.Join(local, name)); err != nil {
				t.Errorf("missing shard output %s: %v", name, err)
			}
		}
		all, err = export.ReadDataset[export.IndicatorRow](os.DirFS(local))
		if err != nil {
			t.Fatal(err)
		}
		sort.Slice(all, func(i, j int) bool { return all[i].FieldID < all[j].FieldID })
		if len(all) != len(inds) {
			t.Fatalf("2 shards wrote %d talhões, want %d (each exactly once)", len(all), len(inds))
		}
		for i := range all {
			if all[i].FieldID != inds[i].FieldID || !equalPtr(all[i].CPct, inds[i].CPct) || !equalPtr(all[i].SlopeMeanPct, inds[i].SlopeMeanPct) || all[i].Status != inds[i].Status {
				t.Errorf("talhão %s from S3 shards = %+v, want %+v", all[i].FieldID, all[i], inds[i])
			}
		}
	})
}

func equalPtr[T comparable](a, b *T) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// cancelAfter cancels a context once a progress line containing after has
// been written: a node killed between two batches.
type cancelAfter struct {
	w      *bytes.Buffer
	after  string
	cancel context.CancelFunc
}

func (c *cancelAfter) Write(p []byte) (int, error) {
	c.w.Write(p)
	if strings.Contains(string(p), c.after) {
		c.cancel()
	}
	return len(p), nil
}
