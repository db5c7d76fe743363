package pipeline

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/manejo/manejo/classify"
	"github.com/manejo/manejo/coverage"
	"github.com/manejo/manejo/export"
)

// TestReadCropsHistory: the crop history of --crops (the table of manejo
// classify --crops) reaches coverage by talhão; a talhão with a bad row
// declares nothing, and it and ids that are no talhão of the run are
// warnings in run.json; a table without its columns fails the run.
func TestReadCropsHistory(t *testing.T) {
	write := fileWriter(t)
	newRun := func(src string) (*run, *inputs) { return inputRun(Config{Crops: src}) }
	known := []string{"T01", "T02"}
	src := write("crops.csv", "field_id;agri_year;crop;species;family;purpose;start;end\n"+
		"T01;2024/2025;soja;Glycine max;Fabaceae;grain;2024-10-05;2025-02-10\n"+
		"T01;2024/2025;milho;Zea mays;Poaceae;grain;2025-02-15;2025-07-01\n"+
		"T02;2024/2025;milheto;Pennisetum glaucum;Poaceae;cover;2025-03-01;2025-02-01\n"+
		"T09;2024/2025;soja;Glycine max;Fabaceae;grain;2024-10-05;2025-02-10\n")
	r, in := newRun(src)
	if err := r.readCrops(in, known, r.startCrops(context.Background())); err != nil {
		t.Fatal(err)
	}
	if h := in.history["T01"]; len(h) != 2 || h[1].Crop != "milho" || h[1].End.Format(time.DateOnly) != "2025-07-01" || h[1].Purpose != "grain" {
		t.Errorf("T01 history %+v", h)
	}
	if _, ok := in.history["T02"]; ok {
		t.Errorf("T02, with a bad row, declares %+v; want nothing", in.history["T02"])
	}
	w := strings.Join(r.m.Warnings, "\n")
	if !strings.Contains(w, `talhão "T02" declares no residue`) || !strings.Contains(w, "line 4") || !strings.Contains(w, `talhão "T09" is not among the talhões`) {
		t.Errorf("warnings %q: want T02's bad line 4 and the unknown T09", w)
	}
	if in.finger[src] == "" || r.m.Parameters["crops"] != src {
		t.Errorf("the crop history is not recorded as an input of the run: finger %v, parameters %v", in.finger, r.m.Parameters["crops"])
	}

	r, in = newRun(write("bad.csv", "field_id,crop\nT01,soja\n"))
	if err := r.readCrops(in, known, r.startCrops(context.Background())); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "agri_year") {
		t.Errorf("table without its columns: err = %v, want ErrConfig naming the missing column", err)
	}
}

// TestAnalyseCrops: manejo analyse --crops reads each season's straw with
// the declared residue and says so in seasons.parquet (straw_prior); the
// crop history is an input of run.json. The reference run, without it,
// leaves straw_prior null.
func TestAnalyseCrops(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run skipped in -short mode")
	}
	t.Parallel()
	dir := archive(t)
	runOut, _ := reference(t)
	base := baseConfig(t, dir, runOut)
	fields, _, err := ReadFields(context.Background(), base.Fields, "id")
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	table := filepath.Join(tmp, "observations.csv")
	exportTable(t, os.DirFS(runOut), fields, table)
	// Every talhão: safrinha maize harvested ten days before each
	// assessed agricultural year starts.
	var b strings.Builder
	b.WriteString(strings.Join(classify.CropsColumns, ",") + "\n")
	for _, f := range fields {
		for _, s := range base.Season.Assessed() {
			end := s.Start.AddDate(0, 0, -10)
			fmt.Fprintf(&b, "%s,%s,milho,Zea mays,Poaceae,grain,%s,%s\n", f.ID, s.Label, end.AddDate(0, -4, 0).Format(time.DateOnly), end.Format(time.DateOnly))
		}
	}
	crops := filepath.Join(tmp, "crops.csv")
	if err := os.WriteFile(crops, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	if _, err := AnalyseTable(context.Background(), TableConfig{Observations: table, Sowing: base.Sowing, Crops: crops, Out: out,
		Season: base.Season, AsOf: base.AsOf, Codes: base.Codes, Version: base.Version, Workers: 2}); err != nil {
		t.Fatal(err)
	}
	rows, err := export.ReadDataset[export.SeasonRow](os.DirFS(out))
	if err != nil {
		t.Fatal(err)
	}
	read := 0
	for _, r := range rows {
		if r.CoverPct == nil {
			continue
		}
		read++
		if r.StrawPrior == nil || !strings.Contains(*r.StrawPrior, "declared residue milho") || !strings.Contains(*r.StrawPrior, "prior straw NDTI") {
			t.Errorf("%s %s: straw_prior %v, want the declared maize residue", r.FieldID, r.Season, r.StrawPrior)
		}
	}
	if read == 0 {
		t.Fatal("no season read")
	}
	before, err := export.ReadDataset[export.SeasonRow](os.DirFS(runOut))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range before {
		if r.StrawPrior != nil {
			t.Errorf("run without --crops: %s %s straw_prior %q, want null", r.FieldID, r.Season, *r.StrawPrior)
		}
	}
	mf, err := os.Open(filepath.Join(out, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer mf.Close()
	m, err := export.ReadManifest(mf)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(m.Inputs, func(in export.Input) bool { return in.Role == "crops" && in.Path == crops && in.SHA256 != "" }) {
		t.Errorf("run.json inputs %+v: want the crop history", m.Inputs)
	}
}

// fileWriter returns a function that writes a file of a fresh temporary
// folder and returns its path.
func fileWriter(t *testing.T) func(name, s string) string {
	dir := t.TempDir()
	return func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
}

// inputRun is a run of cfg (season 2026/2027) with a fresh manifest and
// empty inputs, for the readers of the declared files.
func inputRun(cfg Config) (*run, *inputs) {
	cfg.Season, _ = coverage.ParseSeason("2026/2027", coverage.MonthDay{})
	return &run{cfg: cfg, m: newManifest(cfg, time.Now(), "test")}, &inputs{finger: map[string]string{}}
}
