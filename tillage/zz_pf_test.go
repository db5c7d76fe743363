package tillage

import (
	"fmt"
	"math/rand/v2"
	"os"
	"sort"
	"testing"

	"github.com/manejo/manejo/internal/num"
)

func TestZZPF(t *testing.T) {
	if os.Getenv("SWPF") == "" {
		t.Skip()
	}
	for _, seed := range []uint64{1, 2} {
		rng := rand.New(rand.NewPCG(seed, 0x9f07))
		for range 4 {
			fields := pfWorld.drawPortfolio(rng)
			ms := make([]Medians, len(fields))
			for f := range fields {
				ms[f] = NewMedians(fields[f].cells, DefaultParams())
			}
			pfs := NewPortfolios(ms)
			nw := len(fields[0].windows)
			rs := make([][]float64, len(fields))
			flagged := make([][]bool, len(fields))
			for f, pf := range fields {
				q := harnessParams(pf.cells, DefaultParams()).WithPortfolio(&pfs[f])
				ev := Detect(pf.cells, q)
				rs[f] = make([]float64, nw)
				flagged[f] = make([]bool, nw)
				for k, w := range pf.windows {
					r, ok := WindowResidue(pf.cells, q, w[1])
					rs[f][k] = -1
					if ok {
						rs[f][k] = r.Share
					}
					for _, e := range ev {
						if e.Test == TestLowResidue && !e.Date.Before(w[0]) && !e.Date.After(w[1]) {
							flagged[f][k] = true
						}
					}
				}
			}
			for k := 0; k < nw; k++ {
				var all []float64
				for f := range fields {
					all = append(all, rs[f][k])
				}
				sort.Float64s(all)
				med := num.Median(append([]float64{}, all...))
				line := fmt.Sprintf("seed %d season %d med %.3f:", seed, k, med)
				for f := range fields {
					c := "n"
					if fields[f].conventional {
						c = "C"
					}
					m := ""
					if flagged[f][k] {
						m = "*"
					}
					line += fmt.Sprintf(" %s%.2f%s", c, rs[f][k], m)
				}
				fmt.Println(line)
			}
		}
	}
}
