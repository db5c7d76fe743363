package pipeline

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/manejo/manejo/export"
	"github.com/manejo/manejo/sim/synth"
	"github.com/manejo/manejo/zarc"
)

// TestRunAgainstTruth checks the numbers of the whole pipeline against the
// synthetic archive's ground truth (truth.json) on three seeds at the real
// Sentinel-2 revisit (5 days): area, slope and the contour rule, each
// talhão event against the true tillage dates (none for a headland-only
// revolving, IN 2.3 III), T, and C with their Tabela 1 levels. The archives
// have clouds, unflagged residue and mixed pixels, so the tolerances are
// those of a real reading, not of the algorithms on clean inputs.
func TestRunAgainstTruth(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run skipped in -short mode")
	}
	t.Parallel()
	var (
		mu    sync.Mutex
		total matchCount
	)
	// The three archives are independent: built and run side by side, the
	// group returning once all three have.
	t.Run("seeds", func(t *testing.T) {
		for _, seed := range []int64{1, 2, 3} {
			t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
				t.Parallel()
				m := checkAgainstTruth(t, seed)
				mu.Lock()
				defer mu.Unlock()
				total.add(m)
			})
		}
	})
	// Tillage events over the three archives: an event matches a true
	// operation when the operation lies in the event's dating interval
	// (last clear date before the break, first clear date after it], give
	// or take one revisit. Targets of issue 3: precision and recall ≥ 0.90.
	precision := float64(total.tp) / float64(total.tp+total.fp)
	recall := float64(total.tp) / float64(total.tp+total.fn)
	t.Logf("talhão events over 3 archives: TP %d, FP %d, FN %d: precision %.2f, recall %.2f", total.tp, total.fp, total.fn, precision, recall)
	if precision < 0.9 || recall < 0.9 {
		t.Errorf("events precision %.2f, recall %.2f; want both ≥ 0.90", precision, recall)
	}
}

type matchCount struct{ tp, fp, fn int }

func (m *matchCount) add(o matchCount) { m.tp, m.fp, m.fn = m.tp+o.tp, m.fp+o.fp, m.fn+o.fn }

