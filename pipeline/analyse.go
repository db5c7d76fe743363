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
	"github.com/manejo/manejo/sinm"
	"github.com/manejo/manejo/tillage"
	"github.com/manejo/manejo/zarc"
)

// fieldOut is everything one talhão contributes to the outputs.
type fieldOut struct {
	ID        string
	Cells     []export.CellRow
	Obs       []export.ObsRow
	Events    []export.EventRow
	Seasons   []export.SeasonRow
	CellCover []export.CellCoverRow
	Cycles    []export.CycleRow
	Indicator export.IndicatorRow
	Payload   []byte // SINM JSON; nil when it could not be built
	// Failure is set when the talhão failed as a whole.
	Failure string
	// Incomplete is set, with the reason, when an input of the talhão
	// failed transiently (the DEM): no rows, no payload; a later run
	// reads it again.
	Incomplete string
}

// cellSeries is the observations of one cell, by date, one per date
// (several collections on a date collapse to the first valid one).
type cellSeries struct {
	dates      []time.Time
	ndvi, ndti []float64
	// refl are the surface reflectances Red, NIR, SWIR1, SWIR2 of each
	// date (NaN when not read), for coverage's talhão soil fit.
	refl [][4]float64
	// src is, for each date, the index in the talhão's observations of the
	// reading analysed (its observations.parquet row).
	src []int
	// coll is, for each date, the sensor of that reading: its collection,
	// with the Landsat platform when the item id names it (sensorOf).
	coll []string
}

