package pipeline

import (
	"strings"
	"testing"
	"time"

	"github.com/manejo/manejo/tillage"
)

// TestResidueReason: T's residue sentence gives the level, the ground's
// wetting response and the bound that response set (issue 30, session 9):
// not read → 15 %; as straw → no event; as soil → 30 %.
func TestResidueReason(t *testing.T) {
	base := tillage.Residue{Share: 0.284, SE: 0.012, Dates: 21, First: time.Date(2019, 11, 1, 0, 0, 0, 0, time.UTC), Last: time.Date(2020, 5, 10, 0, 0, 0, 0, time.UTC)}
	unread, straw, soil := base, base, base
	unread.Bound = tillage.LowResidueCover
	straw.WetJudged, straw.Wet, straw.Bound = true, 0.124, 0
	soil.WetJudged, soil.Wet, soil.Bound, soil.PeersJudged = true, 0.013, tillage.LowResidueReduced, true
	for _, c := range []struct {
		r    tillage.Residue
		want []string
	}{
		{unread, []string{"2019-11-01..2020-05-10 is 28 % ± 1 % of the ground over 21 bare dates", "its answer to wetting not read: a low-residue event needs it below 15 % by more than 1 standard error", "no portfolio read"}},
		{straw, []string{"is 28 % ± 1 %", "its NDTI follows its wet dates as straw's does, slope 0.12 above 0.05: no low-residue event"}},
		{soil, []string{"it answers wetting as soil does, slope 0.01: a low-residue event needs it below 30 % by more than 1 standard error", "it lies below the portfolio's other talhões' level"}},
	} {
		got := residueReason(c.r)
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("residueReason(%+v) = %q, want it to contain %q", c.r, got, w)
			}
		}
	}
}
