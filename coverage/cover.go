package coverage

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/manejo/manejo/internal/num"
	"github.com/manejo/manejo/spectral"
	"github.com/manejo/manejo/zarc"
)

// CellCover returns the straw cover of one cell before sowing, in percent
// (0–100), read from its readings in the WindowDays days before the sowing
// day (the sowing day itself excluded). With the default EstimatorUnmix
// each reading is unmixed into green, straw and soil fractions and the
// straw fraction is averaged over the window's days (interpolated between
// readings; readings up to AnchorDays outside the window anchor its edges),
// see docs/coverage.md. With EstimatorMedian, EstimatorMin (Zheng et al.
// 2012) or EstimatorMean, that NDTI of the readings with NDVI below MaxNDVI
// is mapped linearly from BareNDTI (0 %) to StrawNDTI (100 %). nObs counts the readings used inside
// the window; ok is false (and pct NaN) when there are none.
func CellCover(obs []Obs, sowing time.Time, p Params) (pct float64, nObs int, ok bool) {
	p = p.withDefaults()
	return cellCover(obs, zarc.Day(sowing), p, nil)
}

func cellCover(obs []Obs, sow time.Time, p Params, buf []float64) (float64, int, bool) {
	from := sow.AddDate(0, 0, -p.WindowDays)
	vals := buf[:0]
	if p.Estimator == EstimatorUnmix {
		return unmixCover(obs, from, sow, p)
	}
	for _, o := range obs {
		d := zarc.Day(o.Date)
		if d.Before(from) || !d.Before(sow) {
			continue
		}
		if !finite(o.NDVI) || !finite(o.NDTI) || o.NDVI >= p.MaxNDVI {
			continue
		}
		vals = append(vals, o.NDTI)
	}
	if len(vals) == 0 {
		return math.NaN(), 0, false
	}
	var v float64
	switch p.Estimator {
	case EstimatorMin:
		v = vals[0]
		for _, x := range vals[1:] {
			v = math.Min(v, x)
		}
	case EstimatorMean:
		for _, x := range vals {
			v += x
		}
		v /= float64(len(vals))
	default:
		sort.Float64s(vals)
		v = num.Median(vals)
	}
	pct := 100 * (v - p.BareNDTI) / (p.StrawNDTI - p.BareNDTI)
	return math.Max(0, math.Min(100, pct)), len(vals), true
}

// MedianSeries returns the talhão series: for each day with readings, the
// median over cells of the finite NDVI values and, separately, of the finite
// NDTI values (NaN when no cell has one), sorted by date.
func MedianSeries(cells [][]Obs) []Obs {
	type acc struct{ ndvi, ndti []float64 }
	by := map[time.Time]*acc{}
	for _, c := range cells {
		for _, o := range c {
			d := zarc.Day(o.Date)
			a := by[d]
			if a == nil {
				a = &acc{}
				by[d] = a
			}
			if finite(o.NDVI) {
				a.ndvi = append(a.ndvi, o.NDVI)
			}
			if finite(o.NDTI) {
				a.ndti = append(a.ndti, o.NDTI)
			}
		}
	}
	out := make([]Obs, 0, len(by))
	for d, a := range by {
		o := Obs{Date: d, NDVI: math.NaN(), NDTI: math.NaN()}
		if len(a.ndvi) > 0 {
			sort.Float64s(a.ndvi)
			o.NDVI = num.Median(a.ndvi)
		}
		if len(a.ndti) > 0 {
			sort.Float64s(a.ndti)
			o.NDTI = num.Median(a.ndti)
		}
		out = append(out, o)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Date.Before(out[j].Date) })
	return out
}

