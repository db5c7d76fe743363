package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/manejo/manejo/export"
	"github.com/manejo/manejo/sinm"
	"github.com/manejo/manejo/sinm/client/clienttest"
)

func TestSINMValidate(t *testing.T) {
	example, err := os.ReadFile(filepath.Join("..", "..", "sinm", "testdata", "example-complete.json"))
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	sinm := filepath.Join(out, "sinm")
	os.MkdirAll(sinm, 0o755)
	os.WriteFile(filepath.Join(sinm, "A.json"), example, 0o644)
	bad := strings.Replace(string(example), `"ndvi": 0.1987`, `"ndvi": 1.1987`, 1)
	bad = strings.Replace(bad, `"codigoSateliteDeclividadeMedia": "S09"`, `"codigoSateliteDeclividadeMedia": "S10"`, 1)
	os.WriteFile(filepath.Join(sinm, "B.json"), []byte(bad), 0o644)
	os.WriteFile(filepath.Join(out, "run.json"), []byte(`{"tool":"manejo"}`), 0o644) // not a payload

	var stdout, stderr bytes.Buffer
	code := runMain(context.Background(), []string{"sinm", "validate", out}, &stdout, &stderr)
	if code != exitPartial {
		t.Errorf("exit %d, want %d (some invalid)\n%s%s", code, exitPartial, stdout.String(), stderr.String())
	}
	got := stdout.String()
	for _, want := range []string{
		filepath.Join(sinm, "A.json") + ": ok",
		filepath.Join(sinm, "B.json") + ": $.codigoSateliteDeclividadeMedia: ",
		filepath.Join(sinm, "B.json") + ": $.indices[1].ndvi: ",
		"2 payload(s): 1 valid, 1 invalid",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	stdout.Reset()
	if code := runMain(context.Background(), []string{"sinm", "validate", filepath.Join(sinm, "A.json"), "--quiet"}, &stdout, &stderr); code != exitOK || strings.Contains(stdout.String(), ": ok") {
		t.Errorf("valid file --quiet: exit %d\n%s", code, stdout.String())
	}
	if code := runMain(context.Background(), []string{"sinm", "validate", filepath.Join(out, "missing.json")}, &stdout, &stderr); code != exitFatal {
		t.Errorf("missing file: exit %d, want %d", code, exitFatal)
	}
	srv := httptest.NewServer(http.FileServer(http.Dir(sinm)))
	defer srv.Close()
	stdout.Reset()
	if code := runMain(context.Background(), []string{"sinm", "validate", srv.URL + "/A.json"}, &stdout, &stderr); code != exitOK || !strings.Contains(stdout.String(), srv.URL+"/A.json: ok") {
		t.Errorf("payload over HTTP: exit %d\n%s%s", code, stdout.String(), stderr.String())
	}
	if code := runMain(context.Background(), []string{"sinm", "check"}, &stdout, &stderr); code != exitUsage {
		t.Errorf("unknown subcommand: exit %d, want %d", code, exitUsage)
	}
}

// sinmOutput writes an output folder with the payloads of talhões A, B and
// C (the schema example carrying a CPF and a CNPJ) and a keys CSV for A, B
// and D (D has no payload; C has no key).
func sinmOutput(t *testing.T) (dir, keys string) {
	t.Helper()
	example, err := os.ReadFile(filepath.Join("..", "..", "sinm", "testdata", "example-complete.json"))
	if err != nil {
		t.Fatal(err)
	}
	body := strings.Replace(string(example), `"dataInicial"`, `"cpfProdutor": "52998224725", "cnpjPropriedade": "11444777000161", "dataInicial"`, 1)
	dir = t.TempDir()
	for _, id := range []string{"A", "B", "C"} {
		p := filepath.Join(dir, filepath.FromSlash(sinm.PayloadName(id)))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	keys = filepath.Join(t.TempDir(), "keys.csv")
	os.WriteFile(keys, []byte("field_id,chaveClassificacaoNM\nA,KEY-AAAA-0001-secret\nB,KEY-BBBB-0002-secret\nD,KEY-DDDD-0004-secret\n"), 0o644)
	return dir, keys
}

func TestSINMSubmit(t *testing.T) {
	dir, keys := sinmOutput(t)
	fake := clienttest.New("11222333000181", "the-secret")
	defer fake.Close()
	fake.Keys["KEY-AAAA-0001-secret"], fake.Keys["KEY-BBBB-0002-secret"] = true, true
	fake.Fail("KEY-BBBB-0002-secret", clienttest.Reply{Code: 429, RetryAfter: "0"})
	t.Setenv("SINM_CLIENT_ID", "11222333000181")
	t.Setenv("SINM_CLIENT_SECRET", "the-secret")
	args := []string{"sinm", "submit", "--in", dir, "--keys", keys, "--api-url", fake.URL, "--token-url", fake.TokenURL(), "--rate", "0"}
	var all bytes.Buffer

	var stdout, stderr bytes.Buffer
	code := runMain(context.Background(), append(args, "--dry-run"), &stdout, &stderr)
	all.WriteString(stdout.String() + stderr.String())
	body, _ := os.ReadFile(filepath.Join(dir, "sinm", "A.json"))
	if code != exitPartial || fake.Count("TOKEN")+fake.Count("POST") != 0 ||
		!strings.Contains(stdout.String(), "A key KEY-…: would POST (new): ") || !strings.Contains(stdout.String(), "D: no payload") ||
		!strings.Contains(stderr.String(), "1 payload(s)") ||
		!strings.Contains(stdout.String(), fmt.Sprintf("would send new 2, no payload 1; dry run: %d B would be sent", 2*len(body))) {
		t.Errorf("dry run: exit %d, %d requests\n%s%s", code, fake.Count("TOKEN")+fake.Count("POST"), stdout.String(), stderr.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "sinm", "submissions.jsonl")); err == nil {
		t.Error("dry run wrote the ledger")
	}

	stdout.Reset()
	stderr.Reset()
	code = runMain(context.Background(), args, &stdout, &stderr)
	all.WriteString(stdout.String() + stderr.String())
	if code != exitPartial || len(fake.Stored("KEY-AAAA-0001-secret")) != 1 || len(fake.Stored("KEY-BBBB-0002-secret")) != 1 ||
		!strings.Contains(stdout.String(), "sent 2") || !strings.Contains(stdout.String(), "1 retries") {
		t.Errorf("submit: exit %d (want 3: D has no payload)\n%s%s", code, stdout.String(), stderr.String())
	}

	stdout.Reset()
	code = runMain(context.Background(), args, &stdout, &stderr)
	all.WriteString(stdout.String() + stderr.String())
	if fake.Count("POST") != 3 || !strings.Contains(stdout.String(), "unchanged 2") {
		t.Errorf("second submit: exit %d, %d POSTs\n%s", code, fake.Count("POST"), stdout.String())
	}
	subs, err := export.ReadDataset[export.SINMSubmissionRow](os.DirFS(dir))
	if err != nil || len(subs) != 4 || subs[0].FieldID != "A" || subs[0].Op != "intent" || subs[1].Code != 201 {
		t.Errorf("sinm_submissions.parquet: %+v %v", subs, err)
	}
	ledger, _ := os.ReadFile(filepath.Join(dir, "sinm", "submissions.jsonl"))
	all.Write(ledger)
	for _, s := range []string{"the-secret", "11222333000181", "52998224725", "11444777000161", "KEY-AAAA-0001-secret", "KEY-BBBB-0002-secret", "KEY-DDDD-0004-secret"} {
		if strings.Contains(all.String(), s) {
			t.Errorf("output or ledger contains %q", s)
		}
	}

	t.Setenv("SINM_CLIENT_SECRET", "")
	if code := runMain(context.Background(), args, &stdout, &stderr); code != exitUsage {
		t.Errorf("no secret: exit %d, want %d", code, exitUsage)
	}
}

// The keys come from the talhões' property chaveClassificacaoNM, which the
// run writes to sinm/keys.csv (issue 18 item 1): submit needs no --keys;
// a --keys CSV adds keys and overrides, naming each talhão whose key it
// changes with both keys redacted; no key at all is a usage error.
func TestSINMKeysFromRun(t *testing.T) {
	dir, keysCSV := sinmOutput(t)
	fake := clienttest.New("11222333000181", "the-secret")
	defer fake.Close()
	fake.Keys["KEY-AAAA-0001-secret"], fake.Keys["KEY-BBBB-0002-secret"] = true, true
	t.Setenv("SINM_CLIENT_ID", "11222333000181")
	t.Setenv("SINM_CLIENT_SECRET", "the-secret")
	args := []string{"sinm", "submit", "--in", dir, "--api-url", fake.URL, "--token-url", fake.TokenURL(), "--rate", "0"}
	var stdout, stderr bytes.Buffer
	if code := runMain(context.Background(), append(args, "--dry-run"), &stdout, &stderr); code != exitUsage || !strings.Contains(stderr.String(), "no classification keys") {
		t.Errorf("no keys anywhere: exit %d, want %d\n%s", code, exitUsage, stderr.String())
	}
	var kb bytes.Buffer
	if err := sinm.WriteKeys(&kb, map[string]string{"A": "KEY-AAAA-0001-secret", "B": "KEY-OLDB-0002-secret"}); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, filepath.FromSlash(sinm.KeysName(""))), kb.Bytes(), 0o644)

	stdout.Reset()
	stderr.Reset()
	code := runMain(context.Background(), append(args, "--dry-run", "--keys", keysCSV), &stdout, &stderr)
	all := stdout.String() + stderr.String()
	if code != exitPartial || !strings.Contains(stderr.String(), "talhão B: --keys gives key KEY-… (sha256 ") || strings.Contains(stderr.String(), "talhão A:") ||
		!strings.Contains(stdout.String(), "would send new 2, no payload 1") || strings.Contains(all, "OLDB-0002") || strings.Contains(all, "BBBB-0002") {
		t.Errorf("--keys over the run's keys: exit %d\n%s", code, all)
	}

	stdout.Reset()
	stderr.Reset()
	code = runMain(context.Background(), args, &stdout, &stderr)
	if len(fake.Stored("KEY-AAAA-0001-secret")) != 1 || !strings.Contains(stderr.String(), "1 payload(s)") {
		t.Errorf("submit with the run's keys only: exit %d, A stored %d times\n%s%s", code, len(fake.Stored("KEY-AAAA-0001-secret")), stdout.String(), stderr.String())
	}
}

