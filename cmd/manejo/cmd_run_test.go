package main

import (
	"context"
	"flag"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/manejo/manejo/tillage"
)

// TestRunOperatorCNPJ: --cnpj-empresa-sensoriamento reaches the run's
// configuration (the pipeline normalises it and writes it into every
// payload, see pipeline.TestOperatorCNPJ); an invalid one is a usage error
// that does not repeat the value, before any input is read.
func TestRunOperatorCNPJ(t *testing.T) {
	dir := t.TempDir()
	base := []string{"--fields", filepath.Join(dir, "none.geojson"), "--catalog", filepath.Join(dir, "none.json"),
		"--out", filepath.Join(dir, "out"), "--season", "2026/2027", "--satellite-codes", "sentinel-2-l2a=S01"}

	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f := runFlags{tp: tillage.DefaultParams()}
	f.define(fs)
	if err := fs.Parse(append(base, "--cnpj-empresa-sensoriamento", "11.222.333/0001-81")); err != nil {
		t.Fatal(err)
	}
	cfg, err := f.config(context.Background())
	if err != nil || cfg.OperatorCNPJ != "11.222.333/0001-81" {
		t.Errorf("config: OperatorCNPJ %q, err %v", cfg.OperatorCNPJ, err)
	}

	for _, bad := range []string{"11.222.333/0001-82", "1122233300018", "abc"} {
		code, stdout, stderr := runCLI(t, append([]string{"run"}, append(base, "--cnpj-empresa-sensoriamento", bad)...)...)
		if code != exitUsage || !strings.Contains(stderr, "--cnpj-empresa-sensoriamento is not a valid CNPJ") {
			t.Errorf("%q: exit %d, stderr %q; want %d, not a valid CNPJ", bad, code, stderr, exitUsage)
		}
		if strings.Contains(stdout+stderr, bad) || strings.Contains(stdout+stderr, "1122233300018") {
			t.Errorf("%q: the output repeats the value: %q", bad, stdout+stderr)
		}
	}
}
