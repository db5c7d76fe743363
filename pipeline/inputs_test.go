package pipeline

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/manejo/manejo/coverage"
	"github.com/manejo/manejo/series"
	"github.com/manejo/manejo/sinm"
)

// TestReadSowingReports: issue 19 defect 11 at the run. A sowing file with
// no usable row fails the run instead of silently falling back to detected
// dates; bad rows and declared ids that are no talhão (or differ in case)
// are warnings in run.json; the pt-BR dialect is read.
func TestReadSowingReports(t *testing.T) {
	write := fileWriter(t)
	newRun := func(src string) (*run, *inputs) { return inputRun(Config{Sowing: src}) }
	known := []string{"T01", "T02"}

	r, in := newRun(write("br.csv", "field_id;season;sowing_date\nT01;2024/2025;14/10/2024\nt02;2024/2025;20/10/2024\nT01;2024/2025;99/99/2024\n"))
	if err := r.readSowing(in, known, r.startSowing(context.Background())); err != nil {
		t.Fatal(err)
	}
	if d := in.declared.For("T01"); d["2024/2025"].Date.Format(time.DateOnly) != "2024-10-14" {
		t.Errorf("T01 declared %v", d)
	}
	w := strings.Join(r.m.Warnings, "\n")
	if !strings.Contains(w, "line 4:") || !strings.Contains(w, `talhão "t02" is not among`) || !strings.Contains(w, `"T02" differs only in case`) {
		t.Errorf("warnings %q: want the bad line 4 and the case mismatch", w)
	}

	r, in = newRun(write("none.csv", "field_id,season,sowing_date\nT01,2024/2025,2024-13-01\n"))
	if err := r.readSowing(in, known, r.startSowing(context.Background())); !errors.Is(err, coverage.ErrNoSowing) {
		t.Errorf("no usable row: err = %v, want ErrNoSowing", err)
	}
}

// TestCheckCodesReadableOnly (issue 28 point 11): a frozen search holding
// a collection no sensor profile reads (sentinel-1-grd) needs no satellite
// code for it — its scenes are skipped as no-profile — while a readable
// collection without a code is still a configuration error.
func TestCheckCodesReadableOnly(t *testing.T) {
	cat, err := series.NewCatalog([]*series.Item{{ID: "a", Collection: "sentinel-2-l2a"}, {ID: "b", Collection: "sentinel-1-grd"}}, "https://x.example/stac", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := checkCodes(Config{Codes: sinm.SatelliteCodes{"sentinel-2-l2a": "S01"}}, cat); err != nil {
		t.Errorf("sentinel-1-grd without a code: %v", err)
	}
	if err := checkCodes(Config{Codes: sinm.SatelliteCodes{"landsat-c2-l2": "S02"}}, cat); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "no code for sentinel-2-l2a (") {
		t.Errorf("sentinel-2-l2a without a code: %v", err)
	}
}
