package main

// Issue 27's attacks on SINM delivery through the command line, against a
// real output folder (manejo synth, 3 talhões, then manejo run), the fake
// Keycloak and SINM and a second loopback server standing for another
// host. Every output is then searched for what must never be in it.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/manejo/manejo/export"
	"github.com/manejo/manejo/sinm/client/clienttest"
)

const (
	attackClientID = "11222333000181"
	attackSecret   = `p@ss/w+rd&x=ü "q" <tag>` // needs escaping in a form, a path and JSON
	attackCPF      = "52998224725"
	attackCNPJ     = "11444777000161"
)

func attackKey(i int) string { return fmt.Sprintf("KEY-%d-9f8e7d6c5b4a3921", i) }

// runFolder writes a synthetic archive of 3 talhões declaring a CPF, a
// CNPJ and a classification key each, runs manejo on it, and returns the
// output folder (3 payloads, sinm/keys.csv).
func runFolder(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	arch, out := filepath.Join(dir, "archive"), filepath.Join(dir, "out")
	if code, so, se := runCLI(t, "synth", "--out", arch, "--seed", "1", "--talhoes", "3", "--start", "2025-09-01", "--end", "2026-07-30", "--revisit", "10", "--size", "512"); code != exitOK {
		t.Fatalf("synth: exit %d\n%s%s", code, so, se)
	}
	fields := filepath.Join(arch, "talhoes.geojson")
	b, err := os.ReadFile(fields)
	if err != nil {
		t.Fatal(err)
	}
	var fc map[string]any
	if err := json.Unmarshal(b, &fc); err != nil {
		t.Fatal(err)
	}
	for i, f := range fc["features"].([]any) {
		p := f.(map[string]any)["properties"].(map[string]any)
		p["cpfProdutor"], p["cnpjPropriedade"], p["chaveClassificacaoNM"] = "529.982.247-25", "11.444.777/0001-61", attackKey(i+1)
	}
	b, _ = json.Marshal(fc)
	os.WriteFile(fields, b, 0o644)
	code, so, se := runCLI(t, "run", "--fields", fields, "--catalog", filepath.Join(arch, "catalog.json"), "--dem", filepath.Join(arch, "dem.tif"),
		"--season", "2025/2026", "--as-of", "2026-08-01", "--satellite-codes", "sentinel-2-l2a=S01,dem=S09", "--out", out)
	if n, _ := filepath.Glob(filepath.Join(out, "sinm", "SYN-*.json")); code == exitFatal || code == exitUsage || len(n) != 3 {
		t.Fatalf("run: exit %d, %d payloads\n%s%s", code, len(n), so, se)
	}
	return out
}

