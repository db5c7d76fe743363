package series

import (
	"math"

	"github.com/manejo/manejo/grid"
	"github.com/manejo/manejo/zarc"
)

// indices computes the observation of each cell the scene covers from the
// bands read; cells outside the scene get no observation and are counted
// (SkipOutsideScene).
func indices(it *Item, p *Profile, roles []*role, mask []MaskReason, cells []cellRef, grids []grid.Grid, ss *sceneStats) []Obs {
	date := zarc.Day(it.Datetime)
	obs := make([]Obs, 0, len(cells))
	nan := float32(math.NaN())
	for i, c := range cells {
		if mask[i] == MaskedOutsideScene {
			// No row: a scene that does not cover a cell says nothing
			// about it, and large talhões would hold mostly such rows.
			ss.count(SkipOutsideScene, 1)
			continue
		}
		cell := &grids[c.g].Cells[c.c]
		ob := Obs{FieldID: grids[c.g].Field.ID, CellID: cell.ID, Date: date, Collection: it.Collection, ItemID: it.ID, NDVI: nan, NDTI: nan, Red: nan, NIR: nan, SWIR1: nan, SWIR2: nan, Mask: mask[i]}
		if ob.Mask == "" {
			compute(p, roles, i, &ob)
		}
		obs = append(obs, ob)
	}
	return obs
}

// value turns a DN into a physical value, or returns a reason.
func (ro *role) value(p *Profile, i int) (float64, MaskReason) {
	v := ro.val[i]
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, MaskedNodata
	}
	for _, n := range p.Nodata {
		if v == n {
			return 0, MaskedNodata
		}
	}
	if ro.asset.Nodata != nil && v == *ro.asset.Nodata {
		return 0, MaskedNodata
	}
	if ro.hasND && v == ro.nd {
		return 0, MaskedNodata
	}
	if p.ValidMax > p.ValidMin && (v < p.ValidMin || v > p.ValidMax) {
		return 0, MaskedNodata
	}
	if p.SaturatedMin != 0 && v >= p.SaturatedMin {
		return 0, MaskedSaturated
	}
	return v*ro.rad.Scale + ro.rad.Offset, ""
}

// noSWIR stands for the NDTI reason of a profile without a SWIR pair.
const noSWIR MaskReason = "none"

// compute sets the indices, reflectances and mask of ob from the bands
// read at cell i.
func compute(p *Profile, roles []*role, i int, ob *Obs) {
	get := func(name string) *role {
		for _, ro := range roles {
			if ro.name == name {
				return ro
			}
		}
		return nil
	}
	if nd := get("ndvi"); nd != nil {
		v, why := nd.value(p, i)
		if why != "" {
			ob.Mask = why
			return
		}
		ob.NDVI = float32(v)
		return
	}
	nd, why1 := normDiff(p, get("nir"), get("red"), i)
	var nt float64
	why2 := noSWIR
	if s1, s2 := get("swir1"), get("swir2"); s1 != nil && s2 != nil {
		nt, why2 = normDiff(p, s1, s2, i)
	}
	if why1 == "" {
		ob.NDVI = float32(nd)
		ob.Red, ob.NIR = reflectance(p, get("red"), i), reflectance(p, get("nir"), i)
	}
	if why2 == "" {
		ob.NDTI = float32(nt)
		ob.SWIR1, ob.SWIR2 = reflectance(p, get("swir1"), i), reflectance(p, get("swir2"), i)
	}
	switch {
	case why1 == "" && (why2 == "" || why2 == noSWIR):
	case why1 == "":
		ob.Mask = why2.only("ndti")
	case why2 == noSWIR:
		ob.Mask = why1
	case why2 == "":
		ob.Mask = why1.only("ndvi")
	case why1 == MaskedZeroDenominator:
		ob.Mask = why2
	default:
		ob.Mask = why1
	}
}

// reflectance returns the physical value of ro at cell i, NaN when it has
// none (normDiff has already accepted it).
func reflectance(p *Profile, ro *role, i int) float32 {
	v, why := ro.value(p, i)
	if why != "" {
		return float32(math.NaN())
	}
	return float32(v)
}

// normDiff returns (a−b)/(a+b) of the reflectances, or a reason.
func normDiff(p *Profile, ra, rb *role, i int) (float64, MaskReason) {
	a, why := ra.value(p, i)
	if why != "" {
		return 0, why
	}
	b, why := rb.value(p, i)
	if why != "" {
		return 0, why
	}
	den := a + b
	if !(den > 0) {
		return 0, MaskedZeroDenominator
	}
	return (a - b) / den, ""
}
