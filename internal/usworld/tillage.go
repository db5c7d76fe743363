package usworld

import (
	"math/rand/v2"
	"time"
)

// Tillage systems of the conventional-till fields, with their shares. The
// residue-cover share each implement leaves on maize (non-fragile) stover
// is the range of the USDA-NRCS / extension tables of residue remaining
// after one pass (e.g. Iowa State PM-1901; NebGuide G1133; Hanna et al.
// 1995, Appl. Eng. Agric. 11:205, measured on Iowa corn residue): moldboard
// plow 0–10 %, chisel plow 50–80 % (twisted to straight points), tandem
// disk 30–60 %, field cultivator 70–90 %. Fall tillage follows harvest by
// days to weeks, before the ground freezes (early December); a spring pass
// comes days to weeks before planting (Midwest practice; CTIC). Farmers
// label the field CT when it is tilled every year, whatever the residue
// left (so a chisel field can keep half its cover).
var systems = []struct {
	name  string
	share float64
}{
	{"fall-chisel+spring-cultivate", 0.40},
	{"spring-disk+cultivate", 0.25},
	{"fall-chisel-only", 0.10},
	{"fall-disk+spring-cultivate", 0.15},
	{"fall-moldboard+spring-cultivate", 0.10},
}

func drawSystem(rng *rand.Rand) string {
	u := rng.Float64()
	for _, s := range systems {
		if u < s.share {
			return s.name
		}
		u -= s.share
	}
	return systems[0].name
}

// passes draws one year's tillage of a CT system. harvest and planting
// bound it; freeze is the last day fall tillage is done.
func passes(rng *rand.Rand, system string, harvest, planting time.Time, fallBefore bool) []Pass {
	fall := func(implement string, lo, hi float64) Pass {
		d := harvest.AddDate(0, 0, 2+rng.IntN(35))
		if freeze := date(harvest.Year(), time.December, 5); d.After(freeze) {
			d = freeze.AddDate(0, 0, -rng.IntN(10))
		}
		if start := date(harvest.Year(), time.November, 1); !fallBefore && !d.After(start) {
			d = start.AddDate(0, 0, 3+rng.IntN(25)) // ablation: every fall pass inside the window
		}
		return Pass{Date: d, Implement: implement, Retain: uniform(rng, lo, hi)}
	}
	spring := func(implement string, minDays, maxDays int, lo, hi float64) Pass {
		return Pass{Date: planting.AddDate(0, 0, -(minDays + rng.IntN(maxDays-minDays+1))), Implement: implement, Retain: uniform(rng, lo, hi)}
	}
	cultivate := func() Pass { return spring("field cultivator", 1, 21, 0.70, 0.90) }
	switch system {
	case "fall-chisel+spring-cultivate":
		return []Pass{fall("chisel plow", 0.50, 0.80), cultivate()}
	case "spring-disk+cultivate":
		disk := spring("tandem disk", 8, 35, 0.30, 0.60)
		c := spring("field cultivator", 1, 7, 0.70, 0.90)
		return []Pass{disk, c}
	case "fall-chisel-only":
		return []Pass{fall("chisel plow", 0.50, 0.80)}
	case "fall-disk+spring-cultivate":
		return []Pass{fall("tandem disk", 0.30, 0.60), cultivate()}
	case "fall-moldboard+spring-cultivate":
		return []Pass{fall("moldboard plow", 0.0, 0.10), cultivate()}
	}
	return nil
}

// harvestDate draws the previous fall's maize (or soybean) harvest: USDA
// NASS Crop Progress has Corn Belt corn half harvested about 20–25
// October, most of it between late September and mid-November.
func harvestDate(rng *rand.Rand, cropYear int) time.Time {
	off := clamp(rng.NormFloat64()*13, -24, 32)
	return date(cropYear-1, time.October, 20).AddDate(0, 0, int(off))
}

// plantingDate draws the maize planting: NASS Crop Progress, Corn Belt
// corn mostly planted between 20 April and 20 May.
func plantingDate(rng *rand.Rand, cropYear int) time.Time {
	return date(cropYear, time.April, 20).AddDate(0, 0, rng.IntN(31))
}

// Residue cover. NT fields keep 60–95 % cover at planting (the brief's
// range; CTIC no-till ≥ 30 %, maize no-till typically 60–90 %). Cover after
// harvest is that over the overwinter retention: decomposition removes
// 10–25 % of the cover of non-fragile residue from harvest to planting
// (NRCS tables: 70–90 % of the mass remains; cover falls less than mass).
func drawCover(rng *rand.Rand) (atHarvest, overwinter float64) {
	overwinter = uniform(rng, 0.75, 0.90)
	atPlanting := uniform(rng, 0.60, 0.95)
	return clamp(atPlanting/overwinter, 0, 0.98), overwinter
}
