package pipeline

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/manejo/manejo/export"
	"github.com/manejo/manejo/sinm"
)

// editFields rewrites the archive's talhões into dst, editing the
// properties of each talhão that edit names.
func editFields(t *testing.T, dir, dst string, edit map[string]func(map[string]any)) {
	t.Helper()
	var fc struct {
		Type     string           `json:"type"`
		Features []map[string]any `json:"features"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "talhoes.geojson"))
	if err != nil || json.Unmarshal(b, &fc) != nil {
		t.Fatalf("read talhões: %v", err)
	}
	for _, f := range fc.Features {
		p := f["properties"].(map[string]any)
		if e := edit[p["id"].(string)]; e != nil {
			e(p)
		}
	}
	b, _ = json.Marshal(fc)
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestUndeclaredPracticesAndKeys covers issue 18 item 4 in a run:
//   - a talhão that declares no terraceamento gets no payload: its status
//     is partial and run.json names the property and the way out; with
//     UndeclaredPracticesAsZero it gets a payload with terraceamento 0;
//   - the keys talhões declare (chaveClassificacaoNM) are written to
//     sinm/keys.csv, listed in run.json with their hash, and never appear
//     in run.json or the Parquet datasets;
//   - the operator CNPJ reaches every payload.
func TestUndeclaredPracticesAndKeys(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the pipeline")
	}
	t.Parallel()
	dir := archive(t)
	fields := filepath.Join(t.TempDir(), "talhoes.geojson")
	const keyA, keyB = "KEY-SYN1-7f3a9c-secret", "KEY-SYN3-11b0d2-secret"
	editFields(t, dir, fields, map[string]func(map[string]any){
		"SYN-001": func(p map[string]any) { p["chaveClassificacaoNM"] = keyA },
		"SYN-003": func(p map[string]any) { p["chaveClassificacaoNM"] = keyB },
		"SYN-002": func(p map[string]any) { delete(p, "terraceamento") },
	})
	ctx := context.Background()
	out := t.TempDir()
	cfg := baseConfig(t, dir, out)
	cfg.Fields, cfg.OperatorCNPJ = fields, "11.444.777/0001-61"
	sum, err := Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	m, err := readManifest(ctx, filepath.Join(out, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	reason := ""
	for _, f := range m.Failures {
		if f.FieldID == "SYN-002" {
			reason = f.Reason
		}
	}
	if !strings.Contains(reason, "terraceamento (0 or 1) is not a property of the talhão") || !strings.Contains(reason, "held back") ||
		!strings.Contains(reason, "--undeclared-practices-as-zero") {
		t.Errorf("run.json reason of SYN-002 = %q, want the undeclared terraceamento and how to send it", reason)
	}
	if _, err := os.Stat(filepath.Join(out, sinm.PayloadName("SYN-002"))); err == nil {
		t.Error("SYN-002 got a payload without terraceamento")
	}
	inds, err := export.ReadDataset[export.IndicatorRow](os.DirFS(out))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range inds {
		if r.FieldID == "SYN-002" && r.Status != export.StatusPartial {
			t.Errorf("SYN-002 status %s, want partial", r.Status)
		}
	}
	keys, err := os.ReadFile(filepath.Join(out, "sinm", "keys.csv"))
	if want := "field_id,chaveClassificacaoNM\nSYN-001," + keyA + "\nSYN-003," + keyB + "\n"; err != nil || string(keys) != want {
		t.Errorf("sinm/keys.csv = %q, %v; want %q", keys, err, want)
	}
	listed := false
	for _, o := range m.Outputs {
		listed = listed || (o.Path == "sinm/keys.csv" && o.SHA256 == sha256Hex(keys) && o.Rows == 2)
	}
	if !listed {
		t.Errorf("run.json outputs do not list sinm/keys.csv with its hash: %+v", m.Outputs)
	}
	for _, f := range []string{"run.json", "indicators.parquet", "cells.parquet", "seasons.parquet"} {
		if b, _ := os.ReadFile(filepath.Join(out, f)); strings.Contains(string(b), "secret") {
			t.Errorf("%s holds a key", f)
		}
	}
	payloads := 0
	for _, o := range m.Outputs {
		if o.FieldID == "" {
			continue
		}
		payloads++
		var p map[string]any
		b, _ := os.ReadFile(filepath.Join(out, o.Path))
		if json.Unmarshal(b, &p) != nil || p["cnpjEmpresaSensoriamento"] != "11444777000161" {
			t.Errorf("%s: cnpjEmpresaSensoriamento %v, want the configured CNPJ's digits", o.Path, p["cnpjEmpresaSensoriamento"])
		}
	}
	if payloads != sum.Payloads || payloads == 0 {
		t.Errorf("%d payloads listed, summary says %d", payloads, sum.Payloads)
	}

	cfg.UndeclaredPracticesAsZero = true
	if _, err := Run(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(out, sinm.PayloadName("SYN-002")))
	if err != nil || !strings.Contains(string(b), `"plantioContorno":0,"terraceamento":0,`) {
		t.Errorf("SYN-002 with UndeclaredPracticesAsZero: %v, payload %.200s", err, b)
	}
}
