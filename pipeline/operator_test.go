package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/manejo/manejo/internal/testkit"
)

// TestOperatorCNPJ: Config.OperatorCNPJ reaches every payload as
// cnpjEmpresaSensoriamento (normalised to 14 digits) and changes nothing
// else; the same run without it is the reference run, whose payloads have
// no such property. An invalid CNPJ stops Run before any work, and neither
// the error nor the progress lines repeat the value.
func TestOperatorCNPJ(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run skipped in -short mode")
	}
	t.Parallel()
	const cnpj, digits = "11.222.333/0001-81", "11222333000181"
	ctx := context.Background()
	dir := archive(t)
	ref, _ := reference(t)

	out := t.TempDir()
	cfg := baseConfig(t, dir, out)
	cfg.OperatorCNPJ = cnpj
	var log bytes.Buffer
	cfg.Progress = &log
	if _, err := Run(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	if s := log.String(); strings.Contains(s, digits) || strings.Contains(s, cnpj) {
		t.Errorf("the progress lines repeat the operator CNPJ:\n%s", s)
	}
	want, got := testkit.HashTree(t, ref, "run.json", "run/"), testkit.HashTree(t, out, "run.json", "run/")
	if w, g := slices.Sorted(maps.Keys(want)), slices.Sorted(maps.Keys(got)); !slices.Equal(w, g) {
		t.Fatalf("files differ: reference %v, with the CNPJ %v", w, g)
	}
	payloads := 0
	for name := range want {
		if !strings.HasPrefix(name, "sinm/") {
			if got[name] != want[name] {
				t.Errorf("%s differs from the reference run: only payloads may", name)
			}
			continue
		}
		payloads++
		a, b := readJSON(t, filepath.Join(ref, name)), readJSON(t, filepath.Join(out, name))
		if _, ok := a["cnpjEmpresaSensoriamento"]; ok {
			t.Errorf("%s of the reference run has cnpjEmpresaSensoriamento", name)
		}
		if b["cnpjEmpresaSensoriamento"] != digits {
			t.Errorf("%s: cnpjEmpresaSensoriamento = %v, want %s", name, b["cnpjEmpresaSensoriamento"], digits)
		}
		delete(b, "cnpjEmpresaSensoriamento")
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%s: besides cnpjEmpresaSensoriamento, the payload differs from the reference run's", name)
		}
	}
	if payloads != 6 {
		t.Errorf("%d payloads, want 6", payloads)
	}
	// The CNPJ shapes the payloads, so a rerun with another one (or none)
	// must not resume from these batches.
	m, err := readManifest(ctx, filepath.Join(out, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	mr, err := readManifest(ctx, filepath.Join(ref, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	if m.ParamsHash == mr.ParamsHash {
		t.Error("the operator CNPJ does not change the parameters hash")
	}

	bad := baseConfig(t, dir, t.TempDir())
	bad.OperatorCNPJ = "11.222.333/0001-82" // wrong check digit
	_, err = Run(ctx, bad)
	if !errors.Is(err, ErrOperatorCNPJ) {
		t.Fatalf("Run with an invalid CNPJ = %v, want ErrOperatorCNPJ", err)
	}
	if strings.Contains(err.Error(), "11.222") || strings.Contains(err.Error(), "11222") {
		t.Errorf("the error repeats the CNPJ: %v", err)
	}
	if entries, _ := os.ReadDir(bad.Out); len(entries) > 0 {
		t.Errorf("a run with an invalid CNPJ wrote %d entries", len(entries))
	}
}

func readJSON(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return m
}
