package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/manejo/manejo/cache"
	"github.com/manejo/manejo/internal/testkit"
	"github.com/manejo/manejo/series"
	"github.com/manejo/manejo/sim/synth"
	"github.com/manejo/manejo/storage"
	"github.com/manejo/manejo/storage/s3test"
)

var (
	cacheArchiveOnce sync.Once
	cacheArchiveDir  string
	cacheArchiveErr  error
)

// The observation-cache tests run on a synthetic archive that goes on
// after the first run's date: Sentinel-2 every 10 days from 2022-07-01 to
// 2026-11-01, six talhões.
var (
	cacheD1 = time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC)
	cacheD2 = cacheD1.AddDate(0, 3, 0) // three months later
)

func cacheArchive(tb testing.TB) string {
	tb.Helper()
	cacheArchiveOnce.Do(func() {
		cacheArchiveDir, cacheArchiveErr = sharedTempDir("cache-archive-")
		if cacheArchiveErr != nil {
			return
		}
		_, cacheArchiveErr = synth.Generate(context.Background(), synth.Options{Out: cacheArchiveDir, Seed: 42, RevisitDays: 10,
			End: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)})
	})
	if cacheArchiveErr != nil {
		tb.Fatalf("synthetic archive: %v", cacheArchiveErr)
	}
	return cacheArchiveDir
}

// cacheConfig is baseConfig on the cache archive at asOf with the cache at
// cacheLoc ("" for none).
func cacheConfig(tb testing.TB, dir, out, cacheLoc string, asOf time.Time) Config {
	cfg := baseConfig(tb, dir, out)
	cfg.AsOf, cfg.Cache = asOf, cacheLoc
	return cfg
}

func mustRun(t *testing.T, cfg Config) Summary {
	t.Helper()
	sum, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatalf("run (as of %s, cache %q, out %s): %v", cfg.AsOf.Format(time.DateOnly), cfg.Cache, cfg.Out, err)
	}
	return sum
}

