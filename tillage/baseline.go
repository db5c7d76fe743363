package tillage

import (
	"math"
	"sort"
	"time"

	"github.com/manejo/manejo/internal/num"
)

// MedianNDTIDrop is the plain baseline every tillage accuracy figure is
// reported beside (issues 17 and 30): a persistent drop of the talhão's
// median NDTI. Per date, the median NDTI and NDVI of the interior cells
// with a clear reading; a break between two such dates when the median
// NDTI of the next three dates is below the median of the previous three
// by more than drop (NDTI units), both medians of NDVI below 0.3 (bare of
// green: a harvest or a senescence also lowers NDTI), the previous three
// within 30 days. Breaks closer than 30 days to the last one are the same
// event. It estimates no noise and knows no sensor: it is the rule a
// real-data check found separating conventional-till fields, with drop
// chosen on the same fields (0.04–0.06 there; 0.08 on the harnesses'
// tuning seed).
func MedianNDTIDrop(cells []Cell, drop float64) []Break {
	by, byV := map[time.Time][]float64{}, map[time.Time][]float64{}
	for _, c := range cells {
		if c.Border {
			continue
		}
		for _, o := range c.Obs {
			if !math.IsNaN(o.NDTI) && !math.IsNaN(o.NDVI) {
				by[o.Date] = append(by[o.Date], o.NDTI)
				byV[o.Date] = append(byV[o.Date], o.NDVI)
			}
		}
	}
	dates := make([]time.Time, 0, len(by))
	for d := range by {
		dates = append(dates, d)
	}
	sort.Slice(dates, func(i, j int) bool { return dates[i].Before(dates[j]) })
	v, nv := make([]float64, len(dates)), make([]float64, len(dates))
	for i, d := range dates {
		v[i], nv[i] = num.Median(by[d]), num.Median(byV[d])
	}
	med3 := func(x []float64) float64 { return num.Median(append([]float64(nil), x...)) }
	var out []Break
	for j := 3; j+3 <= len(v); j++ {
		if dates[j-1].Sub(dates[j-3]) > 30*24*time.Hour {
			continue
		}
		pre, post := med3(v[j-3:j]), med3(v[j:j+3])
		if pre-post <= drop || med3(nv[j-3:j]) >= 0.3 || med3(nv[j:j+3]) >= 0.3 {
			continue
		}
		if n := len(out); n > 0 && dates[j].Sub(out[n-1].After) < 30*24*time.Hour {
			continue
		}
		out = append(out, Break{Date: dates[j], Before: dates[j-1], After: dates[j], PreLevel: pre, PostLevel: post})
	}
	return out
}
