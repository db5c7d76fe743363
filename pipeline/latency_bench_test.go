package pipeline

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/manejo/manejo/internal/testkit"
	"github.com/manejo/manejo/storage/s3test"
)

// remoteRun starts a loopback S3 server with the faults f, uploads the
// test archive to it (faults off), and returns the Config of a run reading
// every input from it and writing to a local folder, and the server's
// fault counter. GDAL's own retries wait 50 ms instead of 0.5 s, so a
// benchmark measures the latency, not GDAL's default back-off.
func remoteRun(tb testing.TB, f s3test.Faults) (Config, *s3test.Flaky) {
	tb.Helper()
	dir := archive(tb)
	fl := serveArchive(tb, f, "remote", dir)
	tb.Setenv("GDAL_HTTP_RETRY_DELAY", "0.05")
	cfg := baseConfig(tb, "", "")
	remoteInputs(&cfg, "s3://remote/archive")
	return cfg, fl
}

// sameOutputs fails unless the data files of got equal those of want.
func sameOutputs(tb testing.TB, what, want, got string) {
	tb.Helper()
	w, g := testkit.HashTree(tb, want, "run.json", "run/"), testkit.HashTree(tb, got, "run.json", "run/")
	if len(w) != len(g) {
		tb.Errorf("%s: %d files, want %d", what, len(g), len(w))
	}
	for k, v := range w {
		if g[k] != v {
			tb.Errorf("%s: %s differs from the local, fault-free run", what, k)
		}
	}
}

var latencies = []int{0, 20, 40, 80}

// BenchmarkRemoteLatency runs the worker (default batch size, workers and
// --io-concurrency) on the test archive (6 talhões, 147 Sentinel-2 scenes
// of 5 COGs each) read from local files, then served by a loopback S3
// server that delays every answer by 0, 20, 40 and 80 ms, then at 40 ms
// with 5 % of the requests failing, and reports each remote run's wall
// time as a ratio to the zero-latency run of the same benchmark
// (latency_ratio), with the requests the server answered. Every output
// must equal that of the local run byte for byte.
func BenchmarkRemoteLatency(b *testing.B) {
	// The reference: the same run on local files, at the default batch
	// size (part files hold a row group per batch, so it shapes the bytes).
	ref := b.TempDir()
	local := baseConfig(b, archive(b), ref)
	local.BatchSize = 0
	if _, err := Run(context.Background(), local); err != nil {
		b.Fatal(err)
	}
	var base time.Duration
	b.Run("local", func(b *testing.B) {
		cfg := local
		var wall time.Duration
		for i := 0; i < b.N; i++ {
			cfg.Out = b.TempDir()
			t0 := time.Now()
			if _, err := Run(context.Background(), cfg); err != nil {
				b.Fatal(err)
			}
			wall += time.Since(t0)
		}
		b.ReportMetric((wall / time.Duration(b.N)).Seconds(), "s/run")
	})
	for _, ms := range latencies {
		b.Run(fmt.Sprintf("latency=%dms", ms), func(b *testing.B) {
			per := remoteBench(b, ref, s3test.Faults{Latency: time.Duration(ms) * time.Millisecond})
			if ms == 0 {
				base = per
			}
			if base > 0 {
				b.ReportMetric(per.Seconds()/base.Seconds(), "latency_ratio")
			}
		})
	}
	// 5 % of the requests fail (503 and resets, half each): the same bytes,
	// at the cost of the retries.
	b.Run("latency=40ms,faults=5%", func(b *testing.B) {
		per := remoteBench(b, ref, s3test.Faults{Latency: 40 * time.Millisecond, Rate503: 0.025, RateDrop: 0.025, Seed: 15})
		if base > 0 {
			b.ReportMetric(per.Seconds()/base.Seconds(), "latency_ratio")
		}
	})
}

// remoteBench runs the worker b.N times over a server with faults f,
// checks the outputs against ref, reports s/run and requests/run and
// returns the time per run.
func remoteBench(b *testing.B, ref string, f s3test.Faults) time.Duration {
	cfg, fl := remoteRun(b, f)
	cfg.BatchSize = 0 // the default, as `manejo run` without --batch-size
	var wall time.Duration
	for i := 0; i < b.N; i++ {
		cfg.Out = b.TempDir()
		t0 := time.Now()
		if _, err := Run(context.Background(), cfg); err != nil {
			b.Fatal(err)
		}
		wall += time.Since(t0)
		sameOutputs(b, fmt.Sprintf("%+v", f), ref, cfg.Out)
	}
	per := wall / time.Duration(b.N)
	b.ReportMetric(per.Seconds(), "s/run")
	b.ReportMetric(float64(fl.Requests())/float64(b.N), "requests/run")
	return per
}
