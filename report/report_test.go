package report

import (
	"bytes"
	"context"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/manejo/manejo/coverage"
	"github.com/manejo/manejo/export"
	"github.com/manejo/manejo/pipeline"
	"github.com/manejo/manejo/sim/synth"
	"github.com/manejo/manejo/sinm"
)

// demoOutput runs the pipeline on a synthetic archive, as make demo does
// (every 10 days instead of 5 to keep the test short).
func demoOutput(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	ctx := context.Background()
	if _, err := synth.Generate(ctx, synth.Options{Out: filepath.Join(dir, "archive"), Seed: 42, RevisitDays: 10}); err != nil {
		t.Fatal(err)
	}
	season, err := coverage.ParseSeason("2026/2027", coverage.MonthDay{})
	if err != nil {
		t.Fatal(err)
	}
	a := filepath.Join(dir, "archive")
	_, err = pipeline.Run(ctx, pipeline.Config{
		Fields: filepath.Join(a, "talhoes.geojson"), Catalog: filepath.Join(a, "catalog.json"),
		DEM: filepath.Join(a, "dem.tif"), Sowing: filepath.Join(a, "sowing.csv"), Out: filepath.Join(dir, "out"),
		Season: season, AsOf: time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC),
		Codes: sinm.SatelliteCodes{"sentinel-2-l2a": "S01", "dem": "S09"}, Version: "test",
	})
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "out")
}

// artifactDir is where browser screenshots are kept: build/test-artifacts
// at the repository root (ignored by git), or $MANEJO_ARTIFACTS.
func artifactDir(t *testing.T) string {
	d := os.Getenv("MANEJO_ARTIFACTS")
	if d == "" {
		d = filepath.Join("..", "build", "test-artifacts")
	}
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	abs, _ := filepath.Abs(d)
	return abs
}

// chromiumArgs are the flags for a headless Chromium on a machine without
// network, display or D-Bus.
func chromiumArgs(userDir string) []string {
	return []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + userDir, "--host-resolver-rules=MAP * ~NOTFOUND",
		"--enable-logging=stderr", "--v=0", "--virtual-time-budget=5000"}
}

func TestReportInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test skipped in -short mode")
	}
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatal("chromium not found: `make setup` installs Debian's chromium package")
	}
	out := demoOutput(t)
	html := filepath.Join(t.TempDir(), "report.html")
	f, err := os.Create(html)
	if err != nil {
		t.Fatal(err)
	}
	st, err := Write(context.Background(), f, os.DirFS(out), Options{})
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if st.Talhoes != 6 || st.Observations == 0 {
		t.Fatalf("report of %d talhões and %d observations, want the 6 demo talhões with observations", st.Talhoes, st.Observations)
	}
	page, _ := os.ReadFile(html)
	// Self-contained: nothing that would make the browser fetch.
	if m := regexp.MustCompile(`(?i)(src|href)\s*=\s*"(https?:)?//|url\(\s*['"]?https?:|@import`).Find(page); m != nil {
		t.Fatalf("report references an external resource: %s", m)
	}

	// Render: DOM after scripts, console messages on stderr.
	cmd := exec.Command(chromium, append(chromiumArgs(t.TempDir()), "--dump-dom", "file://"+html)...)
	var dom, logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &dom, &logs
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium --dump-dom: %v\n%s", err, logs.String())
	}
	for _, line := range strings.Split(logs.String(), "\n") {
		if strings.Contains(line, ":CONSOLE") {
			t.Errorf("console message: %s", line)
		}
	}
	d := dom.String()
	for _, want := range []string{`id="summary-table"`, `<svg class="ts"`, `<svg class="map"`, `<polyline`, "SYN-001", "SYN-006"} {
		if !strings.Contains(d, want) {
			t.Errorf("rendered DOM lacks %s", want)
		}
	}
	if n := strings.Count(d, `<tr><td><a href="#f-`); n != 6 {
		t.Errorf("summary table has %d talhão rows, want 6", n)
	}

	// Screenshot, kept as a test artefact (not committed).
	shot := filepath.Join(artifactDir(t), "report.png")
	cmd = exec.Command(chromium, append(chromiumArgs(t.TempDir()), "--window-size=1280,2200", "--screenshot="+shot, "file://"+html)...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("chromium --screenshot: %v\n%s", err, b)
	}
	if fi, err := os.Stat(shot); err != nil || fi.Size() < 20_000 {
		t.Fatalf("screenshot %s missing or blank: %v", shot, err)
	}
	t.Logf("screenshot: %s", shot)
}

func TestColoursAndAnchors(t *testing.T) {
	if strawColor(0) != "#8c3b1e" || strawColor(100) != "#f2e29a" || strawColor(math.NaN()) != "#cccccc" {
		t.Errorf("strawColor ends = %s, %s, %s", strawColor(0), strawColor(100), strawColor(math.NaN()))
	}
	if anchor("MT/ÁREA 1") != "MT_2f_c1REA_201" {
		t.Errorf("anchor = %q", anchor("MT/ÁREA 1"))
	}
}

func TestTimeAxisTicks(t *testing.T) {
	ax := timeAxis{time.Date(2022, 7, 1, 0, 0, 0, 0, time.UTC), time.Date(2024, 6, 30, 0, 0, 0, 0, time.UTC)}
	major, minor := ax.ticks()
	if len(major) != 2 || major[0].Year() != 2023 || len(minor) != 22 {
		t.Fatalf("ticks = %d major (%v), %d minor; want 2023 and 2024 plus 22 months", len(major), major, len(minor))
	}
	if x0, x1 := ax.x(ax.t0), ax.x(ax.t1); x0 != padL || x1 != plotW-padR {
		t.Errorf("axis maps ends to %v..%v, want %v..%v", x0, x1, padL, plotW-padR)
	}
}

func TestReportShowsClassification(t *testing.T) {
	dir := t.TempDir()
	writeOutput(t, dir, 3, 4)
	three, mi := int32(3), 3.17
	rows := []export.ClassificationRow{
		{FieldID: "BENCH-00000", Crop: "soja", Level: &three, Mi: &mi, DecidingRule: "3.2.1-VI-b",
			Rules: []string{"3.2.1-VI-b: NM4 → NM3: m% at level 2 caps a mean at level 3 or 4"}},
		{FieldID: "BENCH-00001", Crop: "soja", Reason: "an indicator is missing (IN 2.2)", Missing: []string{"v_pct"}},
	}
	page := renderWith(t, dir, "classification.parquet", rows)
	for _, want := range []string{
		`<th title="management level preview (manejo classify)">NM</th>`,
		`<td data-v="3" title="decided by 3.2.1-VI-b">NM3</td>`,
		"Management level preview: NM3</b> (Mi 3.17; decided by 3.2.1-VI-b)",
		"3.2.1-VI-b: NM4 → NM3: m% at level 2 caps",
		"Management level:</b> not classifiable — an indicator is missing (IN 2.2)",
		"missing (IN 2.2): v_pct",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("report lacks %q", want)
		}
	}
}

// renderWith writes rows as dir/name beside the output already in dir and
// returns the report of dir.
func renderWith[T export.Row](t *testing.T, dir, name string, rows []T) string {
	t.Helper()
	f, err := os.Create(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	if err := export.Write(f, rows, export.Options{}); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := Write(context.Background(), &buf, os.DirFS(dir), Options{}); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}
