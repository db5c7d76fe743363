package pipeline

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/manejo/manejo/internal/testkit"
	"github.com/manejo/manejo/sim/synth"
	"github.com/manejo/manejo/storage/s3test"
)

// denseArchive is issue 26's dense portfolio: 400 talhões on one
// 20 × 20 km Sentinel-2 tile (2,048 px of 10 m, 512-px COG tiles), a scene
// every 10 days for a year (37 scenes): `manejo synth --talhoes 400 --size
// 2048 --blocksize 512 --revisit 10 --start 2025-07-01 --end 2026-06-30
// --seed 3`.
var denseArchive = synth.Options{
	Seed: 3, Fields: 400, SceneSizePx: 2048, BlockSize: 512, RevisitDays: 10,
	Start: time.Date(2025, 7, 1, 0, 0, 0, 0, time.UTC),
	End:   time.Date(2026, 6, 30, 0, 0, 0, 0, time.UTC),
}

// cogCounter counts the GETs a loopback S3 server receives for the
// scenes' COGs (not the DEM, talhões, catalog or outputs) and the bytes
// their Range headers ask for.
// With log set, each GET is also written to it as a line "path range"
// (MANEJO_READONCE_LOG: where a run's bytes go, file by file).
type cogCounter struct {
	requests, bytes atomic.Int64
	mu              sync.Mutex
	log             io.Writer
}

func (c *cogCounter) match(r *http.Request) bool {
	if r.Method != http.MethodGet || !strings.HasSuffix(r.URL.Path, ".tif") || strings.HasSuffix(r.URL.Path, "/dem.tif") {
		return false
	}
	c.requests.Add(1)
	if c.log != nil {
		c.mu.Lock()
		fmt.Fprintf(c.log, "%s %s\n", r.URL.Path, r.Header.Get("Range"))
		c.mu.Unlock()
	}
	if rg := r.Header.Get("Range"); strings.HasPrefix(rg, "bytes=") {
		for _, part := range strings.Split(strings.TrimPrefix(rg, "bytes="), ",") {
			a, b, ok := strings.Cut(strings.TrimSpace(part), "-")
			x, e1 := strconv.ParseInt(a, 10, 64)
			y, e2 := strconv.ParseInt(b, 10, 64)
			if ok && e1 == nil && e2 == nil {
				c.bytes.Add(y - x + 1)
			}
		}
	}
	return false // count only: no fault
}

// readCase is one way of running a portfolio.
type readCase struct {
	name      string
	batchSize int    // 0: the default
	shards    int    // run one after the other
	pass      string // Config.ReadPass
	shardBy   string // Config.ShardBy
}

// exchange says whether rc runs in two phases with the block exchange
// (cases named exchange=N): every shard's read phase, then every finish.
func (rc readCase) exchange() bool { return strings.HasPrefix(rc.name, "exchange=") }

// readCases are the ways the dense portfolio is run: before (the
// read pass off, hash shards: the run before issue 26), after (one phase)
// and with the block exchange.
var readCases = []readCase{
	{"before/batch=64", 0, 1, ReadPassOff, ShardByHash},
	{"before/batch=400", 400, 1, ReadPassOff, ShardByHash},
	{"before/shards=4", 0, 4, ReadPassOff, ShardByHash},
	{"after/batch=64", 0, 1, ReadPassAuto, ShardBySpace},
	{"after/batch=16", 16, 1, ReadPassAuto, ShardBySpace},
	{"after/batch=400", 400, 1, ReadPassAuto, ShardBySpace},
	{"after/shards=4", 0, 4, ReadPassAuto, ShardBySpace},
	{"after/shards=16", 0, 16, ReadPassAuto, ShardBySpace},
	{"after/shards=4,hash", 0, 4, ReadPassAuto, ShardByHash},
	{"exchange=4", 0, 4, ReadPassAuto, ShardBySpace},
	{"exchange=16", 0, 16, ReadPassAuto, ShardBySpace},
}

// shardCases are the targets: default flags, --shards 4 and 16,
// one phase and with the block exchange (--phase read, then finish).
var shardCases = []readCase{
	{"default", 0, 1, ReadPassAuto, ShardBySpace},
	{"shards=4", 0, 4, ReadPassAuto, ShardBySpace},
	{"shards=16", 0, 16, ReadPassAuto, ShardBySpace},
	{"exchange=4", 0, 4, ReadPassAuto, ShardBySpace},
	{"exchange=16", 0, 16, ReadPassAuto, ShardBySpace},
}

// readPortfolio is a synthetic archive BenchmarkReadOnce runs, and how.
type readPortfolio struct {
	name  string
	o     synth.Options
	cases []readCase
}

// onGrid is o laid on the Sentinel-2 tiling grid in tiles scenes holding
// fields talhões in all (synth.Options.Tiles).
func onGrid(o synth.Options, tiles, fields int) synth.Options {
	o.Tiles, o.Fields = tiles, fields
	return o
}