func manifestOf(t *testing.T, loc string) *runManifest {
	t.Helper()
	m, err := readManifest(context.Background(), storage.Join(loc, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// outputs is the hash of every data file of an output folder (not run.json).
func outputs(t *testing.T, dir string) map[string]string {
	t.Helper()
	return testkit.HashTree(t, dir, "run.json", "run/")
}

// scenesBetween counts the catalog items dated in (from, to].
func scenesBetween(t *testing.T, dir string, from, to time.Time) int {
	t.Helper()
	cat, errs := LoadCatalog(context.Background(), filepath.Join(dir, "catalog.json"), nil)
	if cat == nil {
		t.Fatal(errs)
	}
	n := 0
	for _, it := range cat.Items {
		if d := it.Datetime.UTC(); d.After(from) && !d.After(to.Add(24*time.Hour-1)) {
			n++
		}
	}
	return n
}

// s3Counter counts the requests an S3 server receives (GDAL's and the
// SDK's, those for the cache apart) and the bytes their Range headers ask.
type s3Counter struct {
	all, cache, rangeBytes atomic.Int64
}

func (c *s3Counter) match(r *http.Request) bool {
	c.all.Add(1)
	if strings.Contains(r.URL.Path, "/cache/") || strings.Contains(r.URL.Path, "/cache-") { // s3://b/cache/, s3://b/cache-<date>/
		c.cache.Add(1)
	}
	if rg := r.Header.Get("Range"); strings.HasPrefix(rg, "bytes=") {
		a, b, ok := strings.Cut(strings.TrimPrefix(rg, "bytes="), "-")
		x, e1 := strconv.ParseInt(a, 10, 64)
		y, e2 := strconv.ParseInt(b, 10, 64)
		if ok && e1 == nil && e2 == nil {
			c.rangeBytes.Add(y - x + 1)
		}
	}
	return false // count only: no fault
}

func (c *s3Counter) reset() { c.all.Store(0); c.cache.Store(0); c.rangeBytes.Store(0) }

// uploadDir copies a local folder to an S3 prefix.
func uploadDir(t testing.TB, dir, prefix string) {
	t.Helper()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return storage.WriteFile(context.Background(), prefix+"/"+filepath.ToSlash(rel), b)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// serveArchive starts a loopback S3 server with faults f (see
// s3test.Faults) and copies the local archive dir to s3://bucket/archive
// with the faults off, so that only the run meets them.
func serveArchive(tb testing.TB, f s3test.Faults, bucket, dir string) *s3test.Flaky {
	tb.Helper()
	_, fl := s3test.StartFlakyS3(tb, f, bucket)
	fl.Off.Store(true)
	uploadDir(tb, dir, "s3://"+bucket+"/archive")
	fl.Off.Store(false)
	return fl
}

// remoteInputs points cfg's talhões, catalog, DEM and sowing file at the
// copy of the test archive under prefix (see uploadDir).
func remoteInputs(cfg *Config, prefix string) {
	cfg.Fields, cfg.Catalog, cfg.DEM, cfg.Sowing = prefix+"/talhoes.geojson", prefix+"/catalog.json", prefix+"/dem.tif", prefix+"/sowing.csv"
}

// s3Config is cacheConfig with every input on S3 under s3://b/archive.
func s3Config(t *testing.T, out, cacheLoc string, asOf time.Time) Config {
	cfg := cacheConfig(t, "", out, cacheLoc, asOf)
	remoteInputs(&cfg, "s3://b/archive")
	// These tests count what each batch reads (scenes × batches): the
	// read pass, which reads each scene once for all batches, meets the
	// cache in TestAssetDown's cache run.
	cfg.ReadPass = ReadPassOff
	return cfg
}

// TestCacheThreeMonthsLater is the scheduled run of issue 20 through a
// loopback S3 server that counts requests: a run at D1 fills the cache on
// S3; three months later a run with the same cache reads only the scenes
// after D1, makes at most 15 % of the requests of a fresh run at D2, and
// writes byte-identical outputs.
func TestCacheThreeMonthsLater(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end runs skipped in -short mode")
	}
	dir := cacheArchive(t)
	ctx := context.Background()
	var cnt s3Counter
	fl := serveArchive(t, s3test.Faults{Match: cnt.match}, "b", dir)

	mustRun(t, s3Config(t, "s3://b/d1", "s3://b/cache", cacheD1))
	d1 := cnt.all.Load()

	cnt.reset()
	t0 := time.Now()
	mustRun(t, s3Config(t, "s3://b/fresh", "", cacheD2))
	freshReq, freshBytes, freshTime := cnt.all.Load(), cnt.rangeBytes.Load(), time.Since(t0)

	cnt.reset()
	t0 = time.Now()
	mustRun(t, s3Config(t, "s3://b/cached", "s3://b/cache", cacheD2))
	cachedReq, cachedBytes, cachedTime, cacheReq := cnt.all.Load(), cnt.rangeBytes.Load(), time.Since(t0), cnt.cache.Load()
	t.Logf("first run at %s: %d requests; at %s: fresh %d requests, %d range bytes, %s; cached %d requests (%d of them for the cache), %d range bytes, %s: %.1f %% of the requests",
		cacheD1.Format(time.DateOnly), d1, cacheD2.Format(time.DateOnly), freshReq, freshBytes, freshTime.Round(time.Millisecond),
		cachedReq, cacheReq, cachedBytes, cachedTime.Round(time.Millisecond), 100*float64(cachedReq)/float64(freshReq))
	if float64(cachedReq) > 0.15*float64(freshReq) {
		t.Errorf("the cached run made %d requests, %.1f %% of the fresh run's %d; want at most 15 %%", cachedReq, 100*float64(cachedReq)/float64(freshReq), freshReq)
	}

	fl.Off.Store(true)
	fresh, err := s3test.Download(ctx, "s3://b/fresh", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cached, err := s3test.Download(ctx, "s3://b/cached", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	sameTree(t, "cached run three months later", outputs(t, fresh), outputs(t, cached))

	mf, mc := manifestOf(t, fresh), manifestOf(t, cached)
	talhoes := int64(mc.Status.Total)
	batches := (talhoes + 2) / 3 // BatchSize 3: each batch reads its own scenes
	newScenes := int64(scenesBetween(t, dir, cacheD1, cacheD2))
	all := int64(scenesBetween(t, dir, time.Time{}, cacheD2))
	c := mc.Counts
	t.Logf("cached run counts: %v", c)
	if newScenes == 0 || c["scenes_read"] != newScenes*batches || c["cache_pairs_read"] != newScenes*talhoes {
		t.Errorf("cached run read %d scenes (%d talhão × scene pairs); want exactly the %d scenes after %s in each of %d batches, for each of the %d talhões",
			c["scenes_read"], c["cache_pairs_read"], newScenes, cacheD1.Format(time.DateOnly), batches, talhoes)
	}
	if c["scenes_selected"] != mf.Counts["scenes_selected"] || c["scenes_selected"] != all*batches || c["cache_scenes_served"] != (all-newScenes)*batches ||
		c["cache_pairs_served"] != (all-newScenes)*talhoes || c["cache_talhoes_hit"] != talhoes {
		t.Errorf("cache accounting %v; want %d scenes selected as fresh, all but the %d new ones served for all %d talhões", c, mf.Counts["scenes_selected"], newScenes, talhoes)
	}
	// The GDAL calls saved are those the fresh run made for the served
	// scenes: fresh = cached + saved, exactly.
	if mf.Counts["gdal_reads"] != c["gdal_reads"]+c["cache_gdal_reads_saved"] || mf.Counts["gdal_read_bytes"] != c["gdal_read_bytes"]+c["cache_gdal_read_bytes_saved"] {
		t.Errorf("GDAL reads: fresh %d (%d bytes), cached %d (%d bytes) + saved %d (%d bytes)", mf.Counts["gdal_reads"], mf.Counts["gdal_read_bytes"],
			c["gdal_reads"], c["gdal_read_bytes"], c["cache_gdal_reads_saved"], c["cache_gdal_read_bytes_saved"])
	}
	if c["cache_observations_served"] == 0 {
		t.Error("no observation served from the cache")
	}
}

// primed runs at D1 with a new local cache and returns the output and the
// cache folders; the run read everything, so its outputs are those of a
// fresh run.
func primed(t *testing.T, dir string) (out, cacheDir string) {
	t.Helper()
	out, cacheDir = t.TempDir(), t.TempDir()
	mustRun(t, cacheConfig(t, dir, out, cacheDir, cacheD1))
	if c := manifestOf(t, out).Counts; c["cache_pairs_served"] != 0 || c["cache_partitions_written"] != 6 {
		t.Fatalf("priming run: %v; want nothing served and 6 partitions written", c)
	}
	return out, cacheDir
}

// TestCacheTruncatedPartition cuts one talhão's partition in half: the run
// detects it (the Parquet footer is gone), says so in run.json, reads that
// talhão whole, rebuilds the partition and writes the outputs of a fresh
// run.
func TestCacheTruncatedPartition(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end runs skipped in -short mode")
	}
	t.Parallel()
	dir := cacheArchive(t)
	ref, cdir := primed(t, dir)
	parts, err := filepath.Glob(filepath.Join(cdir, "observations-v1", "*.parquet"))
	if err != nil || len(parts) != 6 {
		t.Fatalf("partitions %v (%v), want 6", parts, err)
	}
	b, err := os.ReadFile(parts[2])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(parts[2], b[:len(b)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	mustRun(t, cacheConfig(t, dir, out, cdir, cacheD1))
	sameTree(t, "truncated partition", outputs(t, ref), outputs(t, out))
	m := manifestOf(t, out)
	c := m.Counts
	per := int64(scenesBetween(t, dir, time.Time{}, cacheD1))
	if c["cache_talhoes_corrupt"] != 1 || c["cache_talhoes_hit"] != 5 || c["cache_partitions_written"] != 1 || c["cache_pairs_read"] != per || c["cache_pairs_served"] != 5*per {
		t.Errorf("counts %v; want 1 corrupt talhão read whole (%d pairs) and rewritten, 5 hits", c, per)
	}
	warned := false
	for _, w := range m.Warnings {
		warned = warned || strings.Contains(w, filepath.Base(parts[2])) && strings.Contains(w, "corrupt")
	}
	if !warned {
		t.Errorf("no warning names the corrupt partition %s: %v", parts[2], m.Warnings)
	}
	ps, err := cache.Inspect(context.Background(), cdir)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		if p.Err != nil {
			t.Errorf("after the run, %s: %v", p.Location, p.Err)
		}
	}
}

// editPolygon writes a copy of the archive's talhões whose first talhão's
// polygon is shrunk by 3 % towards its first vertex, and returns its path.
// (The catalog stays where it is: moved, its hrefs would change.)
func editPolygon(t *testing.T, src string) (file, id string) {
	t.Helper()
	file = filepath.Join(t.TempDir(), "talhoes.geojson")
	b, err := os.ReadFile(filepath.Join(src, "talhoes.geojson"))
	if err != nil {
		t.Fatal(err)
	}
	var fc struct {
		Type     string `json:"type"`
		Features []struct {
			Type       string         `json:"type"`
			Properties map[string]any `json:"properties"`
			Geometry   struct {
				Type        string         `json:"type"`
				Coordinates [][][2]float64 `json:"coordinates"`
			} `json:"geometry"`
		} `json:"features"`
	}
	if err := json.Unmarshal(b, &fc); err != nil || len(fc.Features) == 0 || fc.Features[0].Geometry.Type != "Polygon" {
		t.Fatalf("talhoes.geojson: %v (want Polygons)", err)
	}
	f := &fc.Features[0]
	ring := f.Geometry.Coordinates[0]
	for i := range ring {
		ring[i][0] = ring[0][0] + 0.97*(ring[i][0]-ring[0][0])
		ring[i][1] = ring[0][1] + 0.97*(ring[i][1]-ring[0][1])
	}
	out, _ := json.Marshal(fc)
	if err := os.WriteFile(file, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return file, fmt.Sprint(f.Properties["id"])
}

// TestCacheInvalidation: a talhão whose polygon was edited between runs is
// read whole again, the others are served; a profile rule changed (SCL
// class 5, bare soil, masked) invalidates every scene read with it. Each
// cached run writes the outputs of a fresh run with the same inputs.
func TestCacheInvalidation(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end runs skipped in -short mode")
	}
	t.Parallel()
	src := cacheArchive(t)
	ref, cdir := primed(t, src)

	t.Run("polygon edited", func(t *testing.T) {
		fields, id := editPolygon(t, src)
		fresh, cached := t.TempDir(), t.TempDir()
		cfg := cacheConfig(t, src, fresh, "", cacheD1)
		cfg.Fields = fields
		mustRun(t, cfg)
		cfg = cacheConfig(t, src, cached, copyDir(t, cdir), cacheD1)
		cfg.Fields = fields
		mustRun(t, cfg)
		sameTree(t, "polygon edited", outputs(t, fresh), outputs(t, cached))
		c := manifestOf(t, cached).Counts
		per := int64(scenesBetween(t, src, time.Time{}, cacheD1))
		if c["cache_talhoes_stale"] != 1 || c["cache_talhoes_hit"] != 5 || c["cache_pairs_read"] != per || c["cache_pairs_served"] != 5*per {
			t.Errorf("talhão %s edited: counts %v; want it stale and read whole (%d pairs), the 5 others served", id, c, per)
		}
	})

	t.Run("mask class changed", func(t *testing.T) {
		p := series.Profiles()["sentinel-2-l2a"]
		p.Classes[5] = series.MaskedDark // bare soil masked: a rule that changes the series
		profiles := map[string]*series.Profile{"sentinel-2-l2a": p}
		fresh, cached := t.TempDir(), t.TempDir()
		cfg := cacheConfig(t, src, fresh, "", cacheD1)
		cfg.SeriesProfiles = profiles
		mustRun(t, cfg)
		cfg = cacheConfig(t, src, cached, copyDir(t, cdir), cacheD1)
		cfg.SeriesProfiles = profiles
		mustRun(t, cfg)
		sameTree(t, "mask class changed", outputs(t, fresh), outputs(t, cached))
		if same := outputs(t, fresh)["observations.parquet"] == outputs(t, ref)["observations.parquet"]; same {
			t.Error("masking SCL 5 did not change the observations: the test shows nothing")
		}
		c := manifestOf(t, cached).Counts
		if per := int64(scenesBetween(t, src, time.Time{}, cacheD1)); c["cache_pairs_served"] != 0 || c["cache_pairs_read"] != 6*per || c["cache_talhoes_hit"] != 6 {
			t.Errorf("counts %v; want every pair read again (the only collection's rule changed)", c)
		}
	})
}

// copyDir copies a local folder into a new temporary one.
func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	return dst
}

// TestCacheConcurrentShardsAndKill: two shards fill one empty cache at the
// same time; a `manejo run --cache` process is killed (SIGKILL) after its
// first batch, with a torn temporary partition left beside the others, and
// run again. Each cache then serves every scene to a run whose outputs are
// those of a fresh run.
func TestCacheConcurrentShardsAndKill(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end runs skipped in -short mode")
	}
	t.Parallel()
	dir := cacheArchive(t)
	ref, _ := primed(t, dir)
	served := func(t *testing.T, what, cdir string) {
		t.Helper()
		out := t.TempDir()
		mustRun(t, cacheConfig(t, dir, out, cdir, cacheD1))
		sameTree(t, what, outputs(t, ref), outputs(t, out))
		if c := manifestOf(t, out).Counts; c["cache_pairs_read"] != 0 || c["cache_talhoes_hit"] != 6 || c["scenes_read"] != 0 {
			t.Errorf("%s: counts %v; want every pair served", what, c)
		}
	}

	t.Run("two shards at once", func(t *testing.T) {
		cdir, out := t.TempDir(), t.TempDir()
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				cfg := cacheConfig(t, dir, out, cdir, cacheD1)
				cfg.Shard = Shard{Index: i, Count: 2}
				_, errs[i] = Run(context.Background(), cfg)
			}()
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("shard %d: %v", i, err)
			}
		}
		served(t, "after two concurrent shards", cdir)
	})

	t.Run("killed and rerun", func(t *testing.T) {
		cdir, out := t.TempDir(), t.TempDir()
		args := []string{"run", "--fields", filepath.Join(dir, "talhoes.geojson"), "--catalog", filepath.Join(dir, "catalog.json"),
			"--dem", filepath.Join(dir, "dem.tif"), "--sowing", filepath.Join(dir, "sowing.csv"), "--season", "2026/2027",
			"--as-of", cacheD1.Format(time.DateOnly), "--satellite-codes", "sentinel-2-l2a=S01,dem=S09",
			"--workers", "2", "--batch-size", "3", "--cache", cdir, "--out", out}
		killAfterFirstBatch(t, manejoBinary(t), args)
		parts, _ := filepath.Glob(filepath.Join(cdir, "observations-v1", "talhao=*.parquet"))
		if len(parts) == 0 || len(parts) == 6 {
			t.Fatalf("%d partitions after the kill; want those of the first batch only", len(parts))
		}
		// What a kill inside a write leaves on disk: a temporary file.
		torn := filepath.Join(cdir, "observations-v1", "."+filepath.Base(parts[0])+".tmp-4242")
		if err := os.WriteFile(torn, []byte("PAR1\x00\x00"), 0o644); err != nil {
			t.Fatal(err)
		}
		rerun := exec.Command(manejoBinary(t), args...)
		if logs, err := rerun.CombinedOutput(); err != nil {
			t.Fatalf("rerun: %v\n%s", err, logs)
		}
		sameTree(t, "killed and rerun", outputs(t, ref), outputs(t, out))
		served(t, "after a killed run", cdir)
	})
}