func TestSINMStatus(t *testing.T) {
	dir, keys := sinmOutput(t)
	fake := clienttest.New("11222333000181", "the-secret")
	defer fake.Close()
	fake.Keys["KEY-AAAA-0001-secret"], fake.Keys["KEY-BBBB-0002-secret"] = true, true
	t.Setenv("SINM_CLIENT_ID", "11222333000181")
	t.Setenv("SINM_CLIENT_SECRET", "the-secret")
	endpoints := []string{"--in", dir, "--keys", keys, "--api-url", fake.URL, "--token-url", fake.TokenURL()}
	var stdout, stderr bytes.Buffer
	runMain(context.Background(), append([]string{"sinm", "submit"}, endpoints...), &stdout, &stderr)
	if len(fake.Stored("KEY-AAAA-0001-secret")) != 1 {
		t.Fatalf("submit failed:\n%s%s", stdout.String(), stderr.String())
	}
	fake.Classification["KEY-BBBB-0002-secret"] = `{"nivelManejo": "NM2"}`
	fake.Racional["KEY-BBBB-0002-secret"] = `{"scoreFinal": 2, "scoreMedio": 2.5, "indicadores": [{"nome": "Tempo sem revolvimento", "valor": 1, "unidade": "anos", "scoreParcial": 1}]}`
	lv := func(n int32) *int32 { return &n }
	var pq bytes.Buffer
	if err := export.Write(&pq, []export.ClassificationRow{{FieldID: "A", Level: lv(3)}, {FieldID: "B", Level: lv(3), TLevel: lv(3)}}, export.Options{}); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "classification.parquet"), pq.Bytes(), 0o644)
	// Issue 28 point 4: the run was re-run after the preview was made.
	var m bytes.Buffer
	finished := time.Date(2026, 12, 1, 11, 0, 0, 0, time.UTC)
	export.WriteManifest(&m, export.Manifest{Version: "v1", FinishedAt: finished})
	os.WriteFile(filepath.Join(dir, "run.json"), m.Bytes(), 0o644)
	if err := os.Chtimes(filepath.Join(dir, "classification.parquet"), finished.Add(-time.Hour), finished.Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}

	stdout.Reset()
	stderr.Reset()
	code := runMain(context.Background(), append([]string{"sinm", "status"}, endpoints...), &stdout, &stderr)
	got := stdout.String()
	for _, want := range []string{"A key KEY-…: pending", "B key KEY-…: complete NM2", "B differs: management level: SINM NM2, preview NM3", "B differs: T indicator level (Tabela 1, 1–4): SINM 1, preview 3",
		"2 delivered talhão(ões): 1 complete (1 differ from the preview), 1 pending, 0 error(s)"} {
		if !strings.Contains(got, want) {
			t.Errorf("status output lacks %q", want)
		}
	}
	if code != exitOK {
		t.Errorf("exit %d\n%s%s", code, got, stderr.String())
	}
	if want := "warning: classification.parquet in " + dir + " (written 2026-12-01 10:00:00 UTC) is older than the run (finished 2026-12-01 11:00:00 UTC)"; !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
	}
	// A preview made after the run is compared without a warning.
	os.Chtimes(filepath.Join(dir, "classification.parquet"), finished.Add(time.Minute), finished.Add(time.Minute))
	stderr.Reset()
	if runMain(context.Background(), append([]string{"sinm", "status"}, endpoints...), &stdout, &stderr); strings.Contains(stderr.String(), "older") {
		t.Errorf("a fresh preview is called stale:\n%s", stderr.String())
	}
	rows, err := export.ReadDataset[export.SINMResultRow](os.DirFS(dir))
	if err != nil || len(rows) != 2 || rows[1].Status != "complete" || *rows[1].PreviewLevel != 3 || len(rows[1].Differences) != 2 {
		t.Errorf("sinm_results.parquet: %+v %v", rows, err)
	}
	if strings.Contains(got+stderr.String(), "KEY-AAAA-0001-secret") || strings.Contains(got+stderr.String(), "the-secret") {
		t.Error("status output shows a key or the secret")
	}
}

