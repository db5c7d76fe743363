package series

import (
	"math"
	"sort"
	"time"

	"github.com/manejo/manejo/grid"
	"github.com/manejo/manejo/zarc"
)

// Gap is the temporal check of IN 6.5 for one talhão.
type Gap struct {
	Scenes      int `json:"scenes"`       // distinct scene dates selected for the talhão
	UsableDates int `json:"usable_dates"` // dates with at least one cell with a valid NDVI
	// LargestGapDays is the largest number of days between consecutive
	// usable dates (0 with fewer than two); GapFrom/GapTo bound it.
	LargestGapDays int       `json:"largest_gap_days"`
	GapFrom        time.Time `json:"gap_from"`
	GapTo          time.Time `json:"gap_to"`
	// RevisitDays is the median interval between consecutive scene dates,
	// clouds or not: the archive's revisit.
	RevisitDays float64 `json:"revisit_days"`
	// Coarse is true when RevisitDays is over 16 (IN 6.5 asks for a
	// temporal resolution of at least 16 days) or fewer than two scenes
	// were found.
	Coarse bool `json:"coarse"`
}

func gaps(grids []grid.Grid, jobs []*sceneJob, all []Obs) map[string]Gap {
	sceneDates := map[string]map[time.Time]bool{}
	for _, j := range jobs {
		d := zarc.Day(j.item.Datetime)
		seen := map[int]bool{}
		for _, c := range j.cells {
			if seen[c.g] {
				continue
			}
			seen[c.g] = true
			id := grids[c.g].Field.ID
			if sceneDates[id] == nil {
				sceneDates[id] = map[time.Time]bool{}
			}
			sceneDates[id][d] = true
		}
	}
	usable := map[string]map[time.Time]bool{}
	for _, ob := range all {
		if math.IsNaN(float64(ob.NDVI)) {
			continue
		}
		if usable[ob.FieldID] == nil {
			usable[ob.FieldID] = map[time.Time]bool{}
		}
		usable[ob.FieldID][ob.Date] = true
	}
	out := map[string]Gap{}
	for _, g := range grids {
		id := g.Field.ID
		out[id] = gapOf(sortedDates(sceneDates[id]), sortedDates(usable[id]))
	}
	return out
}

// gapOf is the IN 6.5 check of a talhão from the dates of the scenes
// selected for it (sd) and those with a valid NDVI (ud), both sorted.
func gapOf(sd, ud []time.Time) Gap {
	gp := Gap{Scenes: len(sd), UsableDates: len(ud)}
	for i := 1; i < len(ud); i++ {
		d := int(ud[i].Sub(ud[i-1]).Hours()/24 + 0.5)
		if d > gp.LargestGapDays {
			gp.LargestGapDays, gp.GapFrom, gp.GapTo = d, ud[i-1], ud[i]
		}
	}
	if len(sd) >= 2 {
		iv := make([]float64, 0, len(sd)-1)
		for i := 1; i < len(sd); i++ {
			iv = append(iv, sd[i].Sub(sd[i-1]).Hours()/24)
		}
		sort.Float64s(iv)
		n := len(iv)
		if n%2 == 1 {
			gp.RevisitDays = iv[n/2]
		} else {
			gp.RevisitDays = (iv[n/2-1] + iv[n/2]) / 2
		}
	}
	gp.Coarse = len(sd) < 2 || gp.RevisitDays > 16
	return gp
}

func sortedDates(m map[time.Time]bool) []time.Time {
	out := make([]time.Time, 0, len(m))
	for d := range m {
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Before(out[j]) })
	return out
}
