package cache

import (
	"bytes"
	"context"
	"errors"
	"math"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/manejo/manejo/grid"
	"github.com/manejo/manejo/series"
	"github.com/manejo/manejo/storage"
	"github.com/manejo/manejo/storage/s3test"
	"github.com/paulmach/orb"
)

var nan = float32(math.NaN())

func day(s string) time.Time {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		panic(err)
	}
	return t
}

func testGrid(id string, dx float64) grid.Grid {
	ring := orb.Ring{{-55.6, -11.8}, {-55.59 + dx, -11.8}, {-55.59 + dx, -11.79}, {-55.6, -11.79}, {-55.6, -11.8}}
	g := grid.Grid{Field: grid.Field{ID: id, Geometry: orb.MultiPolygon{{ring}}}}
	for i, c := range []string{"c0", "c1"} {
		g.Cells = append(g.Cells, grid.Cell{FieldID: id, ID: c, Centre: orb.Point{-55.599 + 0.005*float64(i), -11.795}})
	}
	return g
}

func testItem(id, collection, date, href string) *series.Item {
	return &series.Item{ID: id, Collection: collection, Datetime: day(date).Add(13 * time.Hour),
		Assets: map[string]series.Asset{"red": {Href: href + "/B04.tif", Band: 1}, "scl": {Href: href + "/SCL.tif", Band: 1}}}
}

func obsOf(field string, it *series.Item, ndvi float32, mask series.MaskReason) []series.Obs {
	var out []series.Obs
	for _, c := range []string{"c1", "c0"} {
		out = append(out, series.Obs{FieldID: field, CellID: c, Date: day(it.Datetime.Format(time.DateOnly)), Collection: it.Collection, ItemID: it.ID,
			NDVI: ndvi, NDTI: nan, Red: 0.1, NIR: 0.3, SWIR1: nan, SWIR2: nan, Mask: mask})
	}
	return out
}

// TestRoundTrip stores and loads a partition on local disk and on S3:
// every value comes back bit for bit (NaN included), with its metadata.
func TestRoundTrip(t *testing.T) {
	s3test.StartS3(t, "c")
	it := testItem("S2A_1", "sentinel-2-l2a", "2026-01-05", "s3://a/S2A_1")
	for _, loc := range []string{t.TempDir(), "s3://c/prefix"} {
		c := Open(loc)
		ctx := context.Background()
		if e, err := c.Load(ctx, "T-1"); e != nil || err != nil {
			t.Fatalf("%s: empty cache Load = %v, %v", loc, e, err)
		}
		want := append(obsOf("T-1", it, 0.5, ""), obsOf("T-1", it, nan, series.MaskedCloud)...)
		e := &Entry{Meta: Meta{Version: "v1", FieldID: "T-1", Grid: "g", WrittenAt: day("2026-02-01"),
			Items: []Item{{ID: it.ID, Collection: it.Collection, Date: "2026-01-05", Fingerprint: ItemFingerprint(it), Obs: 4, Reads: 7, ReadBytes: 9}}}, Obs: want}
		if _, err := c.Store(ctx, e); err != nil {
			t.Fatal(err)
		}
		got, err := c.Load(ctx, "T-1")
		if err != nil {
			t.Fatal(err)
		}
		if got.Meta.Rows != 4 || got.Meta.Format != Format || got.Meta.Schema != Schema || len(got.Meta.Items) != 1 || got.Meta.Items[0] != e.Meta.Items[0] || !got.Meta.WrittenAt.Equal(day("2026-02-01")) {
			t.Errorf("%s: meta %+v", loc, got.Meta)
		}
		for i := range want {
			a, b := got.Obs[i], want[i]
			if a.FieldID != b.FieldID || a.CellID != b.CellID || !a.Date.Equal(b.Date) || a.Collection != b.Collection || a.ItemID != b.ItemID || a.Mask != b.Mask ||
				math.Float32bits(a.NDVI) != math.Float32bits(b.NDVI) || math.Float32bits(a.NDTI) != math.Float32bits(b.NDTI) ||
				a.Red != b.Red || a.NIR != b.NIR || math.Float32bits(a.SWIR1) != math.Float32bits(b.SWIR1) {
				t.Errorf("%s: obs %d = %+v, want %+v", loc, i, a, b)
			}
		}
	}
}

