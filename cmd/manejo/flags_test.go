package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestFlagValues reproduces defect 12 of issue 19: --straw-ndti NaN,
// --bare-ndti Inf, --cell-ha NaN, --edge-buffer-m -50, --from after --as-of
// and --id-field cpfProdutor were accepted and a run started with them. Each
// is now a usage error (exit 2) naming the flag, before any input is read
// (the inputs here do not exist).
func TestFlagValues(t *testing.T) {
	dir := t.TempDir()
	fields := filepath.Join(dir, "none.geojson")
	run := []string{"run", "--fields", fields, "--catalog", filepath.Join(dir, "none.json"),
		"--out", filepath.Join(dir, "out"), "--season", "2026/2027", "--satellite-codes", "sentinel-2-l2a=S01,dem=S09"}
	grid := []string{"grid", "--fields", fields, "--out", filepath.Join(dir, "cells.geojson")}
	for _, tc := range []struct {
		base []string
		args []string
		want string
	}{
		{run, []string{"--straw-ndti", "NaN"}, "--straw-ndti NaN: want a finite number"},
		{run, []string{"--bare-ndti", "Inf"}, "--bare-ndti +Inf: want a finite number"},
		{run, []string{"--straw-max-ndvi", "-Inf"}, "--straw-max-ndvi -Inf"},
		{run, []string{"--bare-ndti", "0.3", "--straw-ndti", "0.2"}, "StrawNDTI 0.2 must exceed BareNDTI 0.3"},
		{run, []string{"--cell-ha", "NaN"}, "--cell-ha NaN"},
		{run, []string{"--cell-ha", "Inf"}, "--cell-ha +Inf"},
		{run, []string{"--edge-buffer-m", "-50"}, "--edge-buffer-m -50: want a finite distance ≥ 0"},
		{run, []string{"--edge-buffer-m", "Inf"}, "--edge-buffer-m +Inf"},
		{run, []string{"--from", "2026-07-01", "--as-of", "2026-06-30"}, "--from 2026-07-01 is after --as-of 2026-06-30"},
		{run, []string{"--from", "2026-08-01"}, "--from 2026-08-01 is after --as-of 2026-06-30"},
		{run, []string{"--id-field", "cpfProdutor"}, `--id-field: grid: talhão id is a CPF/CNPJ: id field "cpfProdutor"`},
		{run, []string{"--max-cell-scenes", "-5"}, "--max-cell-scenes -5: want a positive budget"},
		{grid, []string{"--cell-ha", "NaN"}, "--cell-ha NaN"},
		{grid, []string{"--edge-buffer-m", "Inf"}, "--edge-buffer-m +Inf"},
		{grid, []string{"--id-field", "CNPJ_fazenda"}, "personal data"},
		{[]string{"slope", "--fields", fields, "--dem", "x.tif"}, []string{"--id-field", "cpf"}, "--id-field"},
		{[]string{"series", "--fields", fields, "--catalog", "c.json", "--out", "o.parquet"}, []string{"--id-field", "cpfProdutor"}, "--id-field"},
	} {
		args := append(append([]string{}, tc.base...), tc.args...)
		code, _, stderr := runCLI(t, args...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%s %v: exit %d, stderr %q; want %d and %q", tc.base[0], tc.args, code, stderr, exitUsage, tc.want)
		}
	}
}

// TestRequiredFlagsInOrder: run names the first missing required flag in a
// fixed order, --fields, --catalog, --out, --season, then the satellite
// codes (the check used to iterate a map, so the flag named was random).
func TestRequiredFlagsInOrder(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	given := []string{"--fields", filepath.Join(dir, "none.geojson"), "--catalog", filepath.Join(dir, "none.json"),
		"--out", filepath.Join(dir, "out"), "--season", "2026/2027"}
	wants := []string{"--fields is required", "--catalog is required", "--out is required", "--season is required", "satellite codes are required"}
	for i, want := range wants {
		args := append([]string{"run"}, given[:2*i]...)
		for range 10 {
			code, _, stderr := runCLI(t, args...)
			if code != exitUsage || !strings.Contains(stderr, want) {
				t.Fatalf("%v: exit %d, stderr %q; want %d and %q", args, code, stderr, exitUsage, want)
			}
		}
	}
}
