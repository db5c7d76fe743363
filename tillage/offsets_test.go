package tillage

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/manejo/manejo/internal/num"
)

// offsetsWorld: n talhões of 20 points read on the same 30 dates (every
// 6 days from 1 November) by one sensor, NDTI 0.12 plus an offset shared
// by all of them on each date (σ 0.03) plus point noise (σ 0.01); talhão 0
// drops by 0.05 on the 16th date.
func offsetsWorld(n int, seed uint64) (talhoes [][]Cell, shared []float64, dates []time.Time) {
	rng := rand.New(rand.NewPCG(seed, 1))
	for i := range 30 {
		dates = append(dates, time.Date(2020, 11, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, 6*i))
		shared = append(shared, 0.03*rng.NormFloat64())
	}
	for f := range n {
		cells := make([]Cell, 20)
		for p := range cells {
			cells[p].ID = fmt.Sprint(p)
			for i, d := range dates {
				v := 0.12 + shared[i] + 0.01*rng.NormFloat64()
				if f == 0 && i >= 15 {
					v -= 0.05
				}
				cells[p].Obs = append(cells[p].Obs, Obs{Date: d, NDVI: 0.2, NDTI: v, Sensor: "s"})
			}
		}
		talhoes = append(talhoes, cells)
	}
	return talhoes, shared, dates
}

// TestPortfolioOffsets: the offsets recovered are the shared ones, up to
// a constant and a slow remainder (a level is itself a mean of offsets):
// the scatter of (offset − shared) from date to date is a fifth of the
// shared offsets' own; the tilled talhão's drop is left in its series
// (its offsets are measured on the others); without enough peers, none.
func TestPortfolioOffsets(t *testing.T) {
	talhoes, shared, dates := offsetsWorld(8, 1)
	ms := make([]Medians, len(talhoes))
	for f, c := range talhoes {
		ms[f] = NewMedians(c, DefaultParams())
	}
	offs := NewPortfolios(ms)
	for f := range offs {
		if offs[f].Len() != len(dates) || len(offs[f].peer) == 0 {
			t.Fatalf("talhão %d: %d offsets, want %d (every date)", f, offs[f].Len(), len(dates))
		}
	}
	// Scatter of first differences, before and after.
	var before, after []float64
	for i := 1; i < len(dates); i++ {
		a, _ := offs[0].Offset(dates[i], "s")
		b, _ := offs[0].Offset(dates[i-1], "s")
		before = append(before, shared[i]-shared[i-1])
		after = append(after, (shared[i]-a)-(shared[i-1]-b))
	}
	sb, sa := rms(before), rms(after)
	t.Logf("date-to-date scatter of the shared offsets %.4f; of what the portfolio leaves %.4f", sb, sa)
	if sa > sb/5 {
		t.Errorf("left %.4f of a date-to-date scatter of %.4f; want at most a fifth", sa, sb)
	}
	// The tilled talhão keeps its step: corrected levels before and after.
	c := talhoes[0]
	var pre, post []float64
	for i, d := range dates {
		o, _ := offs[0].Offset(d, "s")
		m := num.Median([]float64{c[0].Obs[i].NDTI - o, c[1].Obs[i].NDTI - o, c[2].Obs[i].NDTI - o})
		if i < 15 {
			pre = append(pre, m)
		} else {
			post = append(post, m)
		}
	}
	if d := mean(pre) - mean(post); math.Abs(d-0.05) > 0.015 {
		t.Errorf("corrected drop of the tilled talhão %.3f, want 0.05 ± 0.015", d)
	}
	// And the step test now speaks on it, and on no other.
	for f, cells := range talhoes {
		ev := Detect(cells, DefaultParams().WithPortfolio(&offs[f]))
		if (len(ev) > 0) != (f == 0) {
			t.Errorf("talhão %d: %d events with the portfolio, want %v", f, len(ev), f == 0)
		}
		if f == 0 {
			t.Logf("tilled talhão: %d event(s) without the portfolio, %d with it", len(Detect(cells, DefaultParams())), len(ev))
		}
	}
	// Four talhões: three peers each, fewer than portfolioMinPeers.
	few, _, _ := offsetsWorld(portfolioMinPeers, 2)
	ms = ms[:0]
	for _, c := range few {
		ms = append(ms, NewMedians(c, DefaultParams()))
	}
	for f, o := range NewPortfolios(ms) {
		if o.Len() != 0 {
			t.Errorf("portfolio of %d: talhão %d has %d offsets, want none", len(few), f, o.Len())
		}
	}
	if o := NewPortfolios(nil); len(o) != 0 {
		t.Errorf("empty portfolio: %d offsets", len(o))
	}
}

func rms(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x * x
	}
	return math.Sqrt(s / float64(len(v)))
}

func mean(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}