// seriesByCell groups a talhão's observations by cell, sorted by date.
func seriesByCell(g grid.Grid, obs []series.Obs) map[string]*cellSeries {
	type key struct {
		cell string
		day  time.Time
	}
	best := map[key]int{}
	for i, o := range obs {
		k := key{o.CellID, o.Date}
		j, seen := best[k]
		if !seen || (!valid(obs[j].NDVI) && valid(o.NDVI)) || (!valid(obs[j].NDTI) && valid(o.NDTI) && valid(o.NDVI)) {
			best[k] = i
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
		o := obs[best[k]]
		cs.src = append(cs.src, best[k])
		cs.coll = append(cs.coll, sensorOf(o))
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
func (s *stage) analyse(ctx context.Context, g grid.Grid, obs []series.Obs, gap series.Gap, reads *slopeReads, pf *tillage.Portfolio) fieldOut {
	out := fieldOut{ID: g.Field.ID}
	cells, err := cellRows(g, s.in.points)
	if err != nil {
		out.Failure = err.Error()
		return out
	}
	out.Cells = cells
	out.Obs = ObsRows(obs)
	seen := observedSpan(obs)
	ind := indicatorBase(g, seen)
	var reasons []export.Reason
	switch {
	case gap.Coarse && gap.Scenes < 2: // no revisit to speak of: say how many scenes there were
		reasons = append(reasons, export.Reason{Subject: export.SubjectSeries, Code: export.CodeCoarseRevisit,
			Detail: fmt.Sprintf("%d scene date(s) cover the talhão; IN 6.5 asks for a revisit of 16 days or less", gap.Scenes)})
	case gap.Coarse:
		reasons = append(reasons, export.Reason{Subject: export.SubjectSeries, Code: export.CodeCoarseRevisit,
			Detail: fmt.Sprintf("revisit %.0f days is coarser than 16 days (IN 6.5)", gap.RevisitDays)})
	}
	for _, why := range sinm.CheckIdentifiers(g.Field) { // invalid CPF/CNPJ left out of the payload; never the number
		reasons = append(reasons, export.Reason{Code: export.CodeInvalidID, Detail: why})
	}
	byCell := seriesByCell(g, obs)
	reasons = append(reasons, s.assessT(g, byCell, seen.first, pf, &out, &ind)...)
	reasons = append(reasons, s.assessC(g, byCell, seen.first, &out, &ind)...)
	slopeReasons, retry := s.assessSlope(ctx, g, reads, &ind)
	if retry != "" {
		return fieldOut{ID: g.Field.ID, Incomplete: retry}
	}
	reasons = append(reasons, slopeReasons...)

	ind.Status = export.StatusOK
	if ind.TLevel == nil || ind.CLevel == nil || ind.SlopeMeanPct == nil {
		ind.Status = export.StatusPartial
	}
	ind.Reasons = export.ReasonTexts(reasons)
	out.Indicator = ind

	payload, err := s.payload(g, out)
	if err != nil {
		why := export.Reason{Subject: export.SubjectSINM, Code: export.CodePayloadFailed, Detail: err.Error()}
		out.Indicator.Reasons = append(out.Indicator.Reasons, why.String())
		out.Indicator.Status = export.StatusPartial
	} else {
		out.Payload = payload
	}
	return out
}

// cellRows converts the cells of a grid into rows; points (an observation
// table's, without polygons) get their centre and border only.
func cellRows(g grid.Grid, points bool) ([]export.CellRow, error) {
	rows := make([]export.CellRow, 0, len(g.Cells))
	for _, c := range g.Cells {
		if points {
			rows = append(rows, export.CellRow{FieldID: g.Field.ID, CellID: c.ID, CentreLon: c.Centre[0], CentreLat: c.Centre[1], Border: c.Border})
			continue
		}
		row, err := export.NewCellRow(c)
		if err != nil {
			return nil, fmt.Errorf("cell %s: %v", c.ID, err)
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// observed is what a talhão's clear observations span: the collections that
// gave them and the first and last dates.
type observed struct {
	sensors     map[string]bool
	first, last time.Time
}

// observedSpan finds the collections and dates of the clear observations.
func observedSpan(obs []series.Obs) observed {
	seen := observed{sensors: map[string]bool{}}
	for _, o := range obs {
		if !valid(o.NDVI) {
			continue
		}
		seen.sensors[o.Collection] = true
		if seen.first.IsZero() || o.Date.Before(seen.first) {
			seen.first = o.Date
		}
		if o.Date.After(seen.last) {
			seen.last = o.Date
		}
	}
	return seen
}

// indicatorBase is the indicator row of a talhão before T, C and slope.
func indicatorBase(g grid.Grid, seen observed) export.IndicatorRow {
	ind := export.IndicatorRow{
		FieldID: g.Field.ID, Crop: string(g.Field.Crop), AreaHa: g.AreaHa, CellSizeHa: g.CellSizeHa,
		NCells: int32(len(g.Cells)), MODISEligible: g.MODISEligible,
		PeriodStart: zarc.OptDate(seen.first), PeriodEnd: zarc.OptDate(seen.last),
	}
	for c := range seen.sensors {
		ind.Sensors = append(ind.Sensors, c)
	}
	sort.Strings(ind.Sensors)
	return ind
}

// assessT detects the tillage events up to AsOf and sets T; first is the
// first clear observation (zero when there is none), pf what the other
// talhões of its portfolio say (portfolios; nil: nothing). It returns the
// reasons T is missing.
func (s *stage) assessT(g grid.Grid, byCell map[string]*cellSeries, first time.Time, pf *tillage.Portfolio, out *fieldOut, ind *export.IndicatorRow) []export.Reason {
	if first.IsZero() {
		return []export.Reason{noObservation(export.SubjectT)}
	}
	cfg := s.in.cfg
	tcells := tillageCells(g, byCell)
	var kept []tillage.Event
	// The talhão's own soil, the calibration coverage reads with too (issue 17).
	tp := tillage.Calibrate(tcells, cfg.Tillage).WithPortfolio(pf)
	for _, e := range tillage.Detect(tcells, tp) {
		if !e.Date.After(cfg.AsOf) {
			kept = append(kept, e)
		}
	}
	for _, e := range kept {
		out.Events = append(out.Events, export.EventRow{
			FieldID: g.Field.ID, Date: zarc.DateOf(e.Date), Before: zarc.DateOf(e.Before), After: zarc.DateOf(e.After),
			CellFraction: e.CellFraction, NCells: int32(e.NCells), MagnitudeSigma: float32(e.MagnitudeSigma), Operation: export.OptString(e.Operation),
			Test: e.Test, NInterior: int32(e.NInterior), NDTIDrop: export.OptFloat32(e.NDTIDrop), NDTINoise: export.OptFloat32(e.NDTINoise),
			DatesBefore: int32(e.DatesBefore), DatesAfter: int32(e.DatesAfter), Sensors: e.Sensors,
		})
	}
	tres := tillage.Years(kept, first, cfg.AsOf)
	if tres.Censored {
		ind.TCensored = true
		ind.TYearsMin = new(float64(tres.MinYears))
	} else {
		ind.TYears = new(float64(tres.Years))
	}
	if tres.LastEvent != nil {
		ind.LastEvent = zarc.OptDate(*tres.LastEvent)
	}
	var why []export.Reason
	if len(kept) == 0 {
		if s, ok := strongestStep(tcells, tp, cfg.AsOf); ok {
			why = append(why, export.Reason{Subject: export.SubjectT, Code: export.CodeNearestStep, Detail: s})
		}
		if s, ok := windowResidue(tcells, tp, cfg.AsOf); ok {
			why = append(why, export.Reason{Subject: export.SubjectT, Code: export.CodeNearestLevel, Detail: s})
		}
	}
	if tres.Level > 0 {
		ind.TLevel = new(int32(tres.Level))
		return why
	}
	return append([]export.Reason{{Subject: export.SubjectT, Code: export.CodeUndecided, Detail: tres.Reason}}, why...)
}

// noObservation is the reason of T or C for a talhão without a clear
// observation in the archive.
func noObservation(sub export.Subject) export.Reason {
	return export.Reason{Subject: sub, Code: export.CodeNoObservation, Detail: "no clear observation in the archive"}
}

// strongestStep says how near a talhão without an event came to one: the
// largest drop of its median NDTI on a short piece of its series (a
// window of months), against the noise it would have been judged by
// (tillage.StrongestStep); false when the series has no such piece to
// measure (a long history is judged by its own drops).
func strongestStep(cells []tillage.Cell, p tillage.Params, asOf time.Time) (string, bool) {
	b, ok := tillage.StrongestStep(cells, p, asOf)
	if !ok {
		return "", false
	}
	return fmt.Sprintf("no tillage event; the largest NDTI step of the short series, on %s (after %s), is %.1f standard errors (an event needs %.0f): median NDTI %.3f → %.3f, one date's noise %.3f",
		b.After.Format(time.DateOnly), b.Before.Format(time.DateOnly), b.MagnitudeSigma, tillage.StepK, b.PreLevel, b.PostLevel, b.Sigma), true
}

// windowResidue says how near a talhão without an event came to a
// low-residue one: the residue cover of its last short window against
// the bound its wetting response set, and the portfolio's verdict when its
// other talhões were read (tillage.WindowResidue); false when the series
// has no short window to read.
func windowResidue(cells []tillage.Cell, p tillage.Params, asOf time.Time) (string, bool) {
	r, ok := tillage.WindowResidue(cells, p, asOf)
	if !ok {
		return "", false
	}
	return residueReason(r), true
}

// residueReason is windowResidue's sentence for the residue cover r.
func residueReason(r tillage.Residue) string {
	s := fmt.Sprintf("the residue cover of the short series %s..%s is %.0f %% ± %.0f %% of the ground over %d bare dates",
		r.First.Format(time.DateOnly), r.Last.Format(time.DateOnly), 100*r.Share, 100*r.SE, r.Dates)
	switch {
	case !r.WetJudged:
		s += fmt.Sprintf(" (its answer to wetting not read: a low-residue event needs it below %.0f %% by more than %.0f standard error)", 100*r.Bound, tillage.LowResidueZ)
	case r.Bound == 0:
		s += fmt.Sprintf(" (its NDTI follows its wet dates as straw's does, slope %.2f above %.2f: no low-residue event)", r.Wet, tillage.WetStrawSlope)
	default:
		s += fmt.Sprintf(" (it answers wetting as soil does, slope %.2f: a low-residue event needs it below %.0f %% by more than %.0f standard error)", r.Wet, 100*r.Bound, tillage.LowResidueZ)
	}
	switch {
	case r.PeersJudged && r.PeersAlike:
		s += "; the portfolio's other talhões read as little residue over the window (a level they share is no revolving)"
	case r.PeersJudged:
		s += "; it lies below the portfolio's other talhões' level"
	default:
		s += "; no portfolio read over the window"
	}
	return s
}

// assessC finds the seasons, sowings and cycles and sets C, with each
// cell's pre-sowing cover; first is the first clear observation (zero when
// there is none). It returns the reasons C is missing: without a clear
// observation, that one reason once (not each season's failure to find a
// crop cycle in no readings).
func (s *stage) assessC(g grid.Grid, byCell map[string]*cellSeries, first time.Time, out *fieldOut, ind *export.IndicatorRow) []export.Reason {
	id := g.Field.ID
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
	cres := coverage.AssessHistory(ccells, s.in.cfg.Season, declared, s.in.history[id], g.Field.Crop, s.in.cfg.Coverage)
	setFractions(out.Obs, g, byCell, readingFractions(ccells, s.in.cfg.Coverage))
	for i, sc := range cres.Seasons {
		out.Seasons = append(out.Seasons, seasonRow(id, g.Field.Crop, sc))
		out.CellCover = append(out.CellCover, cellCoverRows(id, g, sc)...)
		for _, cy := range sc.Cycles {
			out.Cycles = append(out.Cycles, export.CycleRow{
				FieldID: id, Season: sc.Season.Label, Cycle: cycleNumber(cy.Kind), Kind: cy.Kind, Crop: export.OptString(cycleCrop(cy, g.Field.Crop)),
				StartDate: zarc.DateOf(cy.Start), EndDate: zarc.DateOf(cy.End), SowingDate: zarc.OptDate(cy.Sowing), PeakNDVI: new(float32(cy.PeakNDVI)),
			})
		}
		ind.CSeasons = append(ind.CSeasons, sc.Season.Label)
		if sc.OK {
			switch i {
			case 0:
				ind.CSeason1Pct = new(sc.CoverPct)
			case 1:
				ind.CSeason2Pct = new(sc.CoverPct)
			case 2:
				ind.CSeason3Pct = new(sc.CoverPct)
			}
		}
	}
	switch {
	case !cres.OK && first.IsZero():
		return []export.Reason{noObservation(export.SubjectC)}
	case !cres.OK:
		return []export.Reason{{Subject: export.SubjectC, Code: export.CodeMissing, Detail: cres.Reason}}
	}
	ind.CPct = new(cres.Pct)
	ind.CLevel = new(int32(cres.Level))
	ind.CPctLo, ind.CPctHi, ind.CLevelUncertain = new(cres.PctLo), new(cres.PctHi), new(cres.LevelUncertain)
	return nil
}

// readingFractions unmixes each reading of the talhão's cells (as passed
// to coverage.Assess) into green-canopy, straw and bare-soil fractions
// (0..1, NaN when the reading cannot be unmixed) with the talhão's
// calibrated endmembers, the ones its straw cover is read with. It is the
// one call to coverage's per-reading unmixing.
func readingFractions(ccells [][]coverage.Obs, p coverage.Params) [][][3]float64 {
	fr := coverage.UnmixReadings(ccells, p)
	out := make([][][3]float64, len(fr))
	for i, cell := range fr {
		out[i] = make([][3]float64, len(cell))
		for j, f := range cell {
			out[i][j] = [3]float64{f.Green, f.Straw, f.Soil}
		}
	}
	return out
}

// setFractions writes the fractions of each analysed reading, in percent,
// into its observations row (rows[i] is the talhão's i-th observation).
func setFractions(rows []export.ObsRow, g grid.Grid, byCell map[string]*cellSeries, fr [][][3]float64) {
	for i, c := range g.Cells {
		cs := byCell[c.ID]
		for j, k := range cs.src {
			f := fr[i][j]
			if k >= len(rows) || masked(rows[k]) || !finite3(f) {
				continue
			}
			rows[k].GreenPct, rows[k].StrawPct, rows[k].SoilPct = pct32(f[0]), pct32(f[1]), pct32(f[2])
		}
	}
}

// masked reports whether a row's mask reason drops it; the no-qa flag
// (--allow-missing-qa) keeps the values, so its row gets fractions too.
func masked(r export.ObsRow) bool {
	return r.MaskReason != nil && *r.MaskReason != string(series.FlaggedNoQA)
}

func finite3(f [3]float64) bool {
	for _, v := range f {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
	}
	return true
}

func pct32(v float64) *float32 { return new(float32(100 * v)) }

// seasonRow converts one season's straw-cover reading into a row.
func seasonRow(id string, crop zarc.Crop, sc coverage.SeasonCover) export.SeasonRow {
	row := export.SeasonRow{FieldID: id, Season: sc.Season.Label, Crop: string(crop), NCells: int32(sc.NCells), NObs: int32(sc.NObs), Reason: export.OptString(sc.Reason)}
	if !sc.Sowing.Date.IsZero() {
		row.SowingDate = zarc.OptDate(sc.Sowing.Date)
		row.SowingSource = export.OptString(sc.Sowing.Source)
		if sc.Sowing.Source != coverage.SourceDeclared {
			row.SowingConfidence = new(float32(sc.Sowing.Confidence))
		}
		row.Decendio = new(int32(sc.Sowing.Decendio))
		row.WindowStart = zarc.OptDate(sc.WindowStart)
		row.WindowEnd = zarc.OptDate(sc.WindowEnd.AddDate(0, 0, -1))
		row.CoverDate = zarc.OptDate(sc.Sowing.Date.AddDate(0, 0, -1))
	}
	if sc.OK {
		row.CoverPct = new(sc.CoverPct)
	}
	if sc.Residue != "" {
		row.StrawPrior = export.OptString(sc.Residue)
	}
	return row
}

// cellCoverRows are the per-cell readings whose mean is the season's
// cover, one row per cell; none when the season had no sowing date.
func cellCoverRows(id string, g grid.Grid, sc coverage.SeasonCover) []export.CellCoverRow {
	if len(sc.Cells) != len(g.Cells) {
		return nil
	}
	rows := make([]export.CellCoverRow, len(g.Cells))
	for i, c := range g.Cells {
		r := sc.Cells[i]
		rows[i] = export.CellCoverRow{FieldID: id, CellID: c.ID, Season: sc.Season.Label, NObs: int32(r.NObs)}
		if !math.IsNaN(r.Pct) {
			rows[i].CoverPct = new(r.Pct)
		}
	}
	return rows
}

// assessSlope sets the talhão's slope: read in the background while its
// batch was sampled (reads), else read from the DEM now. It returns the
// reasons slope is missing and its warnings; retry is set instead, with
// the reason, when the DEM failed transiently (demTransient): the talhão
// is then incomplete, not partial, so its batch is computed again by the
// next run (review #6; a partial talhão was committed and never retried).
func (s *stage) assessSlope(ctx context.Context, g grid.Grid, reads *slopeReads, ind *export.IndicatorRow) (reasons []export.Reason, retry string) {
	if pct, ok := s.in.slopes[g.Field.ID]; ok { // an observation table's slope_pct
		tableSlope(pct, ind)
		return nil, ""
	}
	if s.in.dem == nil {
		return []export.Reason{{Subject: export.SubjectSlope, Code: export.CodeNoDEM, Detail: "no usable DEM (--dem)"}}, ""
	}
	r, ok := reads.get(g.Field.ID)
	if !ok && s.in.demStuck.Load() {
		why := export.Reason{Subject: export.SubjectSlope, Code: export.CodeDEMStuck,
			Detail: "the DEM stopped answering (an earlier read passed its deadline, storage.CallTimeout); slope not read"}
		return nil, incompleteSlope(why)
	}
	if !ok {
		r.sr, r.err = s.readSlope(ctx, g.Field)
	}
	sr, err := r.sr, r.err
	if err != nil {
		why := export.Reason{Subject: export.SubjectSlope, Code: export.CodeSlopeFailed, Detail: err.Error()}
		if demTransient(err) {
			return nil, incompleteSlope(why)
		}
		return []export.Reason{why}, ""
	}
	ind.SlopeMeanPct, ind.SlopeMedianPct, ind.SlopeP90Pct = new(sr.MeanPct), new(sr.MedianPct), new(sr.P90Pct)
	ind.ContourRequired = new(sr.ContourRequired)
	ind.DeclividadeMedia = new(int32(sr.DeclividadeMedia))
	for _, w := range sr.Warnings {
		reasons = append(reasons, export.Reason{Subject: export.SubjectSlope, Code: export.CodeSlopeWarning, Detail: w})
	}
	return reasons, ""
}

// incompleteSlope is the reason of a talhão incomplete for its slope.
func incompleteSlope(why export.Reason) string {
	return why.String() + "; the DEM failed transiently, run again to read it"
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
func cycleCrop(cy coverage.Cycle, crop zarc.Crop) string {
	if cy.Main {
		return string(crop)
	}
	return ""
}
