package pipeline

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airbusgeo/godal"
	"github.com/manejo/manejo/series"
	"github.com/manejo/manejo/storage"
	"github.com/manejo/manejo/storage/s3test"
)

// mixedSeed is the seed of mixedArchiveDir's Sentinel-2 archive: `manejo
// synth --seed 11` (six designed talhões of 20–303 ha on a 3.84 km tile,
// a scene every 5 days from 2022-07-01 to 2026-06-30: 293 scenes).
const mixedSeed = 11

// BenchmarkPeakRSSMixed is issue 26's memory portfolio: many copies of a
// few large talhões over mixed Sentinel-2 and Landsat. The talhões are the
// six designed ones of sim/synth (20–303 ha, 254 cells), copied 10 times
// (60 talhões) and 100 times (600); the archive is synth's four years of
// Sentinel-2 (293 scenes) plus a Landsat Collection 2 Level-2 scene (30 m,
// 147 scenes) made from every second Sentinel-2 scene (mixedArchiveDir).
// Each size runs `manejo run` in a child process, twice, alternating the
// order, in two ways: the files on the local disk (read pass off, the
// default there) and every scene and the DEM on a loopback S3 server (read
// pass on, the default for a remote catalog); and with two settings:
// before, batches cut by the count of talhões alone (`--batch-cell-scenes
// -1`, the run before issue 26's fix), and after, the defaults. It
// reports each size's peak resident memory (the child's VmHWM, see
// childPeakRSS) and the ratio 600/60 of the most and of the least, per way
// and setting. Issue 26 asks 600/60 ≤ 1.2. Each run must end with every
// talhão. MANEJO_RSS_CASES (comma-separated way/setting names, e.g.
// "local/after,s3/after") limits the cases; MANEJO_RSS_ROUNDS sets the
// rounds (default 2). It also logs the peak when the read pass ended
// (its "read pass: done" line), and MANEJO_RSS_FLAGS adds flags to every
// run (for experiments: "--read-pairs 1000000").
func BenchmarkPeakRSSMixed(b *testing.B) {
	bin := manejoBinary(b)
	dir := mixedArchiveDir(b, bin)
	sizes := []int{60, 600}
	files := map[int][2]string{}
	for _, n := range sizes {
		files[n] = copiedTalhoes(b, dir, n)
	}
	rounds := 2
	if v, err := strconv.Atoi(os.Getenv("MANEJO_RSS_ROUNDS")); err == nil && v > 0 {
		rounds = v
	}
	settings := []struct{ name, cap string }{{"before", "-1"}, {"after", "0"}}
	served := false
	for _, way := range []string{"local", "s3"} {
		for _, set := range settings {
			name := way + "/" + set.name
			if want := os.Getenv("MANEJO_RSS_CASES"); want != "" && !strings.Contains(","+want+",", ","+name+",") {
				continue
			}
			root := dir
			if way == "s3" {
				if !served {
					serveArchive(b, s3test.Faults{}, "mixed", dir)
					served = true
				}
				root = "s3://mixed/archive"
			}
			lo, hi := map[int]float64{}, map[int]float64{}
			for round := range rounds {
				order := sizes
				if round%2 == 1 {
					order = []int{sizes[1], sizes[0]}
				}
				for _, n := range order {
					mb, pass, wall := mixedRun(b, bin, root, files[n], n, way == "s3", set.cap)
					b.Logf("%s, round %d, %d talhões: peak RSS %.0f MiB (%.0f MiB when the read pass ended), %.1f s", name, round+1, n, mb, pass, wall.Seconds())
					if lo[n] == 0 || mb < lo[n] {
						lo[n] = mb
					}
					hi[n] = max(hi[n], mb)
				}
			}
			key := strings.ReplaceAll(name, "/", "_")
			b.ReportMetric(hi[60], key+"_rss60_max_MiB")
			b.ReportMetric(hi[600], key+"_rss600_max_MiB")
			b.ReportMetric(lo[600]/lo[60], key+"_ratio600/60_min")
			b.ReportMetric(hi[600]/hi[60], key+"_ratio600/60_max")
			b.Logf("%s: 60 talhões %.0f–%.0f MiB, 600 talhões %.0f–%.0f MiB: 600/60 = %.2f (most/most), %.2f (least/least)",
				name, lo[60], hi[60], lo[600], hi[600], hi[600]/hi[60], lo[600]/lo[60])
		}
	}
}