// readPortfolios: the dense portfolio as its command builds it
// (one scene centred on synth's default point, off the Sentinel-2 block
// grid); the same on the grid (`--tiles 1`: the scene is one 20 m block of
// the real tile's 1,024-px COGs, as Sentinel-2 imagery is cut); and the
// issue's 10× portfolio, 4,000 talhões over ten such scenes (`--tiles 10
// --fields 4000`, same density).
var readPortfolios = []readPortfolio{
	{"dense", denseArchive, readCases},
	{"dense-s2", onGrid(denseArchive, 1, 400), shardCases},
	{"tenfold", onGrid(denseArchive, 10, 4000), shardCases},
}

// BenchmarkReadOnce runs each of readPortfolios with every input on a
// loopback S3 server, in each of its cases, and reports for each the COG
// bytes and GETs the server answered, as a ratio to the minimum the
// portfolio's first unsharded run with the read pass records in run.json
// (io.min_bytes: each needed compressed tile once, plus a header per
// file; bytes/min), the sum of the shards' own minimums as a ratio to it
// (floor/min: what no reading of that partition can go below) and the
// bytes over that sum (bytes/own_min), and the wall time of all its shards
// one after the other, as a ratio to the fastest unsharded run of the
// portfolio. Unsharded runs must write the same files, byte for byte, as
// the first of their batch size; sharded ones the same payloads as the
// first unsharded run. MANEJO_READONCE_CASES (a comma-separated list of
// portfolio/case names, e.g. dense/after/batch=64,tenfold/shards=4)
// limits the cases; a portfolio with none is not built or served.
// MANEJO_READONCE_SHARD=k runs only shard k of sharded cases, not the
// exchange ones whose second phase needs every shard's first (its ratios
// are then to its own minimum only), MANEJO_READONCE_LOG=file writes
// every COG GET to file (path and Range).
func BenchmarkReadOnce(b *testing.B) {
	for _, p := range readPortfolios {
		var cases []readCase
		for _, rc := range p.cases {
			if want := os.Getenv("MANEJO_READONCE_CASES"); want == "" || strings.Contains(","+want+",", ","+p.name+"/"+rc.name+",") {
				cases = append(cases, rc)
			}
		}
		if len(cases) == 0 {
			continue
		}
		b.Run(p.name, func(b *testing.B) { benchPortfolio(b, p, cases) })
	}
}

// benchPortfolio serves p's archive and runs its cases (see BenchmarkReadOnce).
func benchPortfolio(b *testing.B, p readPortfolio, cases []readCase) {
	dir := benchArchiveDir(b, p.o)
	var cnt cogCounter
	if name := os.Getenv("MANEJO_READONCE_LOG"); name != "" {
		f, err := os.Create(name)
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		cnt.log = f
	}
	serveArchive(b, s3test.Faults{Match: cnt.match}, p.name, dir)
	res := map[string]denseResult{}
	outs := b.TempDir()      // outlives the sub-benchmarks: the first run is the reference
	refs := map[int]string{} // by batch size: the first unsharded run's output
	var ref string
	var minBytes int64
	best := time.Duration(0)
	for _, rc := range cases {
		b.Run(rc.name, func(b *testing.B) {
			var r denseResult
			for range b.N {
				r = runDense(b, rc, &cnt, "s3://"+p.name+"/archive", filepath.Join(outs, strings.NewReplacer("/", "_", "=", "", ",", "_").Replace(rc.name)))
			}
			res[rc.name] = r
			if rc.shards == 1 {
				// The part files' bytes depend on the batch size (issue 26
				// found it): runs compare with runs of their batch size.
				if refs[rc.batchSize] == "" {
					refs[rc.batchSize] = r.out
				} else {
					sameOutputs(b, rc.name, refs[rc.batchSize], r.out)
				}
				if ref == "" {
					ref = r.out
				}
				if best == 0 || r.wall < best {
					best = r.wall
				}
				if minBytes == 0 && rc.pass != ReadPassOff {
					minBytes = r.min
				}
			} else if ref != "" && os.Getenv("MANEJO_READONCE_SHARD") == "" {
				samePayloads(b, rc.name, ref, r.out)
			}
			b.ReportMetric(float64(r.bytes)/1e6, "MB")
			b.ReportMetric(float64(r.requests), "GETs")
			b.ReportMetric(r.wall.Seconds(), "s/run")
			b.ReportMetric(float64(r.min)/1e6, "min_MB")
			b.ReportMetric(r.cpu.Seconds(), "cpu_s")
			b.ReportMetric(float64(r.bytes)/float64(r.min), "bytes/own_min")
			if minBytes > 0 {
				b.ReportMetric(float64(r.bytes)/float64(minBytes), "bytes/min")
				b.ReportMetric(float64(r.min)/float64(minBytes), "floor/min")
			}
			if best > 0 {
				b.ReportMetric(r.wall.Seconds()/best.Seconds(), "wall/best")
			}
		})
	}
	for _, rc := range cases {
		if r, ok := res[rc.name]; ok && minBytes > 0 {
			b.Logf("%-9s %-22s %8.1f MB  %6d GETs  %.2f× min (floor %.2f×, %.2f× own min)  %6.1f s  (%.2f× best)  %6.1f s CPU", p.name, rc.name, float64(r.bytes)/1e6, r.requests,
				float64(r.bytes)/float64(minBytes), float64(r.min)/float64(minBytes), float64(r.bytes)/float64(r.min), r.wall.Seconds(), r.wall.Seconds()/best.Seconds(), r.cpu.Seconds())
		}
	}
}