// killAfterFirstBatch starts bin with args and kills it with SIGKILL at its
// first progress record (a batch committed), and reaps it.
func killAfterFirstBatch(t *testing.T, bin string, args []string) {
	t.Helper()
	_ = killAtFirstBatch(t, bin, args...).Wait()
}

// TestCacheScheduleTable measures the closing table of issue 20: for one
// week, one month and three months of new scenes after a cached run at D1,
// the requests (all of them, as the loopback S3 server counts them), the
// bytes the Range headers asked and the wall time of a fresh run and of a
// run with the cache, whose outputs must be identical. Opt-in (seven runs):
// MANEJO_CACHE_TABLE=1 go test ./pipeline -run TestCacheScheduleTable -v
func TestCacheScheduleTable(t *testing.T) {
	if os.Getenv("MANEJO_CACHE_TABLE") == "" {
		t.Skip("set MANEJO_CACHE_TABLE=1 to measure the table")
	}
	dir := cacheArchive(t)
	ctx := context.Background()
	var cnt s3Counter
	fl := serveArchive(t, s3test.Faults{Match: cnt.match}, "b", dir)
	// One day after cacheD1, so that the week holds one scene (the archive
	// has one every 10 days: 2026-07-30, 08-09, 08-19, ...).
	d1 := cacheD1.AddDate(0, 0, 1)
	mustRun(t, s3Config(t, "s3://b/d1", "s3://b/cache-d1", d1))
	fl.Off.Store(true)
	d1Parts, err := storage.List(ctx, "s3://b/cache-d1")
	if err != nil {
		t.Fatal(err)
	}
	t.Log("| new scenes | as of | fresh: requests, range MB, time | cached: requests (cache), range MB, time | requests | time |")
	t.Log("|---|---|---|---|---|---|")
	for _, h := range []struct {
		name string
		at   time.Time
	}{{"one week", d1.AddDate(0, 0, 7)}, {"one month", d1.AddDate(0, 1, 0)}, {"three months", d1.AddDate(0, 3, 0)}} {
		fl.Off.Store(true)
		cloc := "s3://b/cache-" + h.at.Format(time.DateOnly)
		for _, p := range d1Parts {
			b, err := storage.ReadFile(ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			if err := storage.WriteFile(ctx, cloc+strings.TrimPrefix(p, "s3://b/cache-d1"), b); err != nil {
				t.Fatal(err)
			}
		}
		fl.Off.Store(false)
		cnt.reset()
		t0 := time.Now()
		freshOut, cachedOut := "s3://b/fresh-"+h.at.Format(time.DateOnly), "s3://b/cached-"+h.at.Format(time.DateOnly)
		mustRun(t, s3Config(t, freshOut, "", h.at))
		fr, fb, ft := cnt.all.Load(), cnt.rangeBytes.Load(), time.Since(t0)
		cnt.reset()
		t0 = time.Now()
		mustRun(t, s3Config(t, cachedOut, cloc, h.at))
		cr, cc, cb, ct := cnt.all.Load(), cnt.cache.Load(), cnt.rangeBytes.Load(), time.Since(t0)
		fl.Off.Store(true)
		f, err := s3test.Download(ctx, freshOut, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		c, err := s3test.Download(ctx, cachedOut, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		sameTree(t, h.name, outputs(t, f), outputs(t, c))
		t.Logf("| %s: %d | %s | %d, %.1f, %s | %d (%d), %.1f, %s | %.1f %% | %.0f %% |", h.name, scenesBetween(t, dir, d1, h.at), h.at.Format(time.DateOnly),
			fr, float64(fb)/1e6, ft.Round(10*time.Millisecond), cr, cc, float64(cb)/1e6, ct.Round(10*time.Millisecond),
			100*float64(cr)/float64(fr), 100*ct.Seconds()/ft.Seconds())
	}
}