// mixedRun runs manejo with its default flags on the talhões and sowing
// files of fields (n talhões) over the archive at root (a folder or an
// s3:// prefix), the read pass on for a remote root and off for a local
// one, batches of at most cellScenes pairs (--batch-cell-scenes), and
// returns the child's peak resident memory in MiB, the peak when its read
// pass ended (0 without one) and its wall time.
func mixedRun(b *testing.B, bin, root string, fields [2]string, n int, remote bool, cellScenes string) (float64, float64, time.Duration) {
	b.Helper()
	out := b.TempDir()
	pass := ReadPassOff
	if remote {
		pass = ReadPassOn
	}
	join := func(name string) string {
		if remote {
			return root + "/" + name
		}
		return filepath.Join(root, name)
	}
	cmd := exec.Command(bin, "run", "--fields", fields[0], "--sowing", fields[1],
		"--catalog", join("catalog.json"), "--dem", join("dem.tif"),
		"--season", "2026/2027", "--as-of", "2026-08-01", "--read-pass", pass, "--batch-cell-scenes", cellScenes,
		"--satellite-codes", "sentinel-2-l2a=S01,landsat-c2-l2=S02,dem=S09", "--out", out)
	cmd.Args = append(cmd.Args, strings.Fields(os.Getenv("MANEJO_RSS_FLAGS"))...)
	t0 := time.Now()
	mb, readMB, logs, err := childPeakRSS(cmd, bin, "read pass: done")
	wall := time.Since(t0)
	if code := cmd.ProcessState.ExitCode(); code != 0 && code != 3 {
		b.Fatalf("manejo run on %d talhões: exit %d (%v)\n%s", n, code, err, logs)
	}
	if remote && readMB == 0 {
		b.Fatalf("manejo run on %d talhões over S3: no end of the read pass in its log\n%s", n, logs)
	}
	m, err := readManifest(context.Background(), filepath.Join(out, "run.json"))
	if err != nil {
		b.Fatal(err)
	}
	if m.Status.Total != n {
		b.Fatalf("run.json counts %d talhões, want %d", m.Status.Total, n)
	}
	if m.Counts["scenes_read"] == 0 {
		b.Fatalf("run.json counts no scene read: %v", m.Counts)
	}
	os.RemoveAll(out)
	return mb, readMB, wall
}

// childPeakRSS runs cmd (whose program is bin) and returns its peak
// resident memory in MiB: the VmHWM of /proc/PID/status, polled every
// 10 ms while it runs. Not getrusage's ru_maxrss: Go starts children with
// vfork, so a child's ru_maxrss is at least this process's own peak, which
// an in-process S3 server holding the archive makes larger than the
// child's. VmHWM belongs to the memory of the program exec'd (checked
// through /proc/PID/exe), so it is the child's own; growth in its last
// 10 ms would be missed. It also returns the VmHWM when the child first
// wrote mark (0 if never): the peak up to that point of the run.
func childPeakRSS(cmd *exec.Cmd, bin, mark string) (float64, float64, []byte, error) {
	w := &markWriter{mark: []byte(mark)}
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Start(); err != nil {
		return 0, 0, nil, err
	}
	w.pid.Store(int64(cmd.Process.Pid))
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	pid := cmd.Process.Pid
	var peakKB int64
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		if exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid)); err == nil && exe == bin {
			if kb := procHWM(pid); kb > peakKB {
				peakKB = kb
			}
		}
		select {
		case err := <-done:
			return float64(peakKB) / 1024, float64(w.atKB.Load()) / 1024, w.buf.Bytes(), err
		case <-tick.C:
		}
	}
}

// markWriter keeps a child's output and, the first time a write holds
// mark, the child's VmHWM then. exec.Cmd calls Write from one goroutine
// at a time when Stdout and Stderr are the same writer.
type markWriter struct {
	buf       bytes.Buffer
	mark      []byte
	pid, atKB atomic.Int64
}

func (w *markWriter) Write(p []byte) (int, error) {
	if w.atKB.Load() == 0 && bytes.Contains(p, w.mark) {
		w.atKB.Store(procHWM(int(w.pid.Load())))
	}
	return w.buf.Write(p)
}

// procHWM is the VmHWM of process pid in KiB, 0 when unreadable.
func procHWM(pid int) int64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb
		}
	}
	return 0
}

