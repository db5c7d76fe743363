package pipeline

import (
	"context"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/manejo/manejo/coverage"
	"github.com/manejo/manejo/export"
	"github.com/manejo/manejo/grid"
	"github.com/manejo/manejo/series"
	"github.com/manejo/manejo/tillage"
)

// fieldOut is everything one talhão contributes to the outputs.
type fieldOut struct {
	ID        string
	Cells     []export.CellRow
	Obs       []export.ObsRow
	Events    []export.EventRow
	Seasons   []export.SeasonRow
	Cycles    []export.CycleRow
	Indicator export.IndicatorRow
	Payload   []byte // SINM JSON; nil when it could not be built
	// Failure is set when the talhão failed as a whole.
	Failure string
}

// cellSeries is the observations of one cell, by date, one per date
// (several collections on a date collapse to the first valid one).
type cellSeries struct {
	dates      []time.Time
	ndvi, ndti []float64
	// refl are the surface reflectances Red, NIR, SWIR1, SWIR2 of each
	// date (NaN when not read), for coverage's talhão soil fit.
	refl [][4]float64
}

// seriesByCell groups a talhão's observations by cell, sorted by date.
func seriesByCell(g grid.Grid, obs []series.Obs) map[string]*cellSeries {
	type key struct {
		cell string
		day  time.Time
	}
	best := map[key]series.Obs{}
	for _, o := range obs {
		k := key{o.CellID, o.Date}
		prev, seen := best[k]
		if !seen || (!valid(prev.NDVI) && valid(o.NDVI)) || (!valid(prev.NDTI) && valid(o.NDTI) && valid(o.NDVI)) {
			best[k] = o
		}
	}
	out := make(map[string]*cellSeries, len(g.Cells))
	for _, c := range g.Cells {
		out[c.ID] = &cellSeries{}
	}
	keys := make([]key, 0, len(best))
	for k := range best {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].cell != keys[j].cell {
			return keys[i].cell < keys[j].cell
		}
		return keys[i].day.Before(keys[j].day)
	})
	for _, k := range keys {
		cs := out[k.cell]
		if cs == nil {
			continue
		}
		o := best[k]
		cs.dates = append(cs.dates, k.day)
		cs.ndvi = append(cs.ndvi, float64(o.NDVI))
		cs.ndti = append(cs.ndti, float64(o.NDTI))
		cs.refl = append(cs.refl, [4]float64{float64(o.Red), float64(o.NIR), float64(o.SWIR1), float64(o.SWIR2)})
	}
	return out
}

func valid(v float32) bool { return !math.IsNaN(float64(v)) }

