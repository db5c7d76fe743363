package pipeline

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/manejo/manejo/coverage"
)

// TestReadCropsHistory: the crop history of --crops (the table of manejo
// classify --crops) reaches coverage by talhão; a talhão with a bad row
// declares nothing, and it and ids that are no talhão of the run are
// warnings in run.json; a table without its columns fails the run.
func TestReadCropsHistory(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	season, _ := coverage.ParseSeason("2026/2027", coverage.MonthDay{})
	newRun := func(src string) (*run, *inputs) {
		cfg := Config{Crops: src, Season: season}
		return &run{cfg: cfg, m: newManifest(cfg, time.Now(), "test")}, &inputs{finger: map[string]string{}}
	}
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