// copiedTalhoes writes the archive's talhões n/6 times over (ids
// SYN-001-c000 …) and their declared sowings, and returns the two files.
func copiedTalhoes(b *testing.B, dir string, n int) [2]string {
	b.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, "talhoes.geojson"))
	if err != nil {
		b.Fatal(err)
	}
	var fc map[string]json.RawMessage
	var feats []map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fc); err != nil {
		b.Fatal(err)
	}
	if err := json.Unmarshal(fc["features"], &feats); err != nil {
		b.Fatal(err)
	}
	sow, err := os.ReadFile(filepath.Join(dir, "sowing.csv"))
	if err != nil {
		b.Fatal(err)
	}
	head, rows, _ := strings.Cut(string(sow), "\n")
	var copies []map[string]json.RawMessage
	var sowing strings.Builder
	sowing.WriteString(head + "\n")
	for c := 0; len(copies) < n; c++ {
		for _, f := range feats {
			if len(copies) == n {
				break
			}
			var props map[string]any
			if err := json.Unmarshal(f["properties"], &props); err != nil {
				b.Fatal(err)
			}
			id := props["id"].(string)
			props["id"] = fmt.Sprintf("%s-c%03d", id, c)
			g := map[string]json.RawMessage{}
			for k, v := range f {
				g[k] = v
			}
			g["properties"], _ = json.Marshal(props)
			copies = append(copies, g)
			for _, row := range strings.Split(strings.TrimSpace(rows), "\n") {
				if rest, ok := strings.CutPrefix(row, id+","); ok {
					fmt.Fprintf(&sowing, "%s,%s\n", props["id"], rest)
				}
			}
		}
	}
	fc["features"], _ = json.Marshal(copies)
	out, _ := json.Marshal(fc)
	tmp := b.TempDir()
	names := [2]string{filepath.Join(tmp, fmt.Sprintf("talhoes-%d.geojson", n)), filepath.Join(tmp, fmt.Sprintf("sowing-%d.csv", n))}
	if err := os.WriteFile(names[0], out, 0o644); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(names[1], []byte(sowing.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	return names
}

// mixedArchiveDir builds the archive of BenchmarkPeakRSSMixed once per
// machine: `manejo synth --seed 11` (bin, in a child process) and a
// Landsat scene from every second Sentinel-2 scene (landsatFrom), both in
// catalog.json.
func mixedArchiveDir(b *testing.B, bin string) string {
	b.Helper()
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("manejo-bench-archive-mixed-s%d", mixedSeed))
	if _, err := os.Stat(filepath.Join(dir, ".complete")); err == nil {
		return dir
	}
	os.RemoveAll(dir)
	t0 := time.Now()
	if out, err := exec.Command(bin, "synth", "--out", dir, "--seed", strconv.Itoa(mixedSeed)).CombinedOutput(); err != nil {
		b.Fatalf("manejo synth: %v\n%s", err, out)
	}
	storage.InitGDAL()
	catPath := filepath.Join(dir, "catalog.json")
	raw, err := os.ReadFile(catPath)
	if err != nil {
		b.Fatal(err)
	}
	var cat map[string]json.RawMessage
	var feats []json.RawMessage
	if err := json.Unmarshal(raw, &cat); err != nil {
		b.Fatal(err)
	}
	if err := json.Unmarshal(cat["features"], &feats); err != nil {
		b.Fatal(err)
	}
	all := append([]json.RawMessage(nil), feats...)
	for i := 0; i < len(feats); i += 2 {
		it, err := series.ParseItem(feats[i], catPath)
		if err != nil {
			b.Fatal(err)
		}
		ls, err := landsatFrom(dir, it)
		if err != nil {
			b.Fatal(err)
		}
		all = append(all, ls)
	}
	cat["features"], _ = json.Marshal(all)
	cat["context"], _ = json.Marshal(map[string]int{"returned": len(all), "matched": len(all)})
	out, _ := json.MarshalIndent(cat, "", " ")
	if err := os.WriteFile(catPath, out, 0o644); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".complete"), nil, 0o644); err != nil {
		b.Fatal(err)
	}
	b.Logf("mixed archive (%d Sentinel-2 + %d Landsat scenes) built in %s: %s", len(feats), len(all)-len(feats), time.Since(t0).Round(time.Second), dir)
	return dir
}

// landsatBands are the Landsat C2 L2 assets landsatFrom writes, each from
// a Sentinel-2 asset: the reflectances averaged to 30 m, the scene
// classification by its most frequent class.
var landsatBands = []struct{ key, from string }{
	{"red", "red"}, {"nir08", "nir"}, {"swir16", "swir16"}, {"swir22", "swir22"}, {"qa_pixel", "scl"},
}

