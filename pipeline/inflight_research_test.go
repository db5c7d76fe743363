//go:build research

package pipeline

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/manejo/manejo/storage/s3test"
)

// TestRequestsInFlight measures the figures of docs/performance.md
// "Requests in flight" and the README's --io-concurrency row: the worker
// reads the test archive from a loopback S3 server that delays every COG
// GET by 40 ms, at --io-concurrency 1 and 32, and logs for each the most
// COG GETs being served at once (s3test's PeakInFlight), the COG GETs and
// the wall time. The peak follows timing (which windows of which scenes
// meet), so it varies from run to run; the wall varies with the machine's
// load. It fails if a run is incomplete or the peak exceeds 16 GETs a
// scene in flight (four band files, each through up to maxBandHandles
// handles), the most the docs allow without abandoned scenes.
//
//	go test -tags research -count=1 -run TestRequestsInFlight -v ./pipeline/
func TestRequestsInFlight(t *testing.T) {
	cog := func(r *http.Request) bool {
		return r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, ".tif")
	}
	for _, io := range []int{1, 32} {
		cfg, fl := remoteRun(t, s3test.Faults{Latency: 40 * time.Millisecond, Match: cog})
		cfg.Out = t.TempDir()
		cfg.IOConcurrency = io
		t0 := time.Now()
		sum, err := Run(context.Background(), cfg)
		if err != nil {
			t.Fatalf("--io-concurrency %d: %v", io, err)
		}
		wall := time.Since(t0)
		if sum.Incomplete != 0 {
			t.Errorf("--io-concurrency %d: %d talhões incomplete", io, sum.Incomplete)
		}
		peak := fl.PeakInFlight()
		t.Logf("--io-concurrency %d: peak %d COG GETs at once, %d COG GETs, wall %s", io, peak, fl.Requests(), wall.Round(100*time.Millisecond))
		if peak > int64(16*io) {
			t.Errorf("--io-concurrency %d: %d GETs at once, more than 16 a scene", io, peak)
		}
	}
}
