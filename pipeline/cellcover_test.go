package pipeline

import (
	"math"
	"os"
	"testing"

	"github.com/manejo/manejo/export"
)

// TestCellCoverMatchesSeasons checks that cell_cover holds the readings the
// talhão's C was averaged from: for every season with a sowing date, one row
// per cell, the mean of the non-null cover_pct is seasons.cover_pct and the
// counts add up to seasons.n_cells and n_obs.
func TestCellCoverMatchesSeasons(t *testing.T) {
	out, _ := reference(t)
	fsys := os.DirFS(out)
	seasons, err := export.ReadDataset[export.SeasonRow](fsys)
	if err != nil {
		t.Fatal(err)
	}
	covers, err := export.ReadDataset[export.CellCoverRow](fsys)
	if err != nil {
		t.Fatal(err)
	}
	cells, err := export.ReadDataset[export.CellRow](fsys)
	if err != nil {
		t.Fatal(err)
	}
	nCells := map[string]int{}
	for _, c := range cells {
		nCells[c.FieldID]++
	}
	type key struct{ field, season string }
	type acc struct {
		rows, withCover, obs int
		sum                  float64
	}
	got := map[key]*acc{}
	for _, c := range covers {
		k := key{c.FieldID, c.Season}
		if got[k] == nil {
			got[k] = &acc{}
		}
		a := got[k]
		a.rows++
		a.obs += int(c.NObs)
		if c.CoverPct != nil {
			a.withCover++
			a.sum += *c.CoverPct
		}
	}
	checked := 0
	for _, s := range seasons {
		a := got[key{s.FieldID, s.Season}]
		if s.SowingDate == nil {
			if a != nil {
				t.Errorf("%s %s: %d cell_cover rows for a season without sowing", s.FieldID, s.Season, a.rows)
			}
			continue
		}
		if a == nil {
			t.Errorf("%s %s: no cell_cover rows", s.FieldID, s.Season)
			continue
		}
		if a.rows != nCells[s.FieldID] || a.withCover != int(s.NCells) || a.obs != int(s.NObs) {
			t.Errorf("%s %s: %d rows (%d cells), %d with cover (n_cells %d), %d obs (n_obs %d)",
				s.FieldID, s.Season, a.rows, nCells[s.FieldID], a.withCover, s.NCells, a.obs, s.NObs)
		}
		if s.CoverPct != nil {
			if mean := a.sum / float64(a.withCover); math.Abs(mean-*s.CoverPct) > 1e-9 {
				t.Errorf("%s %s: mean cell cover %v, season cover %v", s.FieldID, s.Season, mean, *s.CoverPct)
			}
			checked++
		}
	}
	if checked == 0 {
		t.Fatal("no season with a cover to check")
	}
	t.Logf("%d seasons checked against %d cell_cover rows", checked, len(covers))
}
