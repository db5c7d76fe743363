package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/manejo/manejo/export"
	"github.com/manejo/manejo/internal/testkit"
	"github.com/manejo/manejo/sim/synth"
	"github.com/manejo/manejo/sinm/client/clienttest"
	"github.com/manejo/manejo/stacapi/stactest"
)

// TestOperatorSeason runs the README's "operator's season" block as
// written (issue 28): each line in order, its <placeholders> filled and
// nothing else changed, in a folder holding the demo's synthetic archive
// (talhões carrying their SINM keys, the DEM, the sowing dates) and
// testdata/demo's soil analyses and crop history. STAC_API is a STAC API
// mirror on loopback serving the archive's items and COGs (relative
// hrefs); --env hml is a fake Keycloak + SINM (clienttest) standing in for
// homologação. Every step exits 0.
func TestOperatorSeason(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end season skipped in -short mode")
	}
	lines := seasonBlock(t)
	work, archive := t.TempDir(), t.TempDir()
	if _, err := synth.Generate(t.Context(), synth.Options{Out: archive, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	keys := seasonFixture(t, archive, work)
	srv := stactest.New(t, testkit.Features(t, filepath.Join(archive, "catalog.json")))
	srv.Files = archive
	const company, secret = "11222333000181", "season-secret"
	fake := clienttest.New(company, secret)
	defer fake.Close()
	for id, k := range keys {
		fake.Keys[k] = true
		if id == "SYN-002" {
			fake.Classification[k] = `{"nivelManejo": "NM3"}`
			fake.Racional[k] = `{"scoreFinal": 3, "scoreMedio": 3.0, "indicadores": [{"nome": "Tempo sem revolvimento", "scoreParcial": 1}]}`
		}
	}
	// SINM's homologação is the loopback fake: --api-url/--token-url
	// (README: they replace --env for other installations).
	fill := strings.NewReplacer("--env hml", "--api-url "+fake.URL+" --token-url "+fake.TokenURL(),
		"<operator CNPJ>", "11.444.777/0001-61", "<API root>", srv.URL,
		"<company CNPJ digits>", company, "<secret>", secret)

	t.Chdir(work)
	outputs := map[string]string{}
	for _, l := range lines {
		line := fill.Replace(l)
		if strings.Contains(line, "<") {
			t.Fatalf("README line with an unknown placeholder: %s", l)
		}
		args := shellWords(t, line)
		switch args[0] {
		case "export":
			for _, kv := range args[1:] {
				k, v, _ := strings.Cut(kv, "=")
				t.Setenv(k, v)
			}
		case "manejo":
			code, stdout, stderr := runCLI(t, args[1:]...)
			t.Logf("$ %s\nexit %d\n%s%s", l, code, stdout, stderr)
			if code != exitOK {
				t.Fatalf("%s: exit %d\n%s%s", l, code, stdout, stderr)
			}
			outputs[strings.Join(args[1:3], " ")] += stdout + stderr
		default:
			t.Fatalf("README line is neither export nor manejo: %s", l)
		}
	}
	checkSeason(t, work, outputs, keys, fake)
}

// checkSeason checks what each step of the season left.
func checkSeason(t *testing.T, work string, outputs map[string]string, keys map[string]string, fake *clienttest.Fake) {
	t.Helper()
	payloads, _ := filepath.Glob(filepath.Join(work, "out", "sinm", "*.json"))
	if len(payloads) == 0 {
		t.Fatal("the run wrote no payload")
	}
	if c := outputs["classify --soil"]; strings.Contains(c, "missing: contour_pct") || !strings.Contains(c, "SYN-003 (soja): NM") {
		t.Errorf("the preview leaves talhões missing contour_pct, or SYN-003 not classified:\n%s", c)
	}
	if d := outputs["sinm submit"]; !strings.Contains(d, "would POST (new)") || !strings.Contains(d, "delivered, HTTP 201") {
		t.Errorf("submit (dry run, then hml):\n%s", d)
	}
	delivered := 0
	for _, k := range keys {
		delivered += len(fake.Stored(k))
	}
	if delivered != len(payloads) {
		t.Errorf("SINM holds %d submissions, want the %d payloads once each", delivered, len(payloads))
	}
	rows, err := export.ReadDataset[export.SINMResultRow](os.DirFS(filepath.Join(work, "out")))
	if err != nil || len(rows) != len(payloads) {
		t.Fatalf("sinm_results.parquet: %d rows (%v), want %d", len(rows), err, len(payloads))
	}
	// SINM's T indicator level 1 beside the preview's 2 (demo: T 3 years),
	// compared like with like (point 7); the preview is this run's (point 4).
	if s := outputs["sinm status"]; !strings.Contains(s, "SYN-002 key KEY-…: complete NM3\n  SYN-002 differs: T indicator level (Tabela 1, 1–4): SINM 1, preview 2\n") ||
		strings.Contains(s, "warning") {
		t.Errorf("status:\n%s", s)
	}
}

// seasonFixture places the season's inputs in work: the archive's
// talhões, each with its SINM key (chaveClassificacaoNM, as registered),
// DEM and sowing dates, and the demo's soil analyses and crop history. It
// returns the keys by talhão.
func seasonFixture(t *testing.T, archive, work string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(archive, "talhoes.geojson"))
	if err != nil {
		t.Fatal(err)
	}
	var fc map[string]any
	if err := json.Unmarshal(b, &fc); err != nil {
		t.Fatal(err)
	}
	keys := map[string]string{}
	for _, f := range fc["features"].([]any) {
		p := f.(map[string]any)["properties"].(map[string]any)
		id := p["id"].(string)
		keys[id] = "KEY-" + id + "-season"
		p["chaveClassificacaoNM"] = keys[id]
	}
	if b, err = json.Marshal(fc); err != nil {
		t.Fatal(err)
	}
	copies := map[string][]byte{"talhoes.geojson": b}
	for name, src := range map[string]string{"dem.tif": filepath.Join(archive, "dem.tif"), "sowing.csv": filepath.Join(archive, "sowing.csv"),
		"soil.csv": filepath.Join("..", "..", "testdata", "demo", "soil.csv"), "crops.csv": filepath.Join("..", "..", "testdata", "demo", "crops.csv")} {
		if copies[name], err = os.ReadFile(src); err != nil {
			t.Fatal(err)
		}
	}
	for name, data := range copies {
		if err := os.WriteFile(filepath.Join(work, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

// seasonBlock is the code block under the README's heading "The
// operator's season", as lines: continuation lines joined, comments (from
// a " #" outside quotes) and blank lines dropped.
func seasonBlock(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	i := strings.Index(doc, "### The operator's season")
	if i < 0 {
		t.Fatal(`README.md has no "### The operator's season"`)
	}
	var lines []string
	cur, in := "", false
	for l := range strings.SplitSeq(doc[i:], "\n") {
		if !strings.HasPrefix(l, "    ") {
			if in && strings.TrimSpace(l) != "" {
				break
			}
			continue
		}
		in = true
		l = stripComment(strings.TrimSpace(l))
		if strings.HasSuffix(l, "\\") {
			cur += strings.TrimSuffix(l, "\\") + " "
			continue
		}
		if l = strings.TrimSpace(cur + l); l != "" {
			lines = append(lines, l)
		}
		cur = ""
	}
	if len(lines) < 8 {
		t.Fatalf("the season block has %d lines: %q", len(lines), lines)
	}
	return lines
}

// stripComment removes a shell comment: from a '#' that starts a word,
// outside quotes.
func stripComment(l string) string {
	var q rune
	for i, r := range l {
		switch {
		case q != 0:
			if r == q {
				q = 0
			}
		case r == '\'' || r == '"':
			q = r
		case r == '#' && (i == 0 || l[i-1] == ' '):
			return strings.TrimSpace(l[:i])
		}
	}
	return l
}

// shellWords splits a command line as a POSIX shell would for these
// lines: words by blanks, '…' literal, "…" and bare words with $NAME
// expanded from the environment.
func shellWords(t *testing.T, l string) []string {
	t.Helper()
	var words []string
	var w strings.Builder
	inWord := false
	for i := 0; i < len(l); i++ {
		c := l[i]
		switch {
		case c == ' ':
			if inWord {
				words, inWord = append(words, w.String()), false
				w.Reset()
			}
			continue
		case c == '\'':
			j := strings.IndexByte(l[i+1:], '\'')
			if j < 0 {
				t.Fatalf("unclosed ' in %s", l)
			}
			w.WriteString(l[i+1 : i+1+j])
			i += j + 1
		case c == '"':
			j := strings.IndexByte(l[i+1:], '"')
			if j < 0 {
				t.Fatalf("unclosed \" in %s", l)
			}
			w.WriteString(os.Expand(l[i+1:i+1+j], os.Getenv))
			i += j + 1
		case c == '$':
			j := i + 1
			for j < len(l) && (l[j] == '_' || l[j] >= 'A' && l[j] <= 'Z' || l[j] >= 'a' && l[j] <= 'z' || l[j] >= '0' && l[j] <= '9') {
				j++
			}
			w.WriteString(os.Getenv(l[i+1 : j]))
			i = j - 1
		default:
			w.WriteByte(c)
		}
		inWord = true
	}
	if inWord {
		words = append(words, w.String())
	}
	if len(words) == 0 {
		t.Fatalf("empty command: %q", l)
	}
	return words
}
