package main

import (
	"context"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/manejo/manejo/export"
	"github.com/manejo/manejo/pipeline"
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
	f := runFlags{contractFlags: contractFlags{tp: tillage.DefaultParams()}}
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
		if code != exitUsage || !strings.Contains(stderr, "--cnpj-empresa-sensoriamento (or $MANEJO_CNPJ_EMPRESA_SENSORIAMENTO) is not a valid CNPJ") {
			t.Errorf("%q: exit %d, stderr %q; want %d, not a valid CNPJ", bad, code, stderr, exitUsage)
		}
		if strings.Contains(stdout+stderr, bad) || strings.Contains(stdout+stderr, "1122233300018") {
			t.Errorf("%q: the output repeats the value: %q", bad, stdout+stderr)
		}
	}

	// The environment gives the default (issue 18: configuration, set once
	// per operator); the flag wins over it; a bad one is a usage error too.
	t.Setenv(operatorCNPJEnv, "11.444.777/0001-61")
	for _, tc := range []struct {
		args []string
		want string
	}{{nil, "11.444.777/0001-61"}, {[]string{"--cnpj-empresa-sensoriamento", "11.222.333/0001-81"}, "11.222.333/0001-81"}} {
		fs := flag.NewFlagSet("run", flag.ContinueOnError)
		f := runFlags{contractFlags: contractFlags{tp: tillage.DefaultParams()}}
		f.define(fs)
		if err := fs.Parse(append(base, tc.args...)); err != nil {
			t.Fatal(err)
		}
		if cfg, err := f.config(context.Background()); err != nil || cfg.OperatorCNPJ != tc.want {
			t.Errorf("env and %v: OperatorCNPJ %q, %v; want %q", tc.args, cfg.OperatorCNPJ, err, tc.want)
		}
	}
	t.Setenv(operatorCNPJEnv, "11.444.777/0001-62")
	if code, stdout, stderr := runCLI(t, append([]string{"run"}, base...)...); code != exitUsage || strings.Contains(stdout+stderr, "0001-62") {
		t.Errorf("bad $%s: exit %d, %q", operatorCNPJEnv, code, stderr)
	}
}

// TestRunOutcome reproduces issue 19 defect 8's exit: a run where no
// talhão gets a payload (every one partial, e.g. no slope) used to exit 0
// with nothing on stderr. It now exits 3, and stderr names the first
// failures and points to inspect.
func TestRunOutcome(t *testing.T) {
	var stderr strings.Builder
	sum := pipeline.Summary{Total: 2, Partial: 2, Failures: []export.Failure{
		{FieldID: "T-1", Status: export.StatusPartial, Reason: "slope: DEM does not cover the talhão"},
		{FieldID: "T-\x1b[2J", Status: export.StatusPartial, Reason: "slope: DEM does not cover the talhão"}}}
	err := runOutcome(sum, "OUT", &stderr)
	if !errors.Is(err, errPartial) || !strings.Contains(err.Error(), "no talhão got a SINM payload") {
		t.Errorf("no payload: %v, want errPartial (exit 3)", err)
	}
	for _, want := range []string{"T-1 (partial): slope: DEM does not cover the talhão", `"T-\x1b[2J"`, "manejo inspect OUT --status partial"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr %q lacks %q", stderr.String(), want)
		}
	}
	// Issue 28 point 5: one vocabulary; a run of partial talhões does
	// not say "failed", and points to the statuses it has.
	if msg := err.Error() + stderr.String(); strings.Contains(msg, "failures") || strings.Contains(msg, "talhões failed") || strings.Contains(msg, "--status failed") ||
		!strings.Contains(err.Error(), "2 talhões: 0 ok, 2 partial, 0 failed, 0 incomplete") {
		t.Errorf("all partial: error %q, stderr %q; want the four counts and no failure", err, stderr.String())
	}
	stderr.Reset()
	if err := runOutcome(pipeline.Summary{Total: 1, OK: 1, Payloads: 1}, "OUT", &stderr); err != nil || stderr.Len() > 0 {
		t.Errorf("a clean run: %v, stderr %q", err, stderr.String())
	}
}

