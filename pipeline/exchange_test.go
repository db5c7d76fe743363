package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/manejo/manejo/export"
	"github.com/manejo/manejo/grid"
	"github.com/manejo/manejo/series"
	"github.com/manejo/manejo/storage"
	"github.com/manejo/manejo/storage/s3test"
	"github.com/paulmach/orb"
)

// TestExchange runs the test archive in two shards with the block
// exchange, inputs and outputs on a loopback S3 server: both read phases,
// then both finish phases. The payloads equal the unsharded run's byte
// for byte, the indicator and observation rows too; every scene is read
// by one shard only (the server sees each COG read by one read phase and
// none by the finish phases); run.json records the exchange. A retry of a
// complete read phase reads nothing; a finish phase without the other
// shard's read phase stops, naming it; a hand-over cut short, or a read
// phase whose reads failed transiently, costs the finish reads of its
// own, not talhões: the payloads stay the unsharded run's. (The hand-over
// into a local folder: TestHandoverLocal.)
func TestExchange(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end runs skipped in -short mode")
	}
	t0 := time.Now()
	dir := archive(t)
	ref, _ := reference(t)
	t.Logf("archive and reference run: %s", time.Since(t0))
	var cnt cogCounter
	var down atomic.Value // the scene (item id) whose COGs answer 503 while set
	down.Store("")
	serveArchive(t, s3test.Faults{Rate503: 1, Match: func(r *http.Request) bool {
		cnt.match(r)
		scene := down.Load().(string)
		return scene != "" && strings.Contains(r.URL.Path, "/"+scene+"/")
	}}, "xb", dir)
	ctx := context.Background()
	out := "s3://xb/out"
	for _, p := range []string{PhaseRead, PhaseFinish} {
		for k := range 2 {
			before, t0 := cnt.requests.Load(), time.Now()
			if _, err := Run(ctx, exchangeConfig(t, out, p, k)); err != nil {
				t.Fatalf("%s phase of shard %d/2: %v", p, k, err)
			}
			got := cnt.requests.Load() - before
			t.Logf("%s phase of shard %d/2: %s, %d COG requests", p, k, time.Since(t0).Round(time.Millisecond), got)
			if p == PhaseFinish && got != 0 {
				t.Errorf("finish phase of shard %d/2 sent %d COG requests; want 0 (everything handed over)", k, got)
			}
		}
	}
	local, err := s3test.Download(ctx, out, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	samePayloads(t, "exchange, 2 shards", ref, local)
	sameRowSet[export.IndicatorRow](t, ref, local)
	sameRowSet[export.ObsRow](t, ref, local)
	checkExchangeRecord(t, local)

	t.Run("read phase retried", func(t *testing.T) {
		before := cnt.requests.Load()
		if _, err := Run(ctx, exchangeConfig(t, out, PhaseRead, 1)); err != nil {
			t.Fatal(err)
		}
		if got := cnt.requests.Load() - before; got != 0 {
			t.Errorf("a retry of a complete read phase sent %d COG requests; want 0", got)
		}
	})
	t.Run("missing read phase", func(t *testing.T) {
		cfg := exchangeConfig(t, "s3://xb/lonely", PhaseFinish, 0)
		_, err := Run(ctx, cfg)
		if !errors.Is(err, ErrHandoverMissing) || !strings.Contains(err.Error(), "shard(s) 0/2, 1/2") {
			t.Errorf("finish without read phases: %v; want ErrHandoverMissing naming shards 0/2, 1/2", err)
		}
	})
	t.Run("faults in the read phases", func(t *testing.T) { exchangeFaults(t, ref, out, &cnt, &down) })
}

// exchangeConfig is shard k/2 of TestExchange's run in phase p into out.
func exchangeConfig(t *testing.T, out, p string, k int) Config {
	cfg := baseConfig(t, "", out)
	remoteInputs(&cfg, "s3://xb/archive")
	cfg.Shard, cfg.Phase, cfg.ExchangeWait = Shard{k, 2}, p, 200*time.Millisecond
	return cfg
}

// exchangeFaults runs shard 1's read phase again while one scene it
// hands shard 0 answers 503 (given up within a 1 s budget); the fault
// then clears. Shard 0's finish reads that scene itself: no talhão
// incomplete, the payloads the unsharded run's. (A hand-over cut short
// leaves its scenes to the batches the same way; TestHandoverLocal shows
// it refused.)
func exchangeFaults(t *testing.T, ref, out string, cnt *cogCounter, down *atomic.Value) {
	ctx := context.Background()
	scene := handedScene(t, out)
	down.Store(scene)
	cfg := exchangeConfig(t, out, PhaseRead, 1)
	cfg.Force, cfg.RetryBudget, cfg.SceneAttempts = true, time.Second, 1
	_, err := Run(ctx, cfg)
	down.Store("")
	if err != nil {
		t.Fatal(err)
	}
	mk, err := readMarker(ctx, storage.Join(exchangeDir(out, Shard{1, 2}), "_SUCCESS"))
	if err != nil || mk.GivenUp[scene] == "" {
		t.Fatalf("read phase with %s answering 503: marker gave up %d scenes, %v; want %s", scene, len(mk.GivenUp), err, scene)
	}
	m := finishAgain(t, ctx, out, cnt, true)
	if m.Exchange == nil || m.Exchange.GivenUp == 0 {
		t.Errorf("run.json exchange %+v; want the scene given up counted", m.Exchange)
	}
	samePayloads0(t, ref, out)
}