// analyse computes every indicator of one talhão from its grid and
// observations. It never fails as a whole once the grid exists: a missing
// indicator is reported as missing with its reason (IN 2.2).
func (s *stage) analyse(ctx context.Context, g grid.Grid, obs []series.Obs, gap series.Gap) fieldOut {
	cfg := s.in.cfg
	id := g.Field.ID
	out := fieldOut{ID: id}
	var reasons []string

	for _, c := range g.Cells {
		row, err := export.NewCellRow(c)
		if err != nil {
			out.Failure = fmt.Sprintf("cell %s: %v", c.ID, err)
			return out
		}
		out.Cells = append(out.Cells, row)
	}
	sensors := map[string]bool{}
	var first, last time.Time
	for _, o := range obs {
		r := export.ObsRow{FieldID: id, CellID: o.CellID, Date: export.DateOf(o.Date), Collection: o.Collection, ItemID: o.ItemID}
		if o.Mask != "" {
			m := o.Mask
			r.MaskReason = &m
		}
		if valid(o.NDVI) {
			v := o.NDVI
			r.NDVI = &v
			sensors[o.Collection] = true
			if first.IsZero() || o.Date.Before(first) {
				first = o.Date
			}
			if o.Date.After(last) {
				last = o.Date
			}
		}
		if valid(o.NDTI) {
			v := o.NDTI
			r.NDTI = &v
		}
		out.Obs = append(out.Obs, r)
	}

	ind := export.IndicatorRow{
		FieldID: id, Crop: string(g.Field.Crop), AreaHa: g.AreaHa, CellSizeHa: g.CellSizeHa,
		NCells: int32(len(g.Cells)), MODISEligible: g.MODISEligible,
		PeriodStart: export.OptDate(first), PeriodEnd: export.OptDate(last),
	}
	for c := range sensors {
		ind.Sensors = append(ind.Sensors, c)
	}
	sort.Strings(ind.Sensors)
	if gap.Coarse {
		reasons = append(reasons, fmt.Sprintf("series: revisit %.0f days is coarser than 16 days (IN 6.5)", gap.RevisitDays))
	}

	byCell := seriesByCell(g, obs)

	// T: tillage events and full years without revolving.
	var tcells []tillage.Cell
	for _, c := range g.Cells {
		cs := byCell[c.ID]
		tc := tillage.Cell{ID: c.ID, Border: c.Border}
		for i, d := range cs.dates {
			tc.Obs = append(tc.Obs, tillage.Obs{Date: d, NDVI: cs.ndvi[i], NDTI: cs.ndti[i]})
		}
		tcells = append(tcells, tc)
	}
	var tres tillage.T
	if first.IsZero() {
		reasons = append(reasons, "T: no clear observation in the archive")
	} else {
		events := tillage.Detect(tcells, cfg.Tillage)
		var kept []tillage.Event
		for _, e := range events {
			if !e.Date.After(cfg.AsOf) {
				kept = append(kept, e)
			}
		}
		for _, e := range kept {
			out.Events = append(out.Events, export.EventRow{
				FieldID: id, Date: export.DateOf(e.Date), Before: export.DateOf(e.Before), After: export.DateOf(e.After),
				CellFraction: e.CellFraction, NCells: int32(e.NCells), MagnitudeSigma: float32(e.MagnitudeSigma), Operation: export.OptString(e.Operation),
			})
		}
		tres = tillage.Years(kept, first, cfg.AsOf)
		if tres.Censored {
			ind.TCensored = true
			ind.TYearsMin = ptr(float64(tres.MinYears))
		} else {
			ind.TYears = ptr(float64(tres.Years))
		}
		if tres.Level > 0 {
			ind.TLevel = ptr(int32(tres.Level))
		} else {
			reasons = append(reasons, "T: "+tres.Reason)
		}
		if tres.LastEvent != nil {
			ind.LastEvent = export.OptDate(*tres.LastEvent)
		}
	}

	// C: seasons, sowing, cycles, straw cover.
	ccells := make([][]coverage.Obs, 0, len(g.Cells))
	for _, c := range g.Cells {
		cs := byCell[c.ID]
		co := make([]coverage.Obs, len(cs.dates))
		for i, d := range cs.dates {
			r := cs.refl[i]
			co[i] = coverage.Obs{Date: d, NDVI: cs.ndvi[i], NDTI: cs.ndti[i], Red: r[0], NIR: r[1], SWIR1: r[2], SWIR2: r[3]}
		}
		ccells = append(ccells, co)
	}
	var declared map[string]coverage.Declared
	if s.in.declared != nil {
		declared = s.in.declared.For(id)
	}
	cres := coverage.Assess(ccells, cfg.Season, declared, g.Field.Crop, cfg.Coverage)
	for i, sc := range cres.Seasons {
		row := export.SeasonRow{FieldID: id, Season: sc.Season.Label, Crop: string(g.Field.Crop), NCells: int32(sc.NCells), NObs: int32(sc.NObs), Reason: export.OptString(sc.Reason)}
		if !sc.Sowing.Date.IsZero() {
			row.SowingDate = export.OptDate(sc.Sowing.Date)
			row.SowingSource = export.OptString(sc.Sowing.Source)
			if sc.Sowing.Source != coverage.SourceDeclared {
				row.SowingConfidence = ptr(float32(sc.Sowing.Confidence))
			}
			row.Decendio = ptr(int32(sc.Sowing.Decendio))
			row.WindowStart = export.OptDate(sc.WindowStart)
			row.WindowEnd = export.OptDate(sc.WindowEnd.AddDate(0, 0, -1))
			row.CoverDate = export.OptDate(sc.Sowing.Date.AddDate(0, 0, -1))
		}
		if sc.OK {
			row.CoverPct = ptr(sc.CoverPct)
		}
		out.Seasons = append(out.Seasons, row)
		for _, cy := range sc.Cycles {
			out.Cycles = append(out.Cycles, export.CycleRow{
				FieldID: id, Season: sc.Season.Label, Cycle: cycleNumber(cy.Kind), Kind: cy.Kind, Crop: export.OptString(cycleCrop(cy, g.Field.Crop)),
				StartDate: export.DateOf(cy.Start), EndDate: export.DateOf(cy.End), PeakNDVI: ptr(float32(cy.PeakNDVI)),
			})
		}
		ind.CSeasons = append(ind.CSeasons, sc.Season.Label)
		if sc.OK {
			v := sc.CoverPct
			switch i {
			case 0:
				ind.CSeason1Pct = &v
			case 1:
				ind.CSeason2Pct = &v
			case 2:
				ind.CSeason3Pct = &v
			}
		}
	}
	if cres.OK {
		ind.CPct = ptr(cres.Pct)
		ind.CLevel = ptr(int32(cres.Level))
	} else {
		reasons = append(reasons, "C: "+cres.Reason)
	}

	// Slope.
	if s.in.dem == nil {
		reasons = append(reasons, "slope: no usable DEM (--dem)")
	} else if sr, err := s.in.dem.Field(ctx, g.Field); err != nil {
		reasons = append(reasons, "slope: "+err.Error())
	} else {
		ind.SlopeMeanPct, ind.SlopeMedianPct, ind.SlopeP90Pct = ptr(sr.MeanPct), ptr(sr.MedianPct), ptr(sr.P90Pct)
		ind.ContourRequired = ptr(sr.ContourRequired)
		ind.DeclividadeMedia = ptr(int32(sr.DeclividadeMedia))
		for _, w := range sr.Warnings {
			reasons = append(reasons, "slope: "+w)
		}
		s.slopes.Store(id, sr)
	}

	ind.Status = export.StatusOK
	if ind.TLevel == nil || ind.CLevel == nil || ind.SlopeMeanPct == nil {
		ind.Status = export.StatusPartial
	}
	ind.Reasons = reasons
	out.Indicator = ind

	payload, err := s.payload(g, out, obs)
	if err != nil {
		out.Indicator.Reasons = append(out.Indicator.Reasons, "sinm: "+err.Error())
		out.Indicator.Status = export.StatusPartial
	} else {
		out.Payload = payload
	}
	return out
}

// cycleNumber maps a coverage cycle kind to the cycle column: 1 = 1ª safra,
// 2 = 2ª safra, 3 = 3ª safra, 0 = other (cover crop before the main crop,
// or a year whose main crop was not found).
func cycleNumber(kind string) int32 {
	switch kind {
	case coverage.KindFirst:
		return 1
	case coverage.KindSecond:
		return 2
	case coverage.KindThird:
		return 3
	}
	return 0
}

// cycleCrop names the crop of a cycle when it is known: the main crop of
// the talhão for the 1ª safra; unknown otherwise (NDVI cannot tell maize
// from millet).
func cycleCrop(cy coverage.Cycle, crop grid.Crop) string {
	if cy.Main {
		return string(crop)
	}
	return ""
}

func ptr[T any](v T) *T { return &v }
