package tillage

import (
	"math"
	"time"

	"github.com/manejo/manejo/internal/num"
)

// medianDropBreaks is the talhão's third test: a persistent drop of the
// median NDTI of its interior cells (pool) on dry dates bare of green
// (median NDVI below mdBareNDVI), beyond K robust standard deviations of
// the same drop statistic over the talhão's own history (Portaria 349,
// 6.8: "desvio-padrão superior ao limiar histórico", validated by NDTI
// itself). It reads NDTI, not the unmixed fractions, so it does not depend
// on the soil endmember: a bright sandy soil whose NDTI lies close to the
// straw's narrows the drop, and the threshold with it.
func medianDropBreaks(pl []pooledObs, p Params) []Break {
	t := &p.tune
	cs := make([]clearObs, 0, len(pl))
	for i, o := range pl {
		if math.IsNaN(o.NDTI) || math.IsNaN(o.NDVI) || o.NDVI >= t.mdBareNDVI || wetDate(pl, i, t.mdWet) {
			continue
		}
		cs = append(cs, clearObs{date: o.Date, value: o.NDTI, green: o.NDVI})
	}
	if len(cs) < 2*t.mdPostObs {
		return nil
	}
	ds := make([]float64, len(cs))
	var valid []float64
	for j := range cs {
		ds[j] = math.NaN()
		if j > 0 {
			if pre, post, ok := medianDropLevels(cs, j, p); ok {
				ds[j] = pre - post
				valid = append(valid, ds[j])
			}
		}
	}
	if len(valid) < 10 {
		return nil
	}
	mid := num.Median(append([]float64(nil), valid...))
	for i := range valid {
		valid[i] = math.Abs(valid[i] - mid)
	}
	sd := math.Max(1.4826*num.Median(valid), p.MinSigma)
	var out []Break
	for j := 1; j < len(cs); j++ {
		z := (ds[j] - mid) / sd
		if math.IsNaN(z) || z <= p.K || canopyBefore(pl, cs[j].date, t) {
			continue
		}
		// A step, not a ramp: the first date after is nearer the level
		// after than the level before.
		if pre, post, _ := medianDropLevels(cs, j, p); cs[j].value > (pre+post)/2 || ds[j] < t.mdRel*(pre-p.Soil.NDTI) ||
			cs[j-1].value < pre-t.mdStep*(pre-post) {
			continue
		}
		// The best split among the next candidates dates the drop.
		for k := j + 1; k < len(cs) && k <= j+2 && !math.IsNaN(ds[k]) && ds[k] > ds[j]; k++ {
			j = k
		}
		out = append(out, Break{Date: cs[j].date, Before: cs[j-1].date, After: cs[j].date, Test: TestMedianNDTI,
			MagnitudeSigma: (ds[j] - mid) / sd, Sigma: sd})
		for j+1 < len(cs) && cs[j+1].date.Sub(cs[j].date) <= persistDays*24*time.Hour {
			j++
		}
	}
	return out
}

// medianDropLevels returns the pre level (median of up to PreObs dates
// within PreWindowDays, at least 2) and the post level (median of
// mdPostObs dates from cs[j] within mdPostDays) of the drop test, false
// when either is short or the gap before cs[j] exceeds mdMaxGap days.
func medianDropLevels(cs []clearObs, j int, p Params) (float64, float64, bool) {
	t := &p.tune
	if cs[j].date.Sub(cs[j-1].date) > time.Duration(t.mdMaxGap)*24*time.Hour {
		return 0, 0, false
	}
	var preArr, postArr [8]float64
	pre := preArr[:0]
	for i := j - 1; i >= 0 && len(pre) < p.PreObs && cs[j-1].date.Sub(cs[i].date) <= time.Duration(p.PreWindowDays)*24*time.Hour; i-- {
		pre = append(pre, cs[i].value)
	}
	post := postArr[:0]
	for i := j; i < len(cs) && len(post) < t.mdPostObs && cs[i].date.Sub(cs[j].date) <= time.Duration(t.mdPostDays)*24*time.Hour; i++ {
		post = append(post, cs[i].value)
	}
	if len(pre) < 2 || len(post) < t.mdPostMin {
		return 0, 0, false
	}
	return num.Median(pre), num.Median(post), true
}

// canopyBefore reports whether the pooled series shows a canopy (median
// NDVI ≥ mdCanopyNDVI) within mdCanopyDays before d: a crop or weed canopy
// drying and harvested lowers NDTI as tillage does (its standing dry
// matter reads as straw, its residue covers less).
func canopyBefore(pl []pooledObs, d time.Time, t *tuning) bool {
	for _, o := range pl {
		if o.Date.Before(d) && d.Sub(o.Date) <= time.Duration(t.mdCanopyDays)*24*time.Hour && o.NDVI >= t.mdCanopyNDVI {
			return true
		}
	}
	return false
}

// wetDate reports whether pl[i] is a wet date: its median SWIR1+SWIR2 is
// below wet (mdWet) times the median over the pooled dates within 20 days (wet soil
// and residue darken, SWIR most, and wet straw loses NDTI; Quemada &
// Daughtry 2016). Dates without reflectances are never wet.
func wetDate(pl []pooledObs, i int, wet float64) bool {
	x := pl[i].swir
	if !(x > 0) {
		return false
	}
	var v []float64
	for _, o := range pl {
		if o.swir > 0 && absDur(o.Date.Sub(pl[i].Date)) <= 20*24*time.Hour {
			v = append(v, o.swir)
		}
	}
	return len(v) >= 3 && x < wet*num.Median(v)
}
