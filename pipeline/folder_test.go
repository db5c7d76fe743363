package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/manejo/manejo/export"
	"github.com/manejo/manejo/sinm"
	"github.com/manejo/manejo/storage/s3test"
)

// copyTree copies the files of src into dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dst, rel)), 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// rewriteFields writes a copy of the archive's talhões: without drop, with
// broken's geometry made a bow-tie, and with copies of from's feature under
// each of the ids add.
func rewriteFields(t *testing.T, dir, dst, drop, broken, from string, add []string) {
	t.Helper()
	var fc struct {
		Type     string           `json:"type"`
		Features []map[string]any `json:"features"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "talhoes.geojson"))
	if err != nil || json.Unmarshal(b, &fc) != nil {
		t.Fatalf("read talhões: %v", err)
	}
	bowtie := map[string]any{"type": "Polygon", "coordinates": [][][]float64{{{-55.61, -11.81}, {-55.60, -11.80}, {-55.61, -11.80}, {-55.60, -11.81}, {-55.61, -11.81}}}}
	var out []map[string]any
	for _, f := range fc.Features {
		id := f["properties"].(map[string]any)["id"]
		switch id {
		case drop:
			continue
		case broken:
			f["geometry"] = bowtie
		case from:
			for _, a := range add {
				out = append(out, map[string]any{"type": "Feature", "properties": map[string]any{"id": a, "crop": "soja", "plantioContorno": 0, "terraceamento": 0}, "geometry": f["geometry"]})
			}
		}
		out = append(out, f)
	}
	fc.Features = out
	b, _ = json.Marshal(fc)
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func sha256Hex(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// TestRerunOwnsFolder reproduces issue 19 defects 3, 4, 5 and 7 from the
// synthetic archive: a second run into a finished output folder, with one
// talhão removed from the input, one that now fails, ids whose old file
// names collided (a/b and a_b), a 236-character id and two ids differing
// only in case, and a user's temporary file below --out.
//   - a lock held by a live run refuses the run; a dead holder's is taken over;
//   - a rerun killed while publishing leaves run.json incomplete, listing
//     the old outputs and the new, never complete beside new payloads;
//   - the finished rerun publishes only its own payloads: the removed and
//     the failing talhão lose theirs; outputs[] lists every file with its
//     bytes and sha256 and each payload's talhão and run id; inputs[] has
//     their sizes;
//   - a/b and a_b get two files; the long id gets a payload; the case pair
//     fails, each naming the other; the user's file survives.
func TestRerunOwnsFolder(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the pipeline")
	}
	dir := archive(t)
	ref, _ := reference(t)
	rm, err := readManifest(context.Background(), filepath.Join(ref, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	var withPayload []string
	for _, o := range rm.Outputs {
		if o.FieldID != "" {
			withPayload = append(withPayload, o.FieldID)
		}
	}
	if len(withPayload) < 3 {
		t.Fatalf("reference has %d payloads, want at least 3 (outputs %+v)", len(withPayload), rm.Outputs)
	}
	removed, failing, from := withPayload[0], withPayload[1], withPayload[2]
	long := strings.Repeat("x", 236)
	out := t.TempDir()
	copyTree(t, ref, out)
	user := filepath.Join(out, "mine", ".data.csv.tmp-1")
	if err := os.MkdirAll(filepath.Dir(user), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(user, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	fields := filepath.Join(t.TempDir(), "talhoes.geojson")
	rewriteFields(t, dir, fields, removed, failing, from, []string{"a/b", "a_b", long, "CaseX", "casex"})
	cfg := baseConfig(t, dir, out)
	cfg.Fields = fields
	ctx := context.Background()

	// A live holder (a lease renewed in this process) refuses the run; a
	// dead one's, whose pid is this live process on this host, is taken
	// over once it stops changing.
	cfg.LeaseTTL = 600 * time.Millisecond
	held, err := acquireLease(ctx, out, All, "other", leaseTimesOf(cfg.LeaseTTL), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Run(ctx, cfg); !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "remove ") {
		t.Fatalf("run into a locked folder: %v, want ErrLocked saying how to break it", err)
	}
	close(held.stop) // the holder dies without releasing its lease
	<-held.done
	host, _ := os.Hostname()
	b, _ := json.Marshal(leaseInfo{RunID: "other", Host: host, PID: os.Getpid(), Heartbeat: time.Now().UTC(), TTLSeconds: 0.6})
	if err := os.WriteFile(filepath.Join(out, "run.lock"), b, 0o644); err != nil {
		t.Fatal(err)
	}

	// Stopped while publishing: a directory (not empty) where the first
	// part file goes makes its rename fail, after the incomplete manifest
	// is written and before anything is published, as a kill there would.
	first := filepath.Join(out, export.PartName(datasets[0], 0, 1))
	if err := os.Remove(first); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(first, "in-the-way"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err = Run(ctx, cfg)
	if err == nil || !strings.Contains(err.Error(), first) {
		t.Fatalf("run with a directory at %s: %v, want it to stop publishing there", first, err)
	}
	if _, err := os.Stat(filepath.Join(out, sinm.PayloadName("a/b"))); err == nil {
		t.Error("the stopped run published the payload of a/b")
	}
	mid, err := readManifest(ctx, filepath.Join(out, "run.json"))
	if err != nil || mid.Complete {
		t.Fatalf("run.json after a run killed while publishing: complete %v, %v; want incomplete", mid != nil && mid.Complete, err)
	}
	listed := map[string]bool{}
	for _, o := range mid.Outputs {
		listed[o.Path] = true
	}
	if !listed[sinm.PayloadName(removed)] || !listed[sinm.PayloadName("a/b")] {
		t.Errorf("the publishing manifest lists %v; want the old payload of %s and the new one of a/b", listed, removed)
	}
	if _, err := os.Stat(filepath.Join(out, "run.lock")); err == nil {
		t.Error("the stopped run left its lock")
	}

	if err := os.RemoveAll(first); err != nil {
		t.Fatal(err)
	}
	sum, err := Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	checkOwnedOutput(t, out, sum, map[string]bool{removed: false, failing: false, from: true, "a/b": true, "a_b": true, long: true, "CaseX": false, "casex": false})
	if b, err := os.ReadFile(user); err != nil || string(b) != "mine" {
		t.Errorf("the user's %s: %q, %v; want it untouched", user, b, err)
	}
}

// checkOutputs checks the finished rerun of TestRerunOwnsFolder: which
// talhões have a payload, that outputs[] is exactly what is on disk, with
// hashes, and the failures of the case pair.
func checkOwnedOutput(t *testing.T, out string, sum Summary, want map[string]bool) {
	t.Helper()
	m, err := readManifest(context.Background(), filepath.Join(out, "run.json"))
	if err != nil || !m.Complete || m.RunID == "" || m.RunID != sum.RunID {
		t.Fatalf("run.json: %v, complete %v, run id %q (summary %q)", err, m != nil && m.Complete, m.RunID, sum.RunID)
	}
	onDisk, _ := filepath.Glob(filepath.Join(out, "sinm", "*"))
	payloads := 0
	for _, o := range m.Outputs {
		b, err := os.ReadFile(filepath.Join(out, filepath.FromSlash(o.Path)))
		if err != nil || int64(len(b)) != o.Bytes || sha256Hex(b) != o.SHA256 {
			t.Errorf("output %s: %d bytes, %v; record says %d bytes sha256 %s", o.Path, len(b), err, o.Bytes, o.SHA256)
		}
		if strings.HasPrefix(o.Path, "sinm/") {
			payloads++
			if o.Path != sinm.PayloadName(o.FieldID) || o.RunID != m.RunID {
				t.Errorf("payload record %+v: want the talhão's file and run id %s", o, m.RunID)
			}
		}
		if o.Path == "indicators.parquet" && o.Rows != int64(sum.OK+sum.Partial) {
			t.Errorf("indicators.parquet: %d rows recorded, want %d", o.Rows, sum.OK+sum.Partial)
		}
	}
	if payloads != len(onDisk) || payloads != sum.Payloads {
		t.Errorf("%d payload records, %d files in sinm/, summary %d", payloads, len(onDisk), sum.Payloads)
	}
	for id, has := range want {
		if _, err := os.Stat(filepath.Join(out, sinm.PayloadName(id))); (err == nil) != has {
			t.Errorf("talhão %.20s: payload present %v, want %v", id, err == nil, has)
		}
	}
	failed := map[string]string{}
	for _, f := range m.Failures {
		failed[f.FieldID] = f.Reason
	}
	if !strings.Contains(failed["CaseX"], "casex") || !strings.Contains(failed["casex"], "CaseX") {
		t.Errorf("case pair failures: %q, %q; want each naming the other", failed["CaseX"], failed["casex"])
	}
	for _, in := range m.Inputs {
		if in.Role == "fields" && in.Bytes == 0 {
			t.Errorf("inputs[] %+v: bytes 0", in)
		}
	}
	for _, f := range []string{"run.lock", "_staging"} {
		if _, err := os.Stat(filepath.Join(out, f)); err == nil {
			t.Errorf("the finished run left %s", f)
		}
	}
}

// TestConfigErrors reproduces issue 19 defects 7 and 8: a non-empty folder
// that is not a manejo output, a DEM without CRS, a DEM coarser than 30 m
// and satellite codes missing a catalog collection or dem are refused as
// configuration errors before any imagery is read, and the folder is left
// as it was.
func TestConfigErrors(t *testing.T) {
	dir := archive(t)
	ctx := context.Background()
	tmp := t.TempDir()
	asc := "ncols 4\nnrows 4\nxllcorner -56\nyllcorner -12\ncellsize %s\nNODATA_value -9999\n" + strings.Repeat("1 2 3 4\n", 4)
	noCRS := filepath.Join(tmp, "nocrs.asc")
	coarse := filepath.Join(tmp, "coarse.asc")
	_ = os.WriteFile(noCRS, []byte(strings.Replace(asc, "%s", "0.0002", 1)), 0o644)
	_ = os.WriteFile(coarse, []byte(strings.Replace(asc, "%s", "0.000833333", 1)), 0o644)
	_ = os.WriteFile(filepath.Join(tmp, "coarse.prj"), []byte(`GEOGCS["WGS 84",DATUM["WGS_1984",SPHEROID["WGS 84",6378137,298.257223563]],PRIMEM["Greenwich",0],UNIT["degree",0.0174532925199433]]`), 0o644)

	userOut := t.TempDir()
	_ = os.WriteFile(filepath.Join(userOut, "indicators.parquet"), []byte("mine"), 0o644)
	for _, c := range []struct {
		name, want string
		edit       func(*Config)
	}{
		{"folder not manejo's", "not a manejo output", func(c *Config) { c.Out = userOut }},
		{"DEM without CRS", "no CRS", func(c *Config) { c.DEM = noCRS }},
		{"DEM of 90 m", "exceeds", func(c *Config) { c.DEM = coarse }},
		{"no code for the collection", "no code for sentinel-2-l2a", func(c *Config) { c.Codes = sinm.SatelliteCodes{"dem": "S09"} }},
		{"no code for the DEM", "no code for dem", func(c *Config) { c.Codes = sinm.SatelliteCodes{"sentinel-2-l2a": "S01"} }},
	} {
		cfg := baseConfig(t, dir, filepath.Join(t.TempDir(), "out"))
		c.edit(&cfg)
		_, err := Run(ctx, cfg)
		if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want a configuration error saying %q", c.name, err, c.want)
		}
		if entries, _ := os.ReadDir(cfg.Out); cfg.Out != userOut && len(entries) > 0 {
			t.Errorf("%s: the refused run left %d entries in %s", c.name, len(entries), cfg.Out)
		}
	}
	if b, err := os.ReadFile(filepath.Join(userOut, "indicators.parquet")); err != nil || string(b) != "mine" {
		t.Errorf("the user's indicators.parquet: %q, %v", b, err)
	}
	entries, _ := os.ReadDir(userOut)
	if len(entries) != 1 {
		t.Errorf("the user's folder holds %d entries, want 1", len(entries))
	}
}

// TestS3LockIsAtomic reproduces the S3 half of issue 19 defect 3 ("two runs
// into one folder are not prevented"): the lock used to be a check, a put
// and a read-back, so two runs starting together could both pass the
// check. Now it is one PutObject with If-None-Match: "*": of eight runs
// racing for one shard's lease on the S3 protocol server, exactly one holds
// it and the others, watching it renewed, get ErrLocked.
func TestS3LockIsAtomic(t *testing.T) {
	s3test.StartS3(t, "bucket")
	locks, errs := raceLease(t, "s3://bucket/out", 8, testLease)
	if l := oneHolder(t, locks, errs); l != nil {
		l.release()
	}
}

// oneHolder checks the outcome of raceLease: exactly one run holds the
// lease (returned), the others got ErrLocked.
func oneHolder(t *testing.T, locks []*lease, errs []error) *lease {
	t.Helper()
	var held []*lease
	for i, err := range errs {
		switch {
		case err == nil:
			held = append(held, locks[i])
		case !errors.Is(err, ErrLocked):
			t.Errorf("run %d: %v, want ErrLocked", i, err)
		}
	}
	if len(held) != 1 {
		t.Errorf("%d runs hold the lease, want exactly 1", len(held))
		for _, l := range held {
			l.release()
		}
		return nil
	}
	return held[0]
}

// raceLease starts n runs acquiring the lease of shard 1/2 under out at
// once and returns what each got.
func raceLease(t *testing.T, out string, n int, lt leaseTimes) ([]*lease, []error) {
	t.Helper()
	locks := make([]*lease, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			locks[i], errs[i] = acquireLease(context.Background(), out, Shard{Index: 1, Count: 2}, fmt.Sprintf("run-%d", i), lt, nil, nil)
		}()
	}
	wg.Wait()
	return locks, errs
}

// TestRemoveStaleKeepsOtherShards: a re-run removes what its previous run
// wrote and it does not write again — the payload of a talhão that left
// the input, a part of another layout — but not the payload of a talhão
// another shard now owns: that shard may have published it already
// (shards run at once), and removing it would leave the talhão ok with no
// payload.
func TestRemoveStaleKeepsOtherShards(t *testing.T) {
	out := t.TempDir()
	prev := []export.Output{
		{Path: "sinm/A.json", FieldID: "A"}, // still this shard's, published again
		{Path: "sinm/B.json", FieldID: "B"}, // moved to another shard
		{Path: "sinm/C.json", FieldID: "C"}, // left the input
		{Path: "cells/part-old.parquet"},    // another layout
	}
	for _, o := range prev {
		p := filepath.Join(out, filepath.FromSlash(o.Path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	now := []export.Output{{Path: "sinm/A.json", FieldID: "A"}}
	removed := removeStale(context.Background(), out, prev, now, map[string]bool{"B": true})
	if got := strings.Join(removed, " "); got != "sinm/C.json cells/part-old.parquet" {
		t.Errorf("removed %q, want the payload of the talhão that left and the old part", got)
	}
	for path, want := range map[string]bool{"sinm/A.json": true, "sinm/B.json": true, "sinm/C.json": false, "cells/part-old.parquet": false} {
		_, err := os.Stat(filepath.Join(out, filepath.FromSlash(path)))
		if (err == nil) != want {
			t.Errorf("%s on disk: %v, want %v", path, err == nil, want)
		}
	}
}
