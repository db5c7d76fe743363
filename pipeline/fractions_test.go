package pipeline

import (
	"io/fs"
	"math"
	"os"
	"sort"
	"testing"

	"github.com/manejo/manejo/coverage"
	"github.com/manejo/manejo/export"
)

// TestObservationReflectancesAndFractions checks the per-reading columns of
// observations.parquet on the reference run (issue 17 item 5): the
// reflectances give back the row's NDVI and NDTI; every clear reading with
// both indices has green, straw and soil fractions summing to 100, equal to
// the unmixing of that reading by the call the analysis makes
// (readingFractions, with the talhão's cells as coverage.Assess gets them);
// masked rows have none. And the fractions mean something: over the
// pre-sowing window of each season, the mean straw fraction of the clear
// readings lies within 15 pp of the season's straw cover (which interpolates
// the same fractions over the window's days).
func TestObservationReflectancesAndFractions(t *testing.T) {
	out, _ := reference(t)
	fsys := os.DirFS(out)
	obs, err := export.ReadDataset[export.ObsRow](fsys)
	if err != nil {
		t.Fatal(err)
	}
	clear, withFr := 0, 0
	type cellKey struct{ field, cell string }
	cells := map[cellKey][]export.ObsRow{}
	for _, r := range obs {
		if r.MaskReason != nil {
			if r.GreenPct != nil || r.StrawPct != nil || r.SoilPct != nil || r.Red != nil || r.SWIR16 != nil {
				t.Fatalf("masked row %s %s %s has reflectances or fractions", r.FieldID, r.CellID, r.Date)
			}
			continue
		}
		if r.NDVI == nil || r.NDTI == nil || r.Red == nil || r.NIR == nil || r.SWIR16 == nil || r.SWIR22 == nil {
			t.Fatalf("clear row %s %s %s lacks an index or a reflectance", r.FieldID, r.CellID, r.Date)
		}
		clear++
		nd := (*r.NIR - *r.Red) / (*r.NIR + *r.Red)
		nt := (*r.SWIR16 - *r.SWIR22) / (*r.SWIR16 + *r.SWIR22)
		if math.Abs(float64(nd-*r.NDVI)) > 1e-5 || math.Abs(float64(nt-*r.NDTI)) > 1e-5 {
			t.Fatalf("%s %s %s: reflectances give NDVI %v NDTI %v, row says %v %v", r.FieldID, r.CellID, r.Date, nd, nt, *r.NDVI, *r.NDTI)
		}
		if r.GreenPct == nil || r.StrawPct == nil || r.SoilPct == nil {
			t.Fatalf("clear row %s %s %s has no fractions", r.FieldID, r.CellID, r.Date)
		}
		withFr++
		if s := *r.GreenPct + *r.StrawPct + *r.SoilPct; math.Abs(float64(s)-100) > 0.01 {
			t.Fatalf("%s %s %s: fractions sum to %v", r.FieldID, r.CellID, r.Date, s)
		}
		k := cellKey{r.FieldID, r.CellID}
		cells[k] = append(cells[k], r)
	}
	if clear < 1000 {
		t.Fatalf("only %d clear rows", clear)
	}
	// The same call on the talhão's cells gives the same fractions.
	byField := map[string][]cellKey{}
	for k := range cells {
		byField[k.field] = append(byField[k.field], k)
	}
	for field, keys := range byField {
		sort.Slice(keys, func(i, j int) bool { return keys[i].cell < keys[j].cell })
		cc := make([][]coverage.Obs, len(keys))
		for i, k := range keys {
			for _, r := range cells[k] {
				cc[i] = append(cc[i], coverage.Obs{Date: r.Date.Time(), NDVI: float64(*r.NDVI), NDTI: float64(*r.NDTI),
					Red: float64(*r.Red), NIR: float64(*r.NIR), SWIR1: float64(*r.SWIR16), SWIR2: float64(*r.SWIR22)})
			}
		}
		fr := readingFractions(cc, coverage.Params{})
		for i, k := range keys {
			for j, r := range cells[k] {
				for c, got := range []*float32{r.GreenPct, r.StrawPct, r.SoilPct} {
					if want := 100 * fr[i][j][c]; math.Abs(float64(*got)-want) > 1e-3 {
						t.Fatalf("%s %s %s fraction %d: row %v, unmixing %v", field, k.cell, r.Date, c, *got, want)
					}
				}
			}
		}
	}
	checkWindowStraw(t, fsys, obs)
	t.Logf("%d clear rows, all with fractions (%d)", clear, withFr)
}

// checkWindowStraw compares, per season with a cover, the mean straw_pct of
// the window's clear readings with seasons.cover_pct.
func checkWindowStraw(t *testing.T, fsys fs.FS, obs []export.ObsRow) {
	seasons, err := export.ReadDataset[export.SeasonRow](fsys)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, s := range seasons {
		if s.CoverPct == nil {
			continue
		}
		sum, k := 0.0, 0
		for _, r := range obs {
			if r.FieldID == s.FieldID && r.StrawPct != nil && r.Date >= *s.WindowStart && r.Date <= *s.WindowEnd && *r.NDVI < 0.5 {
				sum += float64(*r.StrawPct)
				k++
			}
		}
		if k == 0 {
			continue
		}
		n++
		mean := sum / float64(k)
		t.Logf("%s %s: window mean straw_pct %.1f over %d readings, cover_pct %.1f", s.FieldID, s.Season, mean, k, *s.CoverPct)
		if math.Abs(mean-*s.CoverPct) > 15 {
			t.Errorf("%s %s: window mean straw_pct %.1f, cover_pct %.1f: more than 15 pp apart", s.FieldID, s.Season, mean, *s.CoverPct)
		}
	}
	if n < 6 {
		t.Errorf("only %d seasons compared", n)
	}
}