func checkAgainstTruth(t *testing.T, seed int64) (events matchCount) {
	dir := t.TempDir()
	truth, err := synth.Generate(context.Background(), synth.Options{Out: dir, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	if _, err := Run(context.Background(), baseConfig(t, dir, out)); err != nil {
		t.Fatal(err)
	}
	inds, err := export.ReadDataset[export.IndicatorRow](os.DirFS(out))
	if err != nil {
		t.Fatal(err)
	}
	evRows, err := export.ReadDataset[export.EventRow](os.DirFS(out))
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]export.IndicatorRow{}
	for _, r := range inds {
		byID[r.FieldID] = r
	}
	var table strings.Builder
	fmt.Fprintf(&table, "%-8s %-22s %-22s %-16s %-14s\n", "talhão", "T truth/run (level)", "C truth/run (level)", "slope truth/run", "events")
	tLevels, cLevels := 0, 0
	for _, f := range truth.Fields {
		r, ok := byID[f.ID]
		if !ok {
			t.Errorf("%s: no indicator row", f.ID)
			continue
		}
		if d := math.Abs(r.AreaHa-f.AreaHa) / f.AreaHa; d > 0.005 {
			t.Errorf("%s: area %.2f ha, truth %.2f ha (%.2f %% off)", f.ID, r.AreaHa, f.AreaHa, 100*d)
		}
		if r.SlopeMeanPct == nil || math.Abs(*r.SlopeMeanPct-f.Slope.MeanPct) > 0.3 || *r.ContourRequired != f.Slope.ContourRequired {
			t.Errorf("%s: slope %v (contour %v), truth %.2f %% (contour %v)", f.ID, deref(r.SlopeMeanPct), deref(r.ContourRequired), f.Slope.MeanPct, f.Slope.ContourRequired)
		}
		// Events against the true operations; a headland strip alone
		// makes none (IN 2.3 III).
		var got []string
		matched := map[int]bool{}
		for i, e := range evRows {
			if e.FieldID != f.ID {
				continue
			}
			got = append(got, e.Date.String())
			hit := false
			for _, tl := range f.Tillage {
				d := zarc.DateOf(tl.Date.Time)
				if d >= e.Before-5 && d <= e.After+5 {
					hit = true
				}
			}
			if hit {
				matched[i] = true
			} else {
				events.fp++
				t.Logf("%s: event %s (interval %s..%s) matches no true operation %v", f.ID, e.Date, e.Before, e.After, f.Tillage)
			}
		}
		for _, tl := range f.Tillage {
			d := zarc.DateOf(tl.Date.Time)
			found := false
			for i, e := range evRows {
				if matched[i] && e.FieldID == f.ID && d >= e.Before-5 && d <= e.After+5 {
					found = true
				}
			}
			if found {
				events.tp++
			} else {
				events.fn++
				t.Logf("%s: %s of %s not found; events %v", f.ID, tl.Kind, tl.Date.Time.Format("2006-01-02"), got)
			}
		}
		if len(f.Tillage) == 0 && len(got) > 0 {
			t.Errorf("%s: events %v, truth has none (headland-only operations: %d)", f.ID, got, len(f.Headland))
		}
		// T.
		switch {
		case f.T.Censored != r.TCensored:
			t.Errorf("%s: T censored %v, truth %v", f.ID, r.TCensored, f.T.Censored)
		case f.T.Years != nil && (r.TYears == nil || int(*r.TYears) != *f.T.Years):
			t.Errorf("%s: T = %v years, truth %d", f.ID, deref(r.TYears), *f.T.Years)
		}
		if lv(r.TLevel) == intOr0(f.T.Level) {
			tLevels++
		}
		// C: within 15 percentage points; the level must agree.
		if f.C.Value != nil {
			if r.CPct == nil || math.Abs(*r.CPct-*f.C.Value) > 15 {
				t.Errorf("%s: C = %v %%, truth %.1f %%", f.ID, deref(r.CPct), *f.C.Value)
			}
		}
		if lv(r.CLevel) == intOr0(f.C.Level) {
			cLevels++
		}
		fmt.Fprintf(&table, "%-8s %-22s %-22s %-16s %v\n", f.ID,
			fmt.Sprintf("%s/%s (%d/%d)", yearsText(f.T.Years, f.T.Censored), yearsText(intPtr(r.TYears), r.TCensored), intOr0(f.T.Level), lv(r.TLevel)),
			fmt.Sprintf("%.1f/%.1f (%d/%d)", deref(f.C.Value), deref(r.CPct), intOr0(f.C.Level), lv(r.CLevel)),
			fmt.Sprintf("%.2f/%.2f", f.Slope.MeanPct, deref(r.SlopeMeanPct)), got)
	}
	t.Logf("pipeline against truth (seed %d, %d-day revisit):\n%s", truth.Seed, truth.RevisitDays, table.String())
	if n := len(truth.Fields); tLevels != n || cLevels != n {
		t.Errorf("Tabela 1 levels agree with the truth on %d/%d talhões for T and %d/%d for C, want all", tLevels, n, cLevels, n)
	}
	return events
}

func deref[T any](p *T) any {
	if p == nil {
		return "null"
	}
	return *p
}

func lv(p *int32) int {
	if p == nil {
		return 0
	}
	return int(*p)
}

func intOr0(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}

func intPtr(p *float64) *int {
	if p == nil {
		return nil
	}
	v := int(*p)
	return &v
}

func yearsText(y *int, censored bool) string {
	switch {
	case censored:
		return "cens"
	case y == nil:
		return "–"
	}
	return fmt.Sprint(*y)
}