// TestRunRefusesForeignFolder reproduces issue 19 defect 7: a non-empty
// --out that is not a manejo output is a usage error (exit 2), and its
// files are left alone.
func TestRunRefusesForeignFolder(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	_ = os.MkdirAll(filepath.Join(out, "sub"), 0o755)
	_ = os.WriteFile(filepath.Join(out, "indicators.parquet"), []byte("mine"), 0o644)
	_ = os.WriteFile(filepath.Join(out, "sub", ".x.tmp-1"), []byte("mine"), 0o644)
	code, _, stderr := runCLI(t, "run", "--fields", filepath.Join(dir, "none.geojson"), "--catalog", filepath.Join(dir, "none.json"),
		"--out", out, "--season", "2026/2027", "--satellite-codes", "sentinel-2-l2a=S01")
	if code != exitUsage || !strings.Contains(stderr, "not a manejo output") {
		t.Errorf("exit %d, stderr %q; want %d, not a manejo output", code, stderr, exitUsage)
	}
	for _, f := range []string{"indicators.parquet", "sub/.x.tmp-1"} {
		if b, err := os.ReadFile(filepath.Join(out, f)); err != nil || string(b) != "mine" {
			t.Errorf("%s: %q, %v; want it untouched", f, b, err)
		}
	}
}

// TestRunOutcomeExitCodes: a run that finished with incomplete talhões
// (a transient fault outlasted the retry budget) exits 4, the code an
// engine retries, even when others failed; failed talhões alone, or no
// payload, exit 3 (a retry cannot help); a clean run 0.
func TestRunOutcomeExitCodes(t *testing.T) {
	for _, tc := range []struct {
		name string
		sum  pipeline.Summary
		code int
		msg  string
	}{
		{"clean", pipeline.Summary{Total: 2, OK: 2, Payloads: 2}, exitOK, ""},
		{"incomplete", pipeline.Summary{Total: 3, OK: 2, Incomplete: 1, Payloads: 2}, exitIncomplete, "1 of 3 talhões incomplete"},
		{"incomplete and failed", pipeline.Summary{Total: 3, OK: 1, Failed: 1, Incomplete: 1, Payloads: 1}, exitIncomplete, "1 ok, 0 partial, 1 failed, 1 incomplete"},
		{"all incomplete", pipeline.Summary{Total: 2, Incomplete: 2}, exitIncomplete, "2 of 2 talhões incomplete"},
		{"failed", pipeline.Summary{Total: 3, OK: 2, Failed: 1, Payloads: 2}, exitPartial, "1 of 3 talhões failed"},
		{"no payload", pipeline.Summary{Total: 1, Partial: 1}, exitPartial, "no talhão got a SINM payload"},
	} {
		var stderr strings.Builder
		err := runOutcome(tc.sum, "OUT", &stderr)
		var exit strings.Builder
		if code := exitCode(err, &exit, "run"); code != tc.code || !strings.Contains(exit.String(), tc.msg) {
			t.Errorf("%s: exit %d, %q; want %d, %q", tc.name, code, exit.String(), tc.code, tc.msg)
		}
		if tc.code == exitIncomplete && !strings.Contains(exit.String(), "exit 4, run again later") {
			t.Errorf("%s: %q does not say to run again", tc.name, exit.String())
		}
	}
}

// TestInspectEarlyFailures: inspect --status failed lists the talhões
// run.json records as failed that have no indicator row, --status
// incomplete the incomplete ones (issue 28 point 5), and the counts hold
// every status.
func TestInspectEarlyFailures(t *testing.T) {
	rows := []export.IndicatorRow{{FieldID: "A", Status: export.StatusPartial}}
	early := rowless(rows, []export.Manifest{{Failures: []export.Failure{
		{FieldID: "A", Status: export.StatusPartial, Reason: "x"}, {FieldID: "B", Stage: "grid", Status: export.StatusFailed, Reason: "self-intersection"},
		{FieldID: "C", Stage: "series", Status: export.StatusIncomplete, Reason: "2 scenes still failing"}}}})
	for status, want := range map[string][]string{
		export.StatusFailed:     {"B (grid): self-intersection", "3 talhões: 0 ok, 1 partial, 1 failed, 1 incomplete"},
		export.StatusIncomplete: {"Incomplete: ", "C (series): 2 scenes still failing", "3 talhões: 0 ok, 1 partial, 1 failed, 1 incomplete"},
		export.StatusOK:         {"no talhão is ok"},
	} {
		var b strings.Builder
		if err := printIndicators(&b, rows, early, status, true); err != nil {
			t.Fatal(err)
		}
		for _, w := range want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("--status %s: output lacks %q:\n%s", status, w, b.String())
			}
		}
		if strings.Contains(b.String(), "A (") || strings.Contains(b.String(), "TALHÃO") {
			t.Errorf("--status %s: the partial talhão A is shown:\n%s", status, b.String())
		}
	}
}