// TestSINMOutputsCarryNoSecret runs issue 27's SINM attacks one after the
// other on one output folder — D1 (token endpoint redirects to another
// host), D2 (Keycloak echoes the form), D3 (SINM echoes the Authorization
// header), D4 (SINM redirects the POST to another host), D5 (a 1.5 MB
// problem detail), D20 (an unreadable level, echoing a CPF) — then a clean
// submit, status and the HTML report, and searches every output: stdout,
// stderr, run.json, the ledger, every Parquet file (raw and decoded) and
// the report. Only the payloads (which must carry the CPF and CNPJ) and
// sinm/keys.csv (the keys' home) may hold them.
func TestSINMOutputsCarryNoSecret(t *testing.T) {
	out := runFolder(t)
	fake := clienttest.New(attackClientID, attackSecret)
	defer fake.Close()
	thief := clienttest.NewThief()
	defer thief.Close()
	for i := 1; i <= 3; i++ {
		fake.Keys[attackKey(i)] = true
	}
	t.Setenv("SINM_CLIENT_ID", attackClientID)
	t.Setenv("SINM_CLIENT_SECRET", attackSecret)
	api := []string{"--in", out, "--api-url", fake.URL, "--token-url", fake.TokenURL()}
	submit := append([]string{"sinm", "submit", "--rate", "0", "--concurrency", "1"}, api...)
	var all bytes.Buffer
	step := func(name string, want int, args ...string) string {
		code, so, se := runCLI(t, args...)
		all.WriteString(so + se)
		if code != want {
			t.Errorf("%s: exit %d, want %d\n%s%s", name, code, want, so, se)
		}
		return so + se
	}
	huge := fmt.Sprintf(`{"title":"Unprocessable","detail":%q}`, strings.Repeat("x", 1500000))

	fake.FailToken(clienttest.Reply{Code: 307, Location: thief.URL + clienttest.TokenPath})
	if got := step("D1 token redirect", exitFatal, submit...); !strings.Contains(got, "redirect to another host refused") {
		t.Errorf("D1: %s", got)
	}
	fake.FailToken(clienttest.Reply{Code: 400, Echo: true})
	step("D2 keycloak echo", exitFatal, submit...)
	fake.Fail(attackKey(1), clienttest.Reply{Code: 422, Echo: true})
	fake.Fail(attackKey(2), clienttest.Reply{Code: 422, Body: huge})
	step("D3 sinm echo, D5 huge problem", exitPartial, submit...)
	fake.Fail(attackKey(1), clienttest.Reply{Code: 307, Location: thief.URL + "/api/v1/sensoriamentos-remotos/" + url.PathEscape(attackKey(1))})
	step("D4 api redirect", exitFatal, submit...)
	if got := step("clean submit", exitOK, submit...); !strings.Contains(got, "sent 2") {
		t.Errorf("clean submit after the attacks: %s", got)
	}
	fake.Classification[attackKey(1)] = `{"nivelManejo": "NM` + attackCPF + `"}`
	fake.Classification[attackKey(3)], fake.Racional[attackKey(3)] = `{"nivelManejo": 3}`, `{"indicadores": [{"nome": "Tempo `+attackKey(3)+`", "valor": "`+attackCNPJ+`"}]}`
	fake.Fail(attackKey(2), clienttest.Reply{Code: 400, Echo: true})
	if got := step("D20 status", exitPartial, append([]string{"sinm", "status"}, api...)...); !strings.Contains(got, "no level manejo can read") {
		t.Errorf("D20: %s", got)
	}
	step("report", exitOK, "report", "--in", out, "--out", filepath.Join(out, "report.html"))

	if got := thief.Requests(); len(got) != 0 {
		t.Errorf("the other host received %d request(s): %q", len(got), got)
	}
	for _, name := range []string{"sinm/submissions.jsonl", "sinm_submissions.parquet", "sinm_results.parquet", "run.json", "report.html"} {
		if _, err := os.Stat(filepath.Join(out, name)); err != nil {
			t.Errorf("%s was not written: %v", name, err)
		}
	}
	subs, err := export.ReadDataset[export.SINMSubmissionRow](os.DirFS(out))
	results, err2 := export.ReadDataset[export.SINMResultRow](os.DirFS(out))
	if err != nil || err2 != nil {
		t.Fatal(err, err2)
	}
	fmt.Fprintf(&all, "%+v %+v", subs, results)
	filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
		rel, _ := filepath.Rel(out, p)
		if err != nil || d.IsDir() || rel == filepath.Join("sinm", "keys.csv") || filepath.Dir(rel) == "sinm" && strings.HasSuffix(rel, ".json") {
			return err
		}
		b, _ := os.ReadFile(p)
		all.Write(b)
		return nil
	})
	forbidden := []string{attackClientID, "11.222.333/0001-81", attackCPF, "529.982.247-25", attackCNPJ, "11.444.777/0001-61"}
	for _, s := range []string{attackSecret, attackKey(1), attackKey(2), attackKey(3)} {
		forbidden = append(forbidden, s, url.QueryEscape(s), url.PathEscape(s))
	}
	forbidden = append(forbidden, fake.Issued()...)
	for _, s := range forbidden {
		if strings.Contains(all.String(), s) {
			t.Errorf("an output contains %q", s)
		}
	}
	if len(fake.Issued()) == 0 || all.Len() < 10000 {
		t.Errorf("%d tokens issued, %d bytes searched: the search saw nothing", len(fake.Issued()), all.Len())
	}
}

// TestSINMSubmitTwiceAtOnce reproduces D6: two submits at once on one
// --in both POSTed every talhão and exited 0. While a child process's
// submit holds the ledger (SINM holds its POST of B), a second submit is
// refused at once and sends nothing; once the child is killed the kernel
// drops its lock and the next submit delivers B, each talhão exactly once.
func TestSINMSubmitTwiceAtOnce(t *testing.T) {
	fake, args, cmd := heldSubmit(t)
	t.Setenv("SINM_CLIENT_ID", "11222333000181")
	t.Setenv("SINM_CLIENT_SECRET", "the-secret")
	posts, tokens := fake.Count("POST"), fake.Count("TOKEN")
	code, stdout, stderr := runCLI(t, args...)
	if code != exitFatal || !strings.Contains(stderr, "in use by another sinm submit") || fake.Count("POST") != posts || fake.Count("TOKEN") != tokens {
		t.Errorf("second submit while the first runs: exit %d, %d more POSTs, %d more tokens\n%s%s", code, fake.Count("POST")-posts, fake.Count("TOKEN")-tokens, stdout, stderr)
	}
	cmd.Process.Kill()
	cmd.Wait()
	if code, stdout, stderr = runCLI(t, args...); !strings.Contains(stdout, "B key KEY-…: POST (resend) delivered, HTTP 201") {
		t.Errorf("after the first was killed: exit %d\n%s%s", code, stdout, stderr)
	}
	for _, k := range []string{"KEY-AAAA-0001-secret", "KEY-BBBB-0002-secret"} {
		if n := len(fake.Stored(k)); n != 1 {
			t.Errorf("%s stored %d times, want 1", k, n)
		}
	}
}