// SeasonCover is the straw-cover reading of one agricultural year
// (seasons.parquet; SINM interpretacoesCoberturaSolo dated at the sowing).
type SeasonCover struct {
	Season Season
	Sowing Sowing  // zero Date when no sowing was found
	Cycles []Cycle // every crop cycle of the year (SINM interpretacoesCultura)
	// WindowStart and WindowEnd bound the reading days [WindowStart,
	// WindowEnd): the WindowDays days before sowing, the sowing day excluded.
	WindowStart, WindowEnd time.Time
	CoverPct               float64 // mean over cells with readings, percent; NaN when !OK
	// CoverLo and CoverHi bound CoverPct's 90 % interval from the
	// calibration's uncertainty (docs/coverage.md); NaN when !OK.
	CoverLo, CoverHi float64
	NCells           int // cells with at least one reading
	NObs             int // readings used, all cells
	OK               bool
	Reason           string // why the season is missing ("" when OK)
	// Residue says what the declared crop history gave the season's straw
	// (AssessHistory): the residue, its age and the prior straw NDTI, or
	// why it was not used; "" when nothing was declared.
	Residue string
	// Cells is the reading of each cell (in the order of Assess's cells)
	// that went into CoverPct; nil when the season has no sowing date.
	Cells []CellReading
}

// CellReading is the pre-sowing straw cover of one cell in one season:
// Pct is NaN and NObs 0 when the cell had no clear reading in the window.
type CellReading struct {
	Pct  float64
	NObs int
}

// C is indicator C of one talhão: the arithmetic mean of the three seasons'
// straw cover (Portaria 349/2026 item 6.7.1) and its Tabela 1 level.
type C struct {
	Pct float64 // percent; NaN when !OK
	// PctLo and PctHi bound Pct's 90 % interval (the seasons' intervals
	// combined, docs/coverage.md); NaN when !OK.
	PctLo, PctHi float64
	// LevelUncertain is true when the interval crosses a Tabela 1 limit
	// (30, 60 or 90 %): the level could be the neighbouring one.
	LevelUncertain bool
	Level          int // 1..4; 0 when !OK
	OK             bool
	Reason         string // why C is missing ("" when OK)
	Seasons        []SeasonCover
}

// seasonSowing returns the sowing of season and its crop cycles, found in
// the smoothed talhão series s (nil when it has too few readings); a
// declared sowing wins over the detected one, and the cycles are then
// labelled around it.
func seasonSowing(s *daily, season Season, declared map[string]Declared, crop zarc.Crop, p Params) (Sowing, []Cycle, error) {
	var sow Sowing
	var cycles []Cycle
	var err error
	if s != nil {
		sow, cycles, err = detect(s, season, crop, p)
	} else {
		err = fmt.Errorf("detect sowing %s: %w: fewer than 4 clear NDVI readings", season.Label, ErrNoCropCycle)
	}
	if d, ok := declared[season.Label]; ok {
		c := d.Crop
		if c == "" {
			c = crop
		}
		sow = Sowing{Date: zarc.Day(d.Date), Source: SourceDeclared, Crop: c, Confidence: 1,
			Decendio: zarc.Decendio(d.Date), Reason: fmt.Sprintf("declared (line %d)", d.Line)}
		err = nil
		// The cycles are labelled around the declared crop.
		label(cycles, mainFor(cycles, sow.Date, p.lag(c)))
	}
	if s != nil {
		setCycleSowings(s, cycles, sow.Date, p)
	}
	return sow, cycles, err
}