// landsatFrom writes a Landsat Collection 2 Level-2 scene (30 m COGs,
// DN = (reflectance + 0.2) / 0.0000275, QA_PIXEL bits from the scene
// classification) of the same ground as the Sentinel-2 item s2, dated 3
// days later, under dir/landsat-c2-l2/, and returns its STAC item.
func landsatFrom(dir string, s2 *series.Item) (json.RawMessage, error) {
	date := s2.Datetime.AddDate(0, 0, 3)
	id := "LC09_L2SP_227068_" + date.Format("20060102") + "_02_T1"
	rel := filepath.Join("landsat-c2-l2", id)
	if err := os.MkdirAll(filepath.Join(dir, rel), 0o755); err != nil {
		return nil, err
	}
	prof := series.Profiles()["sentinel-2-l2a"]
	scale, offset := 0.0000275, -0.2
	assets := map[string]any{}
	var gt [6]float64
	var size int
	for _, band := range landsatBands {
		a := s2.Assets[band.from]
		src, err := godal.Open(a.Href)
		if err != nil {
			return nil, err
		}
		alg := "average"
		if band.key == "qa_pixel" {
			alg = "mode"
		}
		mem, err := src.Warp("", []string{"-of", "MEM", "-tr", "30", "30", "-r", alg, "-srcnodata", "0", "-dstnodata", "0", "-ot", "UInt16"})
		src.Close()
		if err != nil {
			return nil, fmt.Errorf("warp %s: %w", a.Href, err)
		}
		st := mem.Structure()
		size = st.SizeX
		if gt, err = mem.GeoTransform(); err != nil {
			mem.Close()
			return nil, err
		}
		buf := make([]uint16, st.SizeX*st.SizeY)
		bd := mem.Bands()[0]
		if err := bd.Read(0, 0, buf, st.SizeX, st.SizeY); err != nil {
			mem.Close()
			return nil, err
		}
		rad := series.AssetRadiometry(prof, s2, a)
		for i, v := range buf {
			switch {
			case band.key == "qa_pixel":
				buf[i] = qaPixel(v)
			case v != 0:
				refl := float64(v)*rad.Scale + rad.Offset
				buf[i] = uint16(min(65534, max(1, math.Round((refl-offset)/scale))))
			}
		}
		if err := bd.Write(0, 0, buf, st.SizeX, st.SizeY); err != nil {
			mem.Close()
			return nil, err
		}
		file := filepath.Join(rel, band.key+".tif")
		out, err := mem.Translate(filepath.Join(dir, file), []string{"-of", "COG", "-co", "COMPRESS=DEFLATE", "-co", "PREDICTOR=2", "-co", "BLOCKSIZE=256"})
		mem.Close()
		if err != nil {
			return nil, fmt.Errorf("write %s: %w", file, err)
		}
		out.Close()
		as := map[string]any{"href": filepath.ToSlash(file), "type": "image/tiff; application=geotiff; profile=cloud-optimized",
			"roles": []string{"data"}, "raster:bands": []map[string]any{{"nodata": 0, "data_type": "uint16", "spatial_resolution": 30}}}
		if band.key != "qa_pixel" {
			as["raster:bands"] = []map[string]any{{"nodata": 0, "data_type": "uint16", "spatial_resolution": 30, "scale": scale, "offset": offset}}
		}
		assets[band.key] = as
	}
	bb := s2.BBox
	item := map[string]any{
		"type": "Feature", "stac_version": "1.0.0", "id": id, "collection": "landsat-c2-l2",
		"bbox":     []float64{bb.Min[0], bb.Min[1], bb.Max[0], bb.Max[1]},
		"geometry": map[string]any{"type": "Polygon", "coordinates": [][][2]float64{{{bb.Min[0], bb.Min[1]}, {bb.Max[0], bb.Min[1]}, {bb.Max[0], bb.Max[1]}, {bb.Min[0], bb.Max[1]}, {bb.Min[0], bb.Min[1]}}}},
		"properties": map[string]any{"datetime": date.Format("2006-01-02T15:04:05.000000Z"), "platform": "landsat-9",
			"instruments": []string{"oli", "tirs"}, "proj:epsg": s2.EPSG, "proj:shape": []int{size, size},
			"proj:transform": gt, "manejo:synthetic": true},
		"assets": assets, "links": []any{},
	}
	return json.Marshal(item)
}

// qaPixel turns a Sentinel-2 scene classification class into Landsat
// QA_PIXEL bits: 0 fill, 1 dilated cloud, 2 cirrus, 3 cloud, 4 shadow,
// 5 snow; clear land is 21824 (clear, low confidences).
func qaPixel(scl uint16) uint16 {
	switch scl {
	case 0:
		return 1
	case 1, 2:
		return 21824 | 1<<1
	case 3:
		return 21824 | 1<<4
	case 8, 9:
		return 1<<3 | 1<<1 | 21824&^(1<<6)
	case 10:
		return 21824 | 1<<2
	case 11:
		return 21824 | 1<<5
	}
	return 21824
}
