package tillage

import (
	"math"
	"slices"
	"sort"
)

// The tests an event or break can come from (Break.Test, Event.Test).
const (
	// TestSoil: the soil fraction rose to exposed soil (tillageAt).
	TestSoil = "soil-exposure"
	// TestStrawShare: the straw share of the ground dropped (strawDropAt).
	TestStrawShare = "straw-share"
	// TestMedianNDTI: a drop of the talhão's median NDTI beyond its
	// history's own drops (medianDropBreaks).
	TestMedianNDTI = "median-ndti-drop"
	// TestNDTIStep: a persistent step of the talhão's median NDTI on a
	// short piece of the series (stepBreaks).
	TestNDTIStep = "ndti-step"
	// TestLowResidue: the residue cover of a short piece of the series
	// is below the bound of intensive tillage on its bare dates
	// (lowResidueBreaks): revolved on or before the event's date.
	TestLowResidue = "low-residue"
)

// addEvidence fills each event's evidence (issue 30: evidence with every
// T), read on the talhão's pooled median NDTI the way the step test reads
// it (stepSeries: dates bare of green, not wet, sensor offsets removed):
// the levels of up to stepMaxDates dates on each side of the event within
// stepDays, their difference, its standard error from the date-to-date
// scatter of the same series, the dates on each side and their sensors.
// Whatever test made the event, the same yardstick; for a TestNDTIStep
// event it is the very drop and noise it was judged by.
func addEvidence(ev []Event, pl []pooledObs, p Params) {
	if len(ev) == 0 {
		return
	}
	s := stepSeries(pl, p.portfolioOnShort(pl))
	sigma := stepSigma(s, p.MinSigma)
	for k := range ev {
		e := &ev[k]
		e.NDTIDrop, e.NDTINoise = math.NaN(), math.NaN()
		j := sort.Search(len(s), func(i int) bool { return !s[i].date.Before(e.Date) })
		if j == 0 || j == len(s) {
			e.DatesBefore, e.DatesAfter = j, len(s)-j
			continue
		}
		l, sensors := stepSides(s, j, pl, sigma, &p.tune)
		e.NDTIDrop, e.NDTINoise = l.pre-l.post, l.se
		e.DatesBefore, e.DatesAfter = l.npre, l.npost
		sort.Strings(sensors)
		e.Sensors = slices.Compact(sensors)
		if len(e.Sensors) == 1 && e.Sensors[0] == "" {
			e.Sensors = nil
		}
	}
}