// denseResult is what one case of BenchmarkReadOnce measured.
type denseResult struct {
	bytes, requests int64
	wall            time.Duration
	cpu             time.Duration // user + system CPU of this process, S3 server included
	out             string
	min             int64 // sum of the shards' run.json io min_bytes
}

// runDense runs every shard of rc one after the other into one output
// folder, with the inputs under prefix, and returns the COG bytes and GETs,
// the wall time and the sum of the shards' minimum (run.json io min_bytes).
func runDense(b *testing.B, rc readCase, cnt *cogCounter, prefix, out string) (r denseResult) {
	os.RemoveAll(out)
	cfg := baseConfig(b, "", out)
	remoteInputs(&cfg, prefix)
	cfg.AsOf = time.Date(2026, 6, 30, 0, 0, 0, 0, time.UTC)
	cfg.BatchSize, cfg.ReadPass, cfg.ShardBy = rc.batchSize, rc.pass, rc.shardBy
	// Every archive here is cut in denseArchive's blocks (512 px), not the
	// 1,024 px of Sentinel-2 COGs that spatial shards assume by default.
	cfg.ShardBlockPx = denseArchive.BlockSize
	cnt.requests.Store(0)
	cnt.bytes.Store(0)
	t0, cpu0 := time.Now(), cpuTime(b)
	phases := []string{PhaseAll}
	if rc.exchange() {
		phases = []string{PhaseRead, PhaseFinish}
	}
	only := os.Getenv("MANEJO_READONCE_SHARD")
	for _, p := range phases {
		for i := range rc.shards {
			if only != "" && only != strconv.Itoa(i) {
				continue
			}
			c := cfg
			c.Shard, c.Phase = Shard{i, rc.shards}, p
			if _, err := Run(context.Background(), c); err != nil {
				b.Fatal(err)
			}
		}
	}
	for i := range rc.shards {
		if only != "" && only != strconv.Itoa(i) {
			continue
		}
		m, err := readManifest(context.Background(), filepath.Join(cfg.Out, manifestName(Shard{i, rc.shards})))
		if err != nil {
			b.Fatal(err)
		}
		for _, v := range m.IO {
			r.min += v.MinBytes
		}
		if rc.shards == 1 {
			b.Logf("%s: timings %v; counts scenes_read %d, observations %d", rc.name, m.Timings, m.Counts["scenes_read"], m.Counts["observations"])
		}
		if ex := m.Exchange; ex != nil {
			logExchange(b, rc.name, i, m)
		}
	}
	r.wall, r.cpu = time.Since(t0), cpuTime(b)-cpu0
	r.bytes, r.requests, r.out = cnt.bytes.Load(), cnt.requests.Load(), cfg.Out
	return r
}

// logExchange logs shard i's run.json: its bytes (read and finish
// phases) against its minimum, what it handed over, and (shard 0) the
// read phases' total against theirs.
func logExchange(b *testing.B, name string, i int, m *runManifest) {
	var own, min int64
	for _, v := range m.IO {
		own, min = own+v.Bytes, min+v.MinBytes
	}
	ex := m.Exchange
	b.Logf("%s shard %d: io %.1f MB (%.2f× its minimum %.1f MB), handed out %.1f MB, in %.1f MB (%d records), given up %d",
		name, i, float64(own)/1e6, float64(own)/float64(max(min, 1)), float64(min)/1e6, float64(ex.HandedOutBytes)/1e6, float64(ex.HandedInBytes)/1e6, ex.HandedInRecords, ex.GivenUp)
	if i == 0 {
		var tb, tm int64
		for _, v := range ex.Total {
			tb, tm = tb+v.Bytes, tm+v.MinBytes
		}
		b.Logf("%s: run.json exchange total %.1f MB against a minimum of %.1f MB (%.2f×)", name, float64(tb)/1e6, float64(tm)/1e6, float64(tb)/float64(max(tm, 1)))
	}
}

// cpuTime is the user and system CPU this process has used.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// samePayloads fails unless every SINM payload of want is in got, byte
// for byte, and got has no other.
func samePayloads(tb testing.TB, what, want, got string) {
	tb.Helper()
	w, g := testkit.HashTree(tb, filepath.Join(want, "sinm")), testkit.HashTree(tb, filepath.Join(got, "sinm"))
	if len(w) != len(g) {
		tb.Errorf("%s: %d payloads, want %d", what, len(g), len(w))
	}
	for k, v := range w {
		if g[k] != v {
			tb.Errorf("%s: payload %s differs from the unsharded run's", what, k)
		}
	}
}
