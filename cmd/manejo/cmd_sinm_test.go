package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSINMValidate(t *testing.T) {
	example, err := os.ReadFile(filepath.Join("..", "..", "sinm", "testdata", "example.json"))
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
