package coverage

import (
	"math"
	"time"

	"github.com/manejo/manejo/zarc"
)

// secondCrop is the crop whose lag dates the sowing of a 2ª or 3ª safra
// cycle: the crop is not known (safrinha maize, sorghum, millet,
// brachiaria), and maize is the usual safrinha.
const secondCrop = zarc.Milho

// setCycleSowings dates the sowing of every cycle of cs that has one:
// the main crop's is sow (the season's sowing, declared or detected; zero
// when there is none); a 2ª or 3ª safra cycle's is cycleSowing's. Other
// cycles (a cover crop before the main crop, a year without a main crop)
// keep a zero Sowing.
func setCycleSowings(s *daily, cs []Cycle, sow time.Time, p Params) {
	for i := range cs {
		switch c := &cs[i]; {
		case c.Main:
			c.Sowing = sow
		case c.Kind == KindSecond || c.Kind == KindThird:
			c.Sowing = cycleSowing(s, *c, p)
		default:
			c.Sowing = time.Time{}
		}
	}
}

// cycleSowing is the sowing of a cycle that follows the main crop in the
// same year (a 2ª or 3ª safra): its green-up minus the sowing-to-green-up
// lag of secondCrop (LagDays; 29.6 days by default, the crop table's maize
// lag, set for main crops). Unlike the main crop's it is not moved into a
// window: a second crop has none.
func cycleSowing(s *daily, c Cycle, p Params) time.Time {
	return s.date(int(math.Round(c.sos - p.lag(secondCrop))))
}