// readSeason reads the straw cover of every cell in the window before
// sc.Sowing and sets sc's window, cells, counts and cover (OK), or its
// Reason when no cell has a clear reading. buf is scratch.
func readSeason(sc *SeasonCover, cells [][]Obs, p Params, buf []float64) {
	sow := sc.Sowing.Date
	sc.WindowStart, sc.WindowEnd = sow.AddDate(0, 0, -p.WindowDays), sow
	total := 0.0
	sc.Cells = make([]CellReading, len(cells))
	for i, cell := range cells {
		pct, n, ok := cellCover(cell, sow, p, buf)
		if !ok {
			sc.Cells[i] = CellReading{Pct: math.NaN()}
			continue
		}
		sc.Cells[i] = CellReading{Pct: pct, NObs: n}
		total += pct
		sc.NCells++
		sc.NObs += n
	}
	if sc.NCells == 0 {
		sc.Reason = fmt.Sprintf("no clear reading with NDVI < %.2f in %s..%s (the %d days before sowing %s)",
			p.MaxNDVI, sc.WindowStart.Format(time.DateOnly), sow.AddDate(0, 0, -1).Format(time.DateOnly), p.WindowDays, sow.Format(time.DateOnly))
		return
	}
	sc.CoverPct = total / float64(sc.NCells)
	sc.CoverLo, sc.CoverHi = sc.CoverPct, sc.CoverPct
	if se := cellsSE(sc.Cells, sc.CoverPct); sc.NCells > 1 {
		sc.CoverLo, sc.CoverHi = math.Max(0, sc.CoverPct-1.645*se), math.Min(100, sc.CoverPct+1.645*se)
	}
	sc.OK = true
}

// cellsSE is the standard error of the mean of the cells' covers.
func cellsSE(cells []CellReading, mean float64) float64 {
	ss, n := 0.0, 0
	for _, c := range cells {
		if c.NObs > 0 {
			ss += (c.Pct - mean) * (c.Pct - mean)
			n++
		}
	}
	if n < 2 {
		return 0
	}
	return math.Sqrt(ss / float64(n-1) / float64(n))
}

// readSeasonCalibrated is readSeason with the season's straw fitted from
// the talhão's readings (calibration.seasonStraw; the reference straw's
// prior when there is no fit): the cover is read with the posterior-mean
// straw, and its 90 % interval spans the covers read with the straws of
// the posterior (posteriorCover) and the soil's uncertainty.
func readSeasonCalibrated(sc *SeasonCover, cells [][]Obs, p Params, cal *calibration, buf []float64) {
	if cal == nil {
		readSeason(sc, cells, p, buf)
		return
	}
	fit := cal.straw(sc.Sowing.Date.AddDate(0, 0, -envelopeDays), sc.Sowing.Date)
	p.Straw = withOracleStraw(fit.Straw.Endmember(), sc.Sowing.Date)
	readSeason(sc, cells, p, buf)
	if !sc.OK {
		return
	}
	_, lo, hi, pok := posteriorCover(fit, func(e spectral.Endmember) (float64, float64, bool) {
		q := p
		q.Straw = e
		x := SeasonCover{Season: sc.Season, Sowing: sc.Sowing}
		readSeason(&x, cells, q, buf)
		return x.CoverPct, cellsSE(x.Cells, x.CoverPct), x.OK
	})
	if !pok {
		return
	}
	// The soil's NDTI: ±cal.soilSD around the fitted soil, read the same way.
	var ds [2]float64
	for i, sign := range [2]float64{-1, 1} {
		q := p
		q.Soil.NDTI += sign * cal.soilSD
		x := SeasonCover{Season: sc.Season, Sowing: sc.Sowing}
		if readSeason(&x, cells, q, buf); x.OK {
			ds[i] = x.CoverPct - sc.CoverPct
		}
	}
	up, down := math.Max(math.Max(ds[0], ds[1]), 0), math.Max(math.Max(-ds[0], -ds[1]), 0)
	dl, dh := math.Max(0, sc.CoverPct-lo), math.Max(0, hi-sc.CoverPct)
	k := cal.widening()
	sc.CoverLo = math.Max(0, sc.CoverPct-k*math.Hypot(dl, down))
	sc.CoverHi = math.Min(100, sc.CoverPct+k*math.Hypot(dh, up))
}

// Assess computes indicator C of one talhão from its cells' series
// (cells[i] is the series of cell i; NaN values are skipped), for the three
// agricultural years before contract (Season.Assessed). declared holds the
// talhão's declared sowing dates by season label (Declarations.For); they
// win over detection, which runs on the median series of the cells
// (MedianSeries). crop is the main crop. A season whose sowing cannot be
// found, or with no clear reading in its window, is missing with a reason,
// and so is C (IN 2/2025 item 2.2).
func Assess(cells [][]Obs, contract Season, declared map[string]Declared, crop zarc.Crop, p Params) C {
	return AssessHistory(cells, contract, declared, nil, crop, p)
}