// TestSINMSubmitHelperProcess is the child of TestSINMSubmitKilled: it runs
// 'manejo sinm submit' with the arguments in MANEJO_SUBMIT_ARGS and is
// killed mid-way by its parent.
func TestSINMSubmitHelperProcess(t *testing.T) {
	args := os.Getenv("MANEJO_SUBMIT_ARGS")
	if args == "" {
		t.Skip("helper process only")
	}
	runMain(context.Background(), strings.Split(args, "\x1f"), io.Discard, io.Discard)
}

// TestSINMSubmitKilled kills a submitting process (SIGKILL) while SINM
// holds one of its POSTs, then submits again: every talhão ends delivered
// exactly once.
func TestSINMSubmitKilled(t *testing.T) {
	fake, args, cmd := heldSubmit(t)
	cmd.Process.Kill()
	cmd.Wait()
	if n := len(fake.Stored("KEY-AAAA-0001-secret")); n != 1 {
		t.Fatalf("before the kill A was stored %d times", n)
	}

	t.Setenv("SINM_CLIENT_ID", "11222333000181")
	t.Setenv("SINM_CLIENT_SECRET", "the-secret")
	var stdout, stderr bytes.Buffer
	runMain(context.Background(), args, &stdout, &stderr)
	for _, want := range []string{"A key KEY-…: unchanged", "B key KEY-…: POST (resend) delivered, HTTP 201", "recovered 1"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("restart output lacks %q:\n%s%s", want, stdout.String(), stderr.String())
		}
	}
	for _, k := range []string{"KEY-AAAA-0001-secret", "KEY-BBBB-0002-secret"} {
		if n := len(fake.Stored(k)); n != 1 {
			t.Errorf("%s stored %d times, want 1", k, n)
		}
	}
}