// TestCorruptAndForeign: a partition truncated, with one value altered
// (checksum), written for another talhão, or of another format is reported
// as ErrCorrupt, never served.
func TestCorruptAndForeign(t *testing.T) {
	dir := t.TempDir()
	c := Open(dir)
	ctx := context.Background()
	it := testItem("S2A_1", "sentinel-2-l2a", "2026-01-05", "/x")
	store := func(id string, obs []series.Obs) []byte {
		if _, err := c.Store(ctx, &Entry{Meta: Meta{FieldID: id, Items: []Item{{ID: it.ID}}}, Obs: obs}); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(c.partition(id))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	good := store("T-1", obsOf("T-1", it, 0.5, ""))
	cases := map[string][]byte{
		"truncated":   good[:len(good)*2/3],
		"empty":       {},
		"not parquet": []byte("PAR1 hello"),
	}
	// Metadata edited in place (its length changes, so the footer no
	// longer parses).
	tampered := []byte(strings.Replace(string(good), `"rows_sha256":"`, `"rows_sha256":"0`, 1))
	cases["checksum"] = tampered
	cases["other talhão"] = store("T-2", obsOf("T-2", it, 0.5, ""))
	for name, b := range cases {
		if err := os.WriteFile(c.partition("T-1"), b, 0o644); err != nil {
			t.Fatal(err)
		}
		e, err := c.Load(ctx, "T-1")
		if !errors.Is(err, ErrCorrupt) || e != nil {
			t.Errorf("%s: Load = %v, %v; want ErrCorrupt", name, e, err)
		}
	}
	// A value changed inside the rows (same length, so the file still
	// parses): the checksum catches it.
	var alt []series.Obs
	alt = append(alt, obsOf("T-1", it, 0.5, "")...)
	b := store("T-1", alt)
	e, err := c.Load(ctx, "T-1")
	if err != nil || e == nil {
		t.Fatal(err)
	}
	m := e.Meta
	m.RowsSHA256 = rowsHash([]row{{CellID: "c0"}})
	if got := strings.Count(string(b), e.Meta.RowsSHA256); got != 1 {
		t.Fatalf("the rows hash appears %d times in the file", got)
	}
	forged := []byte(strings.Replace(string(b), e.Meta.RowsSHA256, m.RowsSHA256, 1))
	if err := os.WriteFile(c.partition("T-1"), forged, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Load(ctx, "T-1"); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "checksum") {
		t.Errorf("forged checksum: %v", err)
	}
}

// TestKnownRules checks Batch.known, the rule that decides which pairs are
// served: the same item fingerprint and profile rules; a changed mask
// class invalidates the scenes of that collection only; a changed polygon
// (GridKey) or manejo version makes the talhão stale, read whole.
func TestKnownRules(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	s2 := testItem("S2A_1", "sentinel-2-l2a", "2026-01-05", "/a")
	ls := testItem("LC09_1", "landsat-c2-l2", "2026-01-06", "/b")
	g := testGrid("T-1", 0)
	b, err := Open(dir).Begin(ctx, []grid.Grid{g}, grid.Options{}, "v1", nil)
	if err != nil {
		t.Fatal(err)
	}
	b.Options(series.Options{})
	for _, it := range []*series.Item{s2, ls} {
		if b.known("T-1", it) {
			t.Fatalf("empty cache serves %s", it.ID)
		}
		b.record(series.SceneRead{FieldID: "T-1", Item: it, Obs: obsOf("T-1", it, 0.5, ""), Reads: 10, ReadBytes: 100})
	}
	b.Sampled()
	b.Save(ctx, time.Now())
	if b.Stats.Written != 1 || b.Stats.Entries[StateNew] != 1 || b.Stats.PairsRead != 2 {
		t.Fatalf("stats %+v", b.Stats)
	}

	begin := func(g grid.Grid, version string, profiles map[string]*series.Profile) *Batch {
		b, err := Open(dir).Begin(ctx, []grid.Grid{g}, grid.Options{}, version, profiles)
		if err != nil {
			t.Fatal(err)
		}
		b.Options(series.Options{})
		return b
	}
	b = begin(g, "v1", nil)
	if !b.known("T-1", s2) || !b.known("T-1", ls) {
		t.Error("same inputs: not served")
	}
	b.Sampled()
	if b.Stats.ScenesServed != 2 || b.Stats.ReadsSaved != 20 || b.Stats.BytesSaved != 200 || b.Stats.ObsServed != 4 {
		t.Errorf("served stats %+v", b.Stats)
	}
	moved := *s2
	moved.Assets = map[string]series.Asset{"red": {Href: "/a2/B04.tif", Band: 1}, "scl": {Href: "/a/SCL.tif", Band: 1}}
	if b.known("T-1", &moved) {
		t.Error("an item with a new asset href is served")
	}
	rebaselined := *s2
	rebaselined.ProcessingBaseline = "05.10"
	if b.known("T-1", &rebaselined) {
		t.Error("a reprocessed item (new baseline) is served")
	}

	p := series.Profiles()["sentinel-2-l2a"]
	p.Classes[7] = series.MaskedCloud // SCL 7 "unclassified" now masked
	b = begin(g, "v1", map[string]*series.Profile{"sentinel-2-l2a": p})
	if b.known("T-1", s2) || !b.known("T-1", ls) {
		t.Error("a Sentinel-2 mask class changed: want the Sentinel-2 scene read again and the Landsat one served")
	}

	if b = begin(testGrid("T-1", 0.001), "v1", nil); b.known("T-1", s2) || b.Stats.Entries[StateStale] != 1 {
		t.Errorf("polygon edited: served, or entries %v", b.Stats.Entries)
	}
	if b = begin(g, "v2", nil); b.known("T-1", s2) || b.Stats.Entries[StateStale] != 1 {
		t.Errorf("another manejo version: served, or entries %v", b.Stats.Entries)
	}
}

// TestInspectPrune: inspect lists each partition with its talhão and
// dates, flags a corrupt one and a temporary file; prune removes by age,
// by portfolio, and the broken files, and only those.
func TestInspectPrune(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	c := Open(dir)
	it := testItem("S2A_1", "sentinel-2-l2a", "2026-01-05", "/a")
	for id, at := range map[string]string{"OLD": "2025-01-01", "KEEP": "2026-11-01", "GONE": "2026-11-01", "BROKEN": "2026-11-01"} {
		e := &Entry{Meta: Meta{FieldID: id, WrittenAt: day(at), Items: []Item{{ID: it.ID, Date: "2026-01-05"}}}, Obs: obsOf(id, it, 0.4, "")}
		if _, err := c.Store(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(c.partition("BROKEN"), []byte("PAR1"), 0o644); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(dir, dir2(), "."+filepath.Base(c.partition("GONE"))+".tmp-123") // as storage.CreateTemp names it
	if err := os.WriteFile(tmp, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	ps, err := Inspect(ctx, dir)
	if err != nil || len(ps) != 5 {
		t.Fatalf("Inspect = %d partitions, %v; want 5 files", len(ps), err)
	}
	bad := 0
	for _, p := range ps {
		if p.Err != nil {
			bad++
			continue
		}
		if p.First != "2026-01-05" || p.Last != "2026-01-05" || p.Meta.Rows != 2 || p.Bytes == 0 {
			t.Errorf("%s: %+v", p.Location, p)
		}
	}
	if bad != 2 {
		t.Errorf("%d partitions flagged, want the corrupt one and the temporary file", bad)
	}
	fields := filepath.Join(dir, "talhoes.geojson")
	gj := `{"type":"FeatureCollection","features":[` + feature("OLD") + "," + feature("KEEP") + `]}`
	if err := os.WriteFile(fields, []byte(gj), 0o644); err != nil {
		t.Fatal(err)
	}
	o := PruneOptions{OlderThan: 90 * 24 * time.Hour, Now: day("2026-11-30"), Fields: fields, IDField: "id", DryRun: true}
	rm, err := Prune(ctx, dir, o)
	if err != nil || len(rm.Removed) != 4 || len(rm.Foreign) != 0 {
		t.Fatalf("dry run: %+v, %v; want OLD (age), GONE (portfolio), BROKEN and the temporary file", rm, err)
	}
	if after, _ := Inspect(ctx, dir); len(after) != 5 {
		t.Fatalf("a dry run removed files")
	}
	o.DryRun = false
	if _, err := Prune(ctx, dir, o); err != nil {
		t.Fatal(err)
	}
	after, _ := Inspect(ctx, dir)
	if len(after) != 1 || after[0].Meta == nil || after[0].Meta.FieldID != "KEEP" {
		t.Errorf("after prune: %+v, want KEEP alone", after)
	}
}

func dir2() string { return dir }

// TestPruneKeepsForeignFiles (issue 27 D12): files in the partition folder
// that manejo does not write — notes, a sub-folder, a backup of a
// partition, a Parquet file of another name — are listed as foreign by
// Inspect and left alone by Prune, even with every rule on, on a local
// disk and on S3; the partitions of talhões out of the portfolio or too
// old, and a corrupt partition, still go.
func TestPruneKeepsForeignFiles(t *testing.T) {
	s3test.StartS3(t, "c")
	ctx := context.Background()
	for _, loc := range []string{t.TempDir(), "s3://c/cache/"} {
		c := Open(loc)
		it := testItem("S2A_1", "sentinel-2-l2a", "2026-01-05", "/a")
		for _, id := range []string{"KEEP", "GONE"} {
			e := &Entry{Meta: Meta{FieldID: id, WrittenAt: day("2026-11-01"), Items: []Item{{ID: it.ID, Date: "2026-01-05"}}}, Obs: obsOf(id, it, 0.4, "")}
			if _, err := c.Store(ctx, e); err != nil {
				t.Fatal(err)
			}
		}
		part, err := storage.ReadFile(ctx, c.partition("KEEP"))
		if err != nil {
			t.Fatal(err)
		}
		foreign := map[string][]byte{
			"notes.txt":                                       []byte("my notes"),
			"subdir/keep.txt":                                 []byte("keep me"),
			path.Base(c.partition("KEEP")) + ".bak":           part,
			"talhao=KEEP.parquet":                             part,
			"subdir/" + path.Base(c.partition("GONE")):        part,
			".notes.txt.tmp-1":                                []byte("not a partition's temporary file"),
			"talhao=00112233445566778899AABBCCDDEEFF.parquet": part,
		}
		for name, b := range foreign {
			if err := storage.WriteFile(ctx, storage.Join(loc, dir, name), b); err != nil {
				t.Fatal(err)
			}
		}
		broken := storage.Join(loc, dir, "talhao=00112233445566778899aabbccddeeff.parquet")
		if err := storage.WriteFile(ctx, broken, []byte("PAR1")); err != nil {
			t.Fatal(err)
		}
		ps, err := Inspect(ctx, loc)
		if err != nil {
			t.Fatal(err)
		}
		nForeign := 0
		for _, p := range ps {
			if errors.Is(p.Err, ErrForeign) {
				nForeign++
			}
		}
		if nForeign != len(foreign) {
			t.Errorf("%s: Inspect flags %d files foreign, want %d: %+v", loc, nForeign, len(foreign), ps)
		}
		fields := filepath.Join(t.TempDir(), "talhoes.geojson")
		if err := os.WriteFile(fields, []byte(`{"type":"FeatureCollection","features":[`+feature("KEEP")+`]}`), 0o644); err != nil {
			t.Fatal(err)
		}
		res, err := Prune(ctx, loc, PruneOptions{OlderThan: time.Hour, Now: day("2026-11-30"), Fields: fields, IDField: "id"})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Foreign) != len(foreign) {
			t.Errorf("%s: Prune reports %d foreign files, want %d: %v", loc, len(res.Foreign), len(foreign), res.Foreign)
		}
		for name, b := range foreign {
			if got, err := storage.ReadFile(ctx, storage.Join(loc, dir, name)); err != nil || !bytes.Equal(got, b) {
				t.Errorf("%s: %s: %v after prune; want it untouched", loc, name, err)
			}
		}
		if len(res.Removed) != 3 {
			t.Errorf("%s: removed %+v; want KEEP and GONE (older than an hour) and the corrupt partition", loc, res.Removed)
		}
		if ok, err := storage.Exists(ctx, broken); ok || err != nil {
			t.Errorf("%s: corrupt partition kept (%v)", loc, err)
		}
	}
}

// TestPruneRefusesPortfolioWithoutIDs (issue 27 D13): a talhões file in
// which no feature has an id (a wrong --id-field, an empty
// FeatureCollection) would select every partition: Prune refuses it,
// naming the file and the id field, and removes nothing.
func TestPruneRefusesPortfolioWithoutIDs(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	it := testItem("S2A_1", "sentinel-2-l2a", "2026-01-05", "/a")
	e := &Entry{Meta: Meta{FieldID: "KEEP", WrittenAt: day("2026-11-01"), Items: []Item{{ID: it.ID, Date: "2026-01-05"}}}, Obs: obsOf("KEEP", it, 0.4, "")}
	if _, err := Open(dir).Store(ctx, e); err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	for name, tc := range map[string]struct{ gj, idField string }{
		"no such property": {`{"type":"FeatureCollection","features":[` + feature("KEEP") + `]}`, "nosuch"},
		"empty collection": {`{"type":"FeatureCollection","features":[]}`, "id"},
	} {
		fields := filepath.Join(tmp, strings.ReplaceAll(name, " ", "-")+".geojson")
		if err := os.WriteFile(fields, []byte(tc.gj), 0o644); err != nil {
			t.Fatal(err)
		}
		res, err := Prune(ctx, dir, PruneOptions{Fields: fields, IDField: tc.idField})
		if !errors.Is(err, ErrPortfolio) || !strings.Contains(err.Error(), fields) || !strings.Contains(err.Error(), `property "`+tc.idField+`" (--id-field`) {
			t.Errorf("%s: err %v; want ErrPortfolio naming %s and the id field", name, err, fields)
		}
		if len(res.Removed) != 0 {
			t.Errorf("%s: removed %+v", name, res.Removed)
		}
	}
	if ps, _ := Inspect(ctx, dir); len(ps) != 1 || ps[0].Meta == nil {
		t.Errorf("after the refused prunes: %+v, want the partition of KEEP", ps)
	}
}

func feature(id string) string {
	return `{"type":"Feature","properties":{"id":"` + id + `"},"geometry":{"type":"Polygon","coordinates":[[[-55.6,-11.8],[-55.59,-11.8],[-55.59,-11.79],[-55.6,-11.79],[-55.6,-11.8]]]}}`
}

// TestGridKeyOptions: the edge buffer's default spelled out (the CLI's 15
// m) or left zero is one grid; another buffer or cell size is another.
func TestGridKeyOptions(t *testing.T) {
	g := testGrid("T-1", 0)
	g.CellSizeHa = 1
	k := GridKey(g, grid.Options{})
	if GridKey(g, grid.Options{EdgeBufferM: grid.DefaultEdgeBufferM}) != k {
		t.Error("default edge buffer spelled out gives another key")
	}
	if GridKey(g, grid.Options{EdgeBufferM: 30}) == k || GridKey(g, grid.Options{EdgeBufferM: -1}) == k {
		t.Error("another edge buffer gives the same key")
	}
	g2 := g
	g2.CellSizeHa = 2
	if GridKey(g2, grid.Options{}) == k {
		t.Error("another cell size gives the same key")
	}
}

// TestFingerprintIgnoresAccess: a Planetary Computer href signed with
// another SAS token, a presigned S3 URL with another signature, or another
// bearer token in the asset's GDAL options is the same item; another path
// or version parameter is not.
func TestFingerprintIgnoresAccess(t *testing.T) {
	base := "https://sentinel2l2a01.blob.core.windows.net/sentinel2-l2/21/L/XG/S2A_1/B04.tif"
	mk := func(href string, cfg ...string) *series.Item {
		it := testItem("S2A_1", "sentinel-2-l2a", "2026-01-05", "/x")
		it.Assets["red"] = series.Asset{Href: href, Band: 1, GDALConfig: cfg}
		return it
	}
	k := ItemFingerprint(mk(base + "?st=2026-11-30T00%3A00Z&se=2026-12-01T00%3A00Z&sp=rl&sv=2021-06-08&sr=c&sig=AAA"))
	for name, it := range map[string]*series.Item{
		"another SAS":    mk(base + "?st=2026-12-07T00%3A00Z&se=2026-12-08T00%3A00Z&sp=rl&sv=2021-06-08&sr=c&sig=BBB"),
		"unsigned":       mk(base),
		"bearer rotated": mk(base+"?sig=C", "GDAL_HTTP_HEADERS=Authorization: Bearer new"),
	} {
		if ItemFingerprint(it) != k {
			t.Errorf("%s: another fingerprint", name)
		}
	}
	if ItemFingerprint(mk(base+"?version=2")) == k || ItemFingerprint(mk(strings.Replace(base, "B04", "B05", 1))) == k {
		t.Error("another href or version parameter gives the same fingerprint")
	}
	s3 := "https://b.s3.amazonaws.com/k/B04.tif?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Signature="
	if ItemFingerprint(mk(s3+"aa")) != ItemFingerprint(mk(s3+"bb")) {
		t.Error("presigned S3 URLs with other signatures give other fingerprints")
	}
}