// AssessHistory is Assess with the talhão's declared crop history: the
// residue of the crop that ended last before each season's sowing, and its
// age, set the prior of that season's straw spectrum (docs/coverage.md,
// "The declared residue"; SeasonCover.Residue says what was used). A nil
// history, or one that declares no residue with a published law for a
// season, reads that season exactly as Assess does. The history is used
// only where the straw is calibrated from the readings (Params leaving
// every endmember unset, EstimatorUnmix).
func AssessHistory(cells [][]Obs, contract Season, declared map[string]Declared, history History, crop zarc.Crop, p Params) C {
	if err := p.Validate(); err != nil {
		return C{Pct: math.NaN(), Reason: "C missing: " + err.Error()}
	}
	p, cal := calibrate(cells, p)
	if cal != nil && cal.fitRefused && len(history) > 0 {
		cal.explained = templatesExplain(cells, p)
	}
	if crop == "" {
		crop = zarc.Soja
	}
	med := MedianSeries(cells)
	s := smoothNDVI(med, p.Lambda, p.RobustIter)
	var out C
	var missing []string
	sum := 0.0
	buf := make([]float64, 0, 64)
	for _, season := range contract.Assessed() {
		sc := SeasonCover{Season: season, CoverPct: math.NaN(), CoverLo: math.NaN(), CoverHi: math.NaN()}
		var err error
		sc.Sowing, sc.Cycles, err = seasonSowing(s, season, declared, crop, p)
		if err != nil {
			sc.Reason = err.Error()
			if errors.Is(err, ErrNoCropCycle) || errors.Is(err, ErrNoMainCrop) {
				sc.Reason = "no sowing date: " + sc.Reason
			}
		} else {
			c, note := cal.withResidue(history, sc.Sowing.Date, p.WindowDays)
			sc.Residue = note
			readSeasonCalibrated(&sc, cells, p, c, buf)
		}
		if sc.OK {
			sum += sc.CoverPct
		} else {
			missing = append(missing, season.Label+": "+sc.Reason)
		}
		out.Seasons = append(out.Seasons, sc)
	}
	if len(missing) > 0 {
		out.Pct, out.PctLo, out.PctHi = math.NaN(), math.NaN(), math.NaN()
		out.Reason = "C missing: " + strings.Join(missing, "; ")
		return out
	}
	out.Pct = sum / float64(len(out.Seasons))
	out.Level = zarc.CLevel(out.Pct)
	out.PctLo, out.PctHi = cInterval(out.Pct, out.Seasons)
	out.LevelUncertain = zarc.CLevel(out.PctLo) != zarc.CLevel(out.PctHi)
	out.OK = true
	return out
}

// cInterval is the 90 % interval of C, the mean of the seasons' covers:
// the seasons' half-widths h combine as correlated errors,
// √(Σh² + ρ·Σ_{i≠j} hᵢhⱼ)/n with ρ = seasonCorr (the soil and the
// model are the talhão's in every season, the straw each season's own;
// docs/coverage.md).
func cInterval(c float64, seasons []SeasonCover) (lo, hi float64) {
	var sl, sh, ql, qh float64
	for _, sc := range seasons {
		dl, dh := sc.CoverPct-sc.CoverLo, sc.CoverHi-sc.CoverPct
		sl, sh, ql, qh = sl+dl, sh+dh, ql+dl*dl, qh+dh*dh
	}
	n := float64(len(seasons))
	comb := func(s, q float64) float64 { return math.Sqrt(math.Max(0, q+seasonCorr*(s*s-q))) / n }
	return math.Max(0, c-comb(sl, ql)), math.Min(100, c+comb(sh, qh))
}
