package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/manejo/manejo/export"
	"github.com/manejo/manejo/sim/synth"
	"github.com/manejo/manejo/sinm"
)

// demArchive is a small synthetic archive (two talhões, a few scenes) for
// the DEM fault tests: each run of it takes about a second.
func demArchive(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	_, err := synth.Generate(context.Background(), synth.Options{Out: dir, Seed: 26, Fields: 2, RevisitDays: 30, CloudScale: -1,
		Start: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), End: time.Date(2026, 7, 31, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// demFixture is a demArchive and its DEM's bytes, for the end-to-end DEM
// tests (skipped in -short mode).
func demFixture(t *testing.T) (dir string, dem []byte) {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end runs skipped in -short mode")
	}
	dir = demArchive(t)
	dem, err := os.ReadFile(filepath.Join(dir, "dem.tif"))
	if err != nil {
		t.Fatal(err)
	}
	return dir, dem
}

// demConfig is baseConfig on a demArchive, whose few months hold no
// declared sowing of the contract season.
func demConfig(t *testing.T, dir, out string) Config {
	cfg := baseConfig(t, dir, out)
	cfg.Sowing = ""
	return cfg
}

// demServer serves the DEM file dem over HTTP on loopback at /<mode>/dem.tif:
// "ok" as it is; "down" the header (the read from offset 0, GDAL's open)
// and 503 for every other range read while down is set (the tiles of a
// NASADEM answering 503 through GDAL's retries); "corrupt" the file with
// every byte after the first 16 KiB zeroed (its tiles do not decode);
// "503" 503 for everything (the open too); "absent" 404. failed counts the
// answers 503.
func demServer(t *testing.T, dem []byte, down *atomic.Bool, failed *atomic.Int64) string {
	t.Helper()
	corrupt := bytes.Clone(dem)
	clear(corrupt[16384:])
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var from int
		if rg := r.Header.Get("Range"); rg != "" {
			fmt.Sscanf(rg, "bytes=%d-", &from)
		}
		mode := strings.Split(strings.TrimPrefix(r.URL.Path, "/"), "/")[0]
		switch {
		case mode == "503" || mode == "down" && from > 0 && down.Load():
			failed.Add(1)
			w.WriteHeader(http.StatusServiceUnavailable)
		case mode == "absent":
			http.NotFound(w, r)
		case mode == "corrupt":
			http.ServeContent(w, r, "dem.tif", time.Time{}, bytes.NewReader(corrupt))
		default:
			http.ServeContent(w, r, "dem.tif", time.Time{}, bytes.NewReader(dem))
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestDEMTransientIncomplete (review #6): the DEM's tiles answer 503 on a
// loopback HTTP server through GDAL's retries. Each talhão ends
// incomplete — stage slope, the reason naming the 503 — with no indicator
// row and no payload (exit 4: the engine retries the shard; before, the
// talhões were partial with slope-failed, committed, exit 0 or 3, never
// retried). A re-run into the same folder after the fault clears writes
// the outputs of a clean run byte for byte. A permanent DEM problem stays
// what it was: corrupt tiles leave the slope missing (partial,
// slope-failed); an absent DEM is a configuration error (exit 2). A DEM
// whose open keeps failing with 503 is not a configuration error (exit 1:
// an engine retries it).
func TestDEMTransientIncomplete(t *testing.T) {
	dir, dem := demFixture(t)
	var down atomic.Bool
	var failed atomic.Int64
	url := demServer(t, dem, &down, &failed)
	// One GDAL retry per request, 10 ms apart: the fault outlasts it fast.
	t.Setenv("GDAL_HTTP_MAX_RETRY", "1")
	t.Setenv("GDAL_HTTP_RETRY_DELAY", "0.01")
	ctx := context.Background()
	ref := t.TempDir()
	clean, err := Run(ctx, demConfig(t, dir, ref))
	if err != nil || clean.Total != 2 || clean.Payloads == 0 {
		t.Fatalf("clean run: %v, %+v", err, clean)
	}

	cfg := demConfig(t, dir, t.TempDir())
	cfg.DEM = url + "/down/dem.tif"
	down.Store(true)
	sum, err := Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if failed.Load() == 0 {
		t.Fatal("no DEM read was answered 503: GDAL read the tiles with the header, the test no longer faults them")
	}
	inc := incompleteOf(t, cfg.Out)
	if sum.Incomplete != clean.Total || len(inc) != clean.Total || sum.Payloads != 0 {
		t.Fatalf("with the DEM's tiles down: %+v, incomplete %v; want every talhão incomplete, no payload", sum, inc)
	}
	for id, reason := range inc {
		if !strings.Contains(reason, "slope: ") || !strings.Contains(reason, "HTTP error code: 503") || !strings.Contains(reason, "run again") {
			t.Errorf("incomplete %s: %q; want the slope's 503 and 'run again'", id, reason)
		}
		if _, err := os.Stat(filepath.Join(cfg.Out, sinm.PayloadName(id))); err == nil {
			t.Errorf("incomplete talhão %s has a SINM payload", id)
		}
	}
	if inds, err := export.ReadDataset[export.IndicatorRow](os.DirFS(cfg.Out)); err != nil || len(inds) != 0 {
		t.Errorf("indicator rows %d (%v); want none", len(inds), err)
	}

	down.Store(false) // the fault clears
	again, err := Run(ctx, cfg)
	if err != nil || again.Incomplete != 0 || again.Payloads != clean.Payloads {
		t.Fatalf("re-run after the fault cleared: %v, %+v; want the clean run's %+v", err, again, clean)
	}
	sameOutputs(t, "re-run after the DEM's fault cleared", ref, cfg.Out)

	t.Run("corrupt", func(t *testing.T) {
		c := demConfig(t, dir, t.TempDir())
		c.DEM = url + "/corrupt/dem.tif"
		sum, err := Run(ctx, c)
		if err != nil || sum.Incomplete != 0 || sum.Partial != clean.Total {
			t.Fatalf("corrupt DEM tiles: %v, %+v; want every talhão partial, none incomplete", err, sum)
		}
		for _, f := range manifestOf(t, c.Out).Failures {
			if f.Status != export.StatusPartial || !strings.Contains(f.Reason, "slope: ") {
				t.Errorf("%s: %s %q; want partial for its slope", f.FieldID, f.Status, f.Reason)
			}
		}
	})
	t.Run("open", func(t *testing.T) {
		for mode, config := range map[string]bool{"absent": true, "503": false} {
			c := demConfig(t, dir, t.TempDir())
			c.DEM = url + "/" + mode + "/dem.tif"
			_, err := Run(ctx, c)
			if err == nil || errors.Is(err, ErrConfig) != config {
				t.Errorf("DEM %s: %v; want an error, a configuration error: %v", mode, err, config)
			}
		}
	})
}

// TestReadPhaseDEM (review s8 #12, s9 #3): the read phase of the block
// exchange reads no slope, so a DEM that fails to open transiently does
// not end it: with every request for the DEM answered 503, both shards'
// read phases ask it, log it and succeed (before s8 #12: "--dem failed
// transiently", exit 1). Once the DEM answers, the finish phases, which
// open it, accept the read phases' markers (the exchange key holds the
// DEM's fingerprint) and write the payloads of a one-phase run. A DEM
// that is not there is still refused by the read phase (ErrConfig, exit
// 2), not found by the finish after a whole read phase.
func TestReadPhaseDEM(t *testing.T) {
	dir, dem := demFixture(t)
	var down atomic.Bool
	var asked atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if down.Load() {
			asked.Add(1)
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		http.ServeContent(w, r, "dem.tif", time.Time{}, bytes.NewReader(dem))
	}))
	t.Cleanup(srv.Close)
	t.Setenv("GDAL_HTTP_MAX_RETRY", "1")
	t.Setenv("GDAL_HTTP_RETRY_DELAY", "0.01")
	ctx := context.Background()
	config := func(out string) Config {
		c := demConfig(t, dir, out)
		c.DEM = srv.URL + "/dem.tif"
		return c
	}
	ref := t.TempDir()
	if _, err := Run(ctx, config(ref)); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	down.Store(true)
	for _, p := range []string{PhaseRead, PhaseFinish} {
		if p == PhaseFinish {
			down.Store(false)
		}
		for k := range 2 {
			c := config(out)
			c.Shard, c.Phase, c.ExchangeWait = Shard{k, 2}, p, 200*time.Millisecond
			if _, err := Run(ctx, c); err != nil {
				t.Fatalf("%s phase of shard %d/2 (the DEM answering 503 in the read phases): %v", p, k, err)
			}
		}
	}
	if n := asked.Load(); n == 0 {
		t.Errorf("the read phases sent the DEM no request; want each to open it (a wrong DEM refused at once)")
	}
	samePayloads(t, "exchange with the DEM down in the read phases", ref, out)

	// A DEM that is not there is refused by the read phase itself, in
	// seconds, not by the finish after a whole read phase (review s9 #3).
	c := config(t.TempDir())
	c.DEM = filepath.Join(dir, "absent-dem.tif")
	c.Shard, c.Phase = Shard{0, 2}, PhaseRead
	if _, err := Run(ctx, c); !errors.Is(err, ErrConfig) {
		t.Errorf("read phase with an absent --dem: error %v; want ErrConfig", err)
	}
}
