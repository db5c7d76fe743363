package tillage

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"testing"
	"time"
)

func TestShortDiag(t *testing.T) {
	if os.Getenv("SHORTDIAG") == "" {
		t.Skip()
	}
	rng := rand.New(rand.NewPCG(1, 0x5407))
	var w shortWorld
	for i := 0; i < 24; i++ {
		conv := i%2 == 0
		st := w.draw(rng, conv)
		truth := st.held()
		q := Calibrate(st.cells, DefaultParams())
		q.tune = q.tune.withDefaults()
		pl := pooled(interiorObs(st.cells))
		s := stepSeries(pl, q)
		cs := make([]clearObs, len(s))
		for i, o := range s {
			cs[i] = clearObs{date: o.date, value: o.ndti}
		}
		sigma := robustSigma(cs, q.MinSigma, nil)
		best, bj := math.Inf(-1), -1
		for j := range s {
			l, ok := stepAt(s, j, pl, sigma, &q.tune)
			if ok && (l.pre-l.post)/l.se > best {
				best, bj = (l.pre-l.post)/l.se, j
			}
		}
		fmt.Printf("conv %v truth %v tills %v start %s end %s n=%d bare=%d sigma %.4f soil %.3f best z %.2f", conv, fmtDates(truth), fmtDates(st.tillage), st.start.Format("01-02"), st.end.Format("01-02"), len(pl), len(s), sigma, q.Soil.NDTI, best)
		if bj >= 0 {
			fmt.Printf(" at %s", s[bj].date.Format("01-02"))
		}
		fmt.Println(" events", len(Detect(st.cells, q)))
		if os.Getenv("SHORTDIAG") == "2" {
			for _, o := range pl {
				fmt.Printf("   %s %s ndvi %.3f ndti %.3f swir %.3f\n", o.Date.Format("2006-01-02"), o.sensor, o.NDVI, o.NDTI, o.swir)
			}
		}
	}
}

func fmtDates(ds []time.Time) string {
	s := ""
	for _, d := range ds {
		s += d.Format("01-02") + " "
	}
	return s
}
