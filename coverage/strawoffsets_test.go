//go:build research

package coverage

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/manejo/manejo/sim/pheno"
)

// TestStrawSeasonOffsets measures, on the harder world's tuning seed,
// how the three assessed seasons' straw-NDTI errors (true − declared
// prior mean; true − the season's read straw) correlate within a talhão:
// a talhão-level offset is worth pooling only if they do.
func TestStrawSeasonOffsets(t *testing.T) {
	if !*residueDiag {
		t.Skip("diagnostics: run with -residuediag")
	}
	rng := rand.New(rand.NewPCG(*hardTuneSeed, 2027))
	contract, _ := ParseSeason("2026/2027", MonthDay{})
	var pa, pb, fa, fb []float64
	for k := 0; k < *hardTuneN; k++ {
		_, f := harderField6(rng, pheno.SpectraVaried)
		p, cal := calibrate(f.cells, hardParams())
		h := declaredHistory(f.sc)
		var ep, ef []float64
		for _, s := range contract.Assessed() {
			sow, _ := f.trueSowing(s)
			truth := f.sc.GroundStrawNDTI(sow.AddDate(0, 0, -15))
			pr, ok := h.priorAt(sow, p.WindowDays)
			c, _ := cal.withResidue(h, sow, p.WindowDays)
			d := c.straw(sow.AddDate(0, 0, -envelopeDays), sow).Straw.Endmember().NDTI
			e := math.NaN()
			if ok {
				e = truth - pr.ndti
			}
			ep, ef = append(ep, e), append(ef, truth-d)
		}
		for i := range ep {
			for j := i + 1; j < len(ep); j++ {
				if !math.IsNaN(ep[i]) && !math.IsNaN(ep[j]) {
					pa, pb = append(pa, ep[i]), append(pb, ep[j])
				}
				fa, fb = append(fa, ef[i]), append(fb, ef[j])
			}
		}
	}
	t.Logf("seed %d, %d talhões: within-talhão season pairs: prior error corr %.2f (%d pairs), read-straw error corr %.2f (%d pairs)",
		*hardTuneSeed, *hardTuneN, pearson(pa, pb), len(pa), pearson(fa, fb), len(fa))
}