// handedScene is a scene shard 1's read phase handed shard 0.
func handedScene(t *testing.T, out string) string {
	ctx := context.Background()
	dir := exchangeDir(out, Shard{1, 2})
	mk, err := readMarker(ctx, storage.Join(dir, "_SUCCESS"))
	if err != nil {
		t.Fatal(err)
	}
	sp, err := newSpill(t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	defer sp.close()
	path, err := fetchHandover(ctx, sp, dir, mk.Handover[Shard{0, 2}.Part()])
	if err != nil {
		t.Fatal(err)
	}
	scene := ""
	_ = readHandover(path, func(_ string, rec spilled) error {
		if scene == "" {
			scene = rec.itemID
		}
		return nil
	})
	if scene == "" {
		t.Fatal("shard 1 handed shard 0 nothing")
	}
	return scene
}

// finishAgain runs shard 0's finish phase again (forced) into out and
// returns its manifest; every talhão must end without being incomplete,
// and the finish must have read COGs itself when read is set.
func finishAgain(t *testing.T, ctx context.Context, out string, cnt *cogCounter, read bool) *runManifest {
	t.Helper()
	cfg := exchangeConfig(t, out, PhaseFinish, 0)
	cfg.Force = true
	before := cnt.requests.Load()
	sum, err := Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Incomplete != 0 || sum.Payloads == 0 || (cnt.requests.Load() > before) != read {
		t.Errorf("finish again: %d incomplete, %d payloads, %d COG requests; want none incomplete, payloads, the missing scenes read", sum.Incomplete, sum.Payloads, cnt.requests.Load()-before)
	}
	m, err := readManifest(ctx, storage.Join(out, manifestName(Shard{0, 2})))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// samePayloads0 fails unless shard 0's payloads under the S3 folder out
// equal the unsharded run's (ref) byte for byte.
func samePayloads0(t *testing.T, ref, out string) {
	t.Helper()
	local, err := s3test.Download(context.Background(), out, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	samePayloads(t, "after the finish again", ref, local)
}

// sameRowSet fails unless the rows of dataset T under got (one file or
// part files) are those under want, whatever their order.
func sameRowSet[T export.Row](t *testing.T, want, got string) {
	t.Helper()
	rows := func(dir string) []string {
		rs, err := export.ReadDataset[T](os.DirFS(dir))
		if err != nil {
			t.Fatal(err)
		}
		out := make([]string, len(rs))
		for i, r := range rs {
			b, _ := json.Marshal(r)
			out[i] = string(b)
		}
		sort.Strings(out)
		return out
	}
	if w, g := rows(want), rows(got); len(w) == 0 || !slices.Equal(w, g) {
		t.Errorf("%T: %d rows, want the unsharded run's %d, equal", *new(T), len(g), len(w))
	}
}

// checkExchangeRecord checks run.json's exchange of both finish phases:
// the totals of the read phases equal in both, at least the minimum, and
// each shard took records.
func checkExchangeRecord(t *testing.T, local string) {
	t.Helper()
	var totals []int64
	for k := range 2 {
		m, err := readManifest(context.Background(), filepath.Join(local, manifestName(Shard{k, 2})))
		if err != nil {
			t.Fatal(err)
		}
		ex := m.Exchange
		if ex == nil || ex.Shards != 2 || ex.HandedInRecords == 0 || len(ex.Unreadable) != 0 {
			t.Fatalf("shard %d/2: run.json exchange %+v; want 2 shards, records taken, none unreadable", k, ex)
		}
		var bytes, min int64
		for _, v := range ex.Total {
			bytes, min = bytes+v.Bytes, min+v.MinBytes
		}
		if min == 0 || bytes < min {
			t.Errorf("shard %d/2: exchange total %d bytes against a minimum of %d", k, bytes, min)
		}
		totals = append(totals, bytes)
	}
	if totals[0] != totals[1] {
		t.Errorf("the shards' exchange totals differ: %v", totals)
	}
}

// TestPlanExchange checks the plan every shard computes: the same owners
// whatever the order of the talhões; a scene under one shard's talhões
// only is that shard's; scenes under several shards' talhões are dealt
// among those shards by their cells (here three shards of equal cells
// over one common tile: 30 scenes, 10 each), never to a shard with no
// talhão under them.
func TestPlanExchange(t *testing.T) {
	box := func(lon, lat, d float64) orb.MultiPolygon {
		return orb.MultiPolygon{{{{lon, lat}, {lon + d, lat}, {lon + d, lat + d}, {lon, lat + d}, {lon, lat}}}}
	}
	var fields []grid.Field
	shard := map[string]int{}
	for i := range 30 { // shards 0, 1, 2 on the common tile (lon −55), 10 talhões each
		id := fmt.Sprintf("T%02d", i)
		fields = append(fields, grid.Field{ID: id, Geometry: box(-55+0.01*float64(i), -12, 0.005)})
		shard[id] = i % 3
	}
	fields = append(fields, grid.Field{ID: "ALONE", Geometry: box(-50, -12, 0.005)}) // shard 0's alone
	shard["ALONE"] = 0
	day := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var items []*series.Item
	for d := range 30 {
		for _, tile := range []struct {
			name string
			lon  float64
		}{{"common", -55.1}, {"alone", -50.1}} {
			items = append(items, &series.Item{ID: fmt.Sprintf("%s-%02d", tile.name, d), Collection: "sentinel-2-l2a",
				Datetime: day.AddDate(0, 0, 5*d), BBox: orb.Bound{Min: orb.Point{tile.lon, -12.5}, Max: orb.Point{tile.lon + 1, -11.5}}})
		}
	}
	cat, err := series.NewCatalog(items, "test", nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{From: day, AsOf: day.AddDate(1, 0, 0)}
	shardOf := func(id string) int { return shard[id] }
	plan := planExchange(cat, fields, shardOf, 3, cfg)
	rev := slices.Clone(fields)
	slices.Reverse(rev)
	if again := planExchange(cat, rev, shardOf, 3, cfg); again.digest() != plan.digest() {
		t.Error("the plan depends on the order of the talhões")
	}
	per := make([]int, 3)
	for _, it := range items {
		o, ok := plan.owner[it.ID]
		switch {
		case !ok:
			t.Errorf("scene %s has no owner", it.ID)
		case strings.HasPrefix(it.ID, "alone") && o != 0:
			t.Errorf("scene %s under shard 0's talhão alone: owner %d", it.ID, o)
		case strings.HasPrefix(it.ID, "common"):
			per[o]++
		}
	}
	if !slices.Equal(per, []int{10, 10, 10}) {
		t.Errorf("common scenes per shard %v; want 10 each", per)
	}
}

// TestHandoverLocal writes a hand-over for two shards into a local
// folder, publishes it and reads each object back through its marker
// record: the same talhões, scenes and observations; an object cut
// short is refused.
func TestHandoverLocal(t *testing.T) {
	sp, err := newSpill(t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	defer sp.close()
	dir := filepath.Join(t.TempDir(), "out", "_exchange", "part-00000-of-00002")
	hv := newHandover(sp, 2, func(id string) int { return map[string]int{"A": 0, "B": 1}[id] }, dir)
	defer hv.close()
	day := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	it := &series.Item{ID: "S2-1", Collection: "sentinel-2-l2a"}
	for _, id := range []string{"A", "B", "B"} {
		hv.write(series.SceneRead{FieldID: id, Item: it, Reads: 3, ReadBytes: 99, Obs: []series.Obs{
			{FieldID: id, CellID: id + "-c1", Date: day, Collection: it.Collection, ItemID: it.ID, NDVI: 0.5, NDTI: 0.1, Mask: series.MaskReason("clear")}}})
	}
	objs, err := hv.upload(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for part, want := range map[string][]string{"part-00000-of-00002": {"A"}, "part-00001-of-00002": {"B", "B"}} {
		path, err := fetchHandover(context.Background(), sp, dir, objs[part])
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		err = readHandover(path, func(id string, rec spilled) error {
			if rec.itemID != "S2-1" || len(rec.obs) != 1 || rec.obs[0].CellID != id+"-c1" || rec.obs[0].NDVI != 0.5 || rec.reads != 3 {
				t.Errorf("%s: record %+v", part, rec)
			}
			got = append(got, id)
			return nil
		})
		if err != nil || !slices.Equal(got, want) || objs[part].Records != int64(len(want)) {
			t.Errorf("%s: talhões %v (%d records), %v; want %v", part, got, objs[part].Records, err, want)
		}
	}
	cut := objs["part-00001-of-00002"]
	name := filepath.Join(dir, cut.Path)
	if err := os.Truncate(name, cut.Bytes/2); err != nil {
		t.Fatal(err)
	}
	if _, err := fetchHandover(context.Background(), sp, dir, cut); err == nil {
		t.Error("an object cut short was taken")
	}
}