// heldSubmit starts 'manejo sinm submit' of sinmOutput's folder in a child
// process (TestSINMSubmitHelperProcess), SINM holding its POST of B, and
// returns once that POST arrived: the child is then mid-request.
func heldSubmit(t *testing.T) (*clienttest.Fake, []string, *exec.Cmd) {
	t.Helper()
	dir, keys := sinmOutput(t)
	fake := clienttest.New("11222333000181", "the-secret")
	t.Cleanup(fake.Close)
	fake.Keys["KEY-AAAA-0001-secret"], fake.Keys["KEY-BBBB-0002-secret"] = true, true
	held := fake.Hold("KEY-BBBB-0002-secret")
	args := []string{"sinm", "submit", "--in", dir, "--keys", keys, "--api-url", fake.URL, "--token-url", fake.TokenURL(), "--concurrency", "1", "--rate", "0"}
	cmd := exec.Command(os.Args[0], "-test.run=^TestSINMSubmitHelperProcess$")
	cmd.Env = append(os.Environ(), "MANEJO_SUBMIT_ARGS="+strings.Join(args, "\x1f"), "SINM_CLIENT_ID=11222333000181", "SINM_CLIENT_SECRET=the-secret")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	select {
	case <-held:
	case <-time.After(30 * time.Second):
		t.Fatal("the child never POSTed B")
	}
	return fake, args, cmd
}
