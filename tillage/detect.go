package tillage

import (
	"math"
	"sort"
	"time"

	"github.com/manejo/manejo/internal/num"
	"github.com/manejo/manejo/spectral"
)

// Obs is one acquisition of a cell: the date and the two indices sampled at
// the cell centre. NDVI and NDTI are unitless (-1..1); NaN means no clear
// value that date (masked cloud, shadow, no scene).
type Obs struct {
	Date       time.Time
	NDVI, NDTI float64
	// Red, NIR, SWIR1 and SWIR2 are the surface reflectances (0..1) the
	// indices were made of, when the caller has them (0 or NaN: not read);
	// Calibrate fits the talhão's soil from them.
	Red, NIR, SWIR1, SWIR2 float64
	// Sensor names the collection the reading came from (e.g.
	// landsat-c2-l2, sentinel-2-l2a; "" when unknown), with the platform
	// when one collection holds several (landsat-c2-l2/LE07): the step
	// test removes each sensor's offset, and events list the sensors they
	// were seen by.
	Sensor string
}

// Break is a structural break in one cell's series. Before is the last
// clear observation before the break, After the first clear observation
// after it, and Date equals After: the change happened in (Before, After].
type Break struct {
	Date, Before, After time.Time
	// MagnitudeSigma is the size of the change. For tillage breaks
	// (DetectCell) it is z, the rise of the soil level (or the drop of the
	// straw share of the ground, second test) in standard errors of the
	// difference of the two levels (see Params.K), always > K; for generic
	// breaks (Breaks) it is
	// (PostLevel − PreLevel)/σ, signed, negative for a drop.
	MagnitudeSigma float64
	// Sigma is the robust standard deviation of one observation around the
	// series' local trend (reweighted MAD, see robustSigma), floored at
	// Params.MinSigma, in the units of the series (soil fraction, or straw
	// share r for the straw-drop test per unit of ground in view — an
	// observation under green fraction g has σ/(1−g) — for DetectCell;
	// input units for Breaks).
	Sigma float64
	// Test names the test that found the break: TestSoil, TestStrawShare,
	// TestMedianNDTI or TestNDTIStep ("" for Breaks and the baseline).
	Test string
	// PreLevel and PostLevel are the levels compared. DetectCell: median
	// soil fraction of up to PreObs observations before, mean ground soil
	// share of up to PersistObs observations from the break (weighted by
	// the ground in view, residue trimmed: see level); for the straw-drop
	// test both are ground soil shares 1 − r (such means of r).
	// Breaks: median before, mean of the first ConfirmObs+1 observations
	// after.
	PreLevel, PostLevel float64
}

// newUnmixer returns the unmixer of p's endmembers, spectral.NewDry as in
// coverage (straw and soil read on one dry line, so that NDVI variation
// among dry residues and soils is not read as green canopy; docs/tillage.md);
// false when they cannot be unmixed.
func newUnmixer(p Params) (spectral.Unmixer, bool) {
	if plainUnmix {
		return spectral.New(p.Green, p.Straw, p.Soil)
	}
	return spectral.NewDry(p.Green, p.Straw, p.Soil)
}

// Fractions unmixes one observation into green-canopy, straw and bare-soil
// fractions with straw and soil on one dry line (newUnmixer; each 0..1
// inside the endmember triangle, summing to 1; values outside 0..1 mean
// the observation lies outside it). It returns NaNs for
// NaN input or collinear endmembers.
func (p Params) Fractions(ndvi, ndti float64) (green, straw, soil float64) {
	u, ok := newUnmixer(p)
	if !ok || math.IsNaN(ndvi) || math.IsNaN(ndti) {
		return math.NaN(), math.NaN(), math.NaN()
	}
	return u.Fractions(ndvi, ndti)
}

// clearObs is one usable observation after unmixing.
type clearObs struct {
	date         time.Time
	green, soil  float64
	straw, value float64
	// noise is the observation's noise scale relative to σ (0 means 1):
	// r is read through the ground not hidden by canopy, so its noise grows
	// as 1/(1 − green).
	noise float64
}

// DetectCell finds the tillage breaks of one cell (Portaria 349, 6.8):
// structural breaks in the bare-soil fraction whose rise exceeds K standard
// errors computed from the cell's own historical σ, validated by NDTI (the
// unmixed soil fraction is driven by NDTI, since soil and straw share an
// NDVI): the first post-break observation shows exposed soil (soil fraction
// ≥ ExposedMin, or ≥ BareSoilMin when a canopy was seen in the 45 days
// before) with little canopy (green ≤ MaxGreen), the next ConfirmObs clear
// observations still show exposed ground, and the bare spell stays exposed.
// Or, second test, the straw share of the ground not hidden by canopy, r =
// straw/(straw+soil), drops by more than K standard errors of the cell's
// own σ of r to a fraction of its level (chisel passes that leave 30–50 %
// of the straw; ploughing first seen through an emerging crop), measured
// from a level seen on at least two dates (a single date can be the
// standing dry canopy before a harvest) and confirmed the same way (see
// strawDropAt).
// Harvest and desiccation turn green into straw, not soil, and do not fire;
// green-up lowers the soil fraction and leaves r unchanged; a single
// unflagged cloud is not confirmed. Observations with a NaN index, or far
// outside the endmember triangle, are skipped. obs need not be sorted;
// dates are used as given. The result is in date order; nil when there is
// no break or the parameters are invalid.
func DetectCell(obs []Obs, p Params) []Break {
	if p.Validate() != nil {
		return nil
	}
	p.tune = p.tune.withDefaults()
	u, _ := newUnmixer(p)
	cs := prepare(obs, p, u)
	return scanTillage(cs, p, newSigmas(cs, p))
}

// sigmas are a cell's robust noise levels: of its soil fraction (all clear
// observations) and of the straw share of its ground r = straw/(straw+soil)
// (observations with canopy ≤ tuning.rMaxGreen), the latter per unit of ground in
// view: the σ of r on an observation with green fraction g is
// sigmas.r/(1 − g) (groundScale).
type sigmas struct{ soil, r float64 }

func newSigmas(cs []clearObs, p Params) sigmas {
	buf := make([]float64, 0, len(cs))
	sg := sigmas{soil: robustSigma(cs, p.MinSigma, buf)}
	rs := make([]clearObs, 0, len(cs))
	for _, c := range cs {
		if c.green <= p.tune.rMaxGreen {
			rs = append(rs, clearObs{date: c.date, value: c.strawShare(), noise: c.groundScale()})
		}
	}
	sg.r = robustSigma(rs, p.MinSigma, buf)
	return sg
}

// prepare unmixes the clear observations and sorts them by date, skipping
// NaN/Inf values and observations far outside the endmember triangle
// (unflagged residue).
func prepare(obs []Obs, p Params, u spectral.Unmixer) []clearObs {
	cs := make([]clearObs, 0, len(obs))
	for _, o := range obs {
		if math.IsNaN(o.NDVI) || math.IsNaN(o.NDTI) || math.IsInf(o.NDVI, 0) || math.IsInf(o.NDTI, 0) {
			continue
		}
		g, s, b := u.Fractions(o.NDVI, o.NDTI)
		if math.IsNaN(g) || g < -p.Outside || s < -p.Outside || b < -p.Outside ||
			g > 1+p.Outside || s > 1+p.Outside || b > 1+p.Outside {
			continue
		}
		cs = append(cs, clearObs{date: o.Date, green: g, straw: s, soil: b, value: b})
	}
	if !sort.SliceIsSorted(cs, func(i, j int) bool { return cs[i].date.Before(cs[j].date) }) {
		sort.SliceStable(cs, func(i, j int) bool { return cs[i].date.Before(cs[j].date) })
	}
	return cs
}

// Breaks is the generic univariate detector (no NDTI validation): it finds
// level shifts in values (any index, e.g. NDVI) larger than K times the
// series' robust σ: the first post-break observation and the next
// ConfirmObs clear ones all lie beyond K·σ from the pre-break level (median
// of up to PreObs observations within PreWindowDays), on the same side. The
// next break is sought from PreObs observations later. NaN values are skipped; dates and values must have equal length
// (nil otherwise). Each Break's MagnitudeSigma is signed (negative for a
// drop). It is not a tillage detector: a harvest is a break here.
func Breaks(dates []time.Time, values []float64, p Params) []Break {
	if len(dates) != len(values) || p.Validate() != nil {
		return nil
	}
	cs := make([]clearObs, 0, len(values))
	for i, v := range values {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		cs = append(cs, clearObs{date: dates[i], value: v})
	}
	if !sort.SliceIsSorted(cs, func(i, j int) bool { return cs[i].date.Before(cs[j].date) }) {
		sort.SliceStable(cs, func(i, j int) bool { return cs[i].date.Before(cs[j].date) })
	}
	return scanGeneric(cs, p)
}

// robustSigma returns the robust standard deviation of one observation's
// noise around the cell's local trend, floored at min: each interior clear
// observation is compared with the straight line through its two
// neighbours (dates as weights), and the residual is scaled to unit
// variance (with each observation's noise scale, see clearObs.noise).
// The σ is a reweighted MAD: s₀ = 1.4826·MAD of the residuals, then the
// root mean square of the residuals within sigmaTrim·s₀ of their median,
// corrected for the truncation (a one-step reweighting, as in robust
// regression: as resistant as the MAD to the few genuine jumps — harvest,
// breaks, residue — and about twice as efficient on Gaussian noise, so a
// cell's σ scatters less around its true noise). Seasonal trends
// (green-up, senescence, straw decay) cancel in the line.
func robustSigma(cs []clearObs, min float64, buf []float64) float64 {
	if len(cs) < 5 {
		return min
	}
	r := buf[:0]
	for i := 1; i+1 < len(cs); i++ {
		span := cs[i+1].date.Sub(cs[i-1].date).Hours()
		w := 0.5
		if span > 0 {
			w = cs[i+1].date.Sub(cs[i].date).Hours() / span
		}
		line := w*cs[i-1].value + (1-w)*cs[i+1].value
		a, b, c := cs[i-1].noiseScale(), cs[i].noiseScale(), cs[i+1].noiseScale()
		r = append(r, (cs[i].value-line)/math.Sqrt(b*b+w*w*a*a+(1-w)*(1-w)*c*c))
	}
	med := num.Median(r)
	for i := range r {
		r[i] = math.Abs(r[i] - med)
	}
	s0 := 1.4826 * num.Median(r)
	if !(s0 > 0) {
		return min
	}
	var ss float64
	var n int
	for _, e := range r {
		if e <= sigmaTrim*s0 {
			ss += e * e
			n++
		}
	}
	s := math.Sqrt(ss / float64(n) / truncVar(sigmaTrim))
	if !(s > min) {
		return min
	}
	return s
}

// sigmaTrim is the cut-off of robustSigma's reweighting step, in units of
// the MAD-based σ.
const sigmaTrim = 3.0

// truncVar is the variance of a standard normal truncated to ±c.
func truncVar(c float64) float64 {
	phi := math.Exp(-c*c/2) / math.Sqrt(2*math.Pi)
	return 1 - 2*c*phi/math.Erf(c/math.Sqrt2)
}

// noiseScale is c.noise, or 1 when unset.
func (c clearObs) noiseScale() float64 {
	if c.noise > 0 {
		return c.noise
	}
	return 1
}

// groundScale is the noise scale of a share of the ground not hidden by
// canopy (r, groundSoil): the pixel's fraction noise divided by the share
// of ground in view, 1/(1 − green) (capped at 20): the canopy hides part of
// the ground the share is read through (docs/tillage.md shows the measured
// noise following it).
func (c clearObs) groundScale() float64 { return 1 / math.Max(0.05, 1-math.Max(0, c.green)) }

// preLevel returns the median of up to PreObs clear observations ending at
// cs[j-1] and within PreWindowDays of it, and how many it used.
func preLevel(cs []clearObs, j int, p Params, buf []float64) (float64, int) {
	v := buf[:0]
	window := time.Duration(p.PreWindowDays) * 24 * time.Hour
	last := cs[j-1].date
	for i := j - 1; i >= 0 && len(v) < p.PreObs; i-- {
		if last.Sub(cs[i].date) > window {
			break
		}
		v = append(v, cs[i].value)
	}
	return num.Median(v), len(v)
}

// groundSoil is the soil share of the ground not hidden by green canopy,
// b/(1−g): it stays high under an emerging crop sown into tilled soil and
// stays low under one sown into straw.
func (c clearObs) groundSoil() float64 {
	if c.green >= 1 {
		return math.NaN()
	}
	return c.soil / (1 - math.Max(0, c.green))
}

// maxGreenSeen is the green fraction above which the canopy hides the ground
// too much for an observation to confirm or deny exposed soil.
const maxGreenSeen = 0.6

// scanTillage walks the clear observations (value = soil fraction) and
// reports validated tillage breaks.
func scanTillage(cs []clearObs, p Params, sg sigmas) []Break {
	n := len(cs)
	if n < 2 {
		return nil
	}
	buf := make([]float64, 0, n)
	post := make([]float64, 0, p.PersistObs+p.ConfirmObs+1)
	var out []Break
	armed := true // re-armed once the ground is covered again
	last := -1    // index of the last break's first post-break observation
	window := time.Duration(p.PreWindowDays) * 24 * time.Hour
	for j := 1; j < n; j++ {
		if !armed {
			if c := cs[j]; c.green > maxGreenSeen || c.groundSoil() < p.BareSoilMin {
				armed = true
			}
			continue
		}
		// No pre-break level may reach back over the last break.
		if last >= 0 && j-p.PreObs < last && cs[j-1].date.Sub(cs[last].date) <= window {
			continue
		}
		b, ok := breakAt(cs, j, p, sg, buf, post)
		if !ok {
			continue
		}
		// The break is the best split among the validated candidates that
		// follow (bfast's optimal breakpoint, in small): a noisy first bare
		// observation must not date the event early.
		for k := j + 1; k < n && k <= j+p.PersistObs; k++ {
			bk, okk := breakAt(cs, k, p, sg, buf, post)
			if !okk {
				break
			}
			if bk.MagnitudeSigma > b.MagnitudeSigma {
				b = bk
			}
		}
		out = append(out, b)
		for j+1 < n && cs[j+1].date.Before(b.Date) {
			j++
		}
		last = j + 1
		armed = false
	}
	return out
}

// breakAt tests a tillage break with cs[j] as the first post-break
// observation: exposed soil (tillageAt) or a drop of the straw share of the
// ground (strawDropAt).
func breakAt(cs []clearObs, j int, p Params, sg sigmas, buf, post []float64) (Break, bool) {
	if b, ok := tillageAt(cs, j, p, sg.soil, buf, post); ok {
		return b, true
	}
	return strawDropAt(cs, j, p, sg.r, buf, post)
}

// tillageAt tests a tillage break with cs[j] as the first post-break
// observation.
func tillageAt(cs []clearObs, j int, p Params, sigma float64, buf, post []float64) (Break, bool) {
	n := len(cs)
	c := cs[j]
	// A canopy that was green shortly before is being harvested, desiccated
	// or drying out: the residue it leaves may expose soil too (soybean and
	// weeds leave little), so only bare soil counts then.
	gate := p.ExposedMin
	for i := j - 1; i >= 0 && c.date.Sub(cs[i].date) <= harvestDays*24*time.Hour; i-- {
		if cs[i].green >= recentGreen {
			gate = p.BareSoilMin
			break
		}
	}
	// NDTI validation, first post-break observation: exposed soil, little
	// canopy.
	if c.soil < gate || c.green > p.MaxGreen {
		return Break{}, false
	}

	// Confirmation and persistence: the next ConfirmObs observations must
	// show exposed ground (emergence on tilled soil qualifies, straw does
	// not), and the soil fraction of the bare spell (up to PersistObs
	// observations, 60 days, or the green-up) stays exposed. The ground
	// soil share b/(1−g) is read through the gaps of the canopy, so its
	// noise is σ/(1−g) (groundScale).
	post = post[:0]
	var scaleArr, tmpArr [16]float64
	scales := scaleArr[:0]
	limit := c.date.Add(persistDays * 24 * time.Hour)
	for i := j; i < n && len(post) < max(p.PersistObs, p.ConfirmObs+1); i++ {
		x := cs[i]
		if i-j <= p.ConfirmObs {
			if x.green > maxGreenSeen || x.groundSoil() < gate {
				return Break{}, false
			}
		} else if x.green > maxGreenSeen || x.date.After(limit) {
			break
		}
		post = append(post, x.groundSoil())
		scales = append(scales, x.groundScale())
	}
	if len(post) == 0 || j+p.ConfirmObs >= n {
		return Break{}, false
	}
	postLvl, sePost := level(post, scales, sigma, p.tune.levelTrim, tmpArr[:0])
	if postLvl < gate {
		return Break{}, false
	}
	preLvl, npre := preLevel(cs, j, p, buf)
	// Level shift in standard errors of the cell's own historical σ.
	// The pre level is a median (of PreObs observations): its variance is
	// σ²·medianVar(npre), not σ²/npre.
	vPre := sigma * sigma * medianVar(npre)
	z := (postLvl - preLvl) / math.Sqrt(vPre+sePost*sePost)
	if z <= p.K {
		return Break{}, false
	}
	// The first post-break observation must itself have jumped (at
	// soilFirstK·K standard errors): a break is dated by its first changed
	// observation, not by an earlier one whose window reaches over the
	// change.
	s1 := sigma * scales[0]
	if z1 := (c.groundSoil() - preLvl) / math.Sqrt(vPre+s1*s1); z1 <= p.tune.soilFirstK*p.K {
		return Break{}, false
	}
	return Break{
		Date: c.date, Before: cs[j-1].date, After: c.date, Test: TestSoil,
		MagnitudeSigma: z, Sigma: sigma, PreLevel: preLvl, PostLevel: postLvl,
	}, true
}

// scanGeneric walks a univariate series and reports confirmed level shifts
// in either direction.
func scanGeneric(cs []clearObs, p Params) []Break {
	n := len(cs)
	if n < 2 {
		return nil
	}
	buf := make([]float64, 0, n)
	sigma := robustSigma(cs, p.MinSigma, buf)
	var out []Break
	for j := 1; j+p.ConfirmObs < n; j++ {
		preLvl, _ := preLevel(cs, j, p, buf)
		postLvl := 0.0
		ok := true
		dir := cs[j].value > preLvl
		for i := j; i <= j+p.ConfirmObs; i++ {
			d := cs[i].value - preLvl
			if (d > 0) != dir || math.Abs(d) <= p.K*sigma {
				ok = false
				break
			}
			postLvl += cs[i].value
		}
		if !ok {
			continue
		}
		npost := p.ConfirmObs + 1
		postLvl /= float64(npost)
		out = append(out, Break{
			Date: cs[j].date, Before: cs[j-1].date, After: cs[j].date,
			MagnitudeSigma: (postLvl - preLvl) / sigma, Sigma: sigma, PreLevel: preLvl, PostLevel: postLvl,
		})
		j += p.PreObs - 1 // the next pre-break level starts after this break
	}
	return out
}

// harvestDays is how long after a canopy (green ≥ recentGreen: a crop, a
// cover crop, or a weed flush, whose standing dry matter looks like straw)
// a rise of the soil fraction is read as harvest, desiccation or dry-out
// unless it reaches bare soil (days).
const (
	harvestDays = 45
	recentGreen = 0.2
)

// persistDays bounds the persistence check of a break (days).
const persistDays = 60

// strawShare is the straw share of the ground not hidden by green canopy,
// r = straw/(straw+soil) = 1 − groundSoil: tillage divides it by the share of
// the straw it buries, and an emerging crop leaves it as it was.
// Values outside 0..1 (noise, observations just outside the endmember
// triangle) are clamped to it.
func (c clearObs) strawShare() float64 {
	return math.Max(0, math.Min(1, 1-c.groundSoil()))
}

// strawDropAt tests a tillage break with cs[j] as the first post-break
// observation on the straw share of the ground r = straw/(straw+soil), the
// composition of the part of the pixel that is not green canopy. Tillage
// divides r by the share of the straw it buries and r stays low under the
// emerging crop until the next harvest adds residue; green-up alone leaves
// r unchanged, so it never fires. A break needs: the first post-break
// observation within rMaxGapLong days of the last pre-break one, with
// canopy ≤ rMaxGreen; a pre-break level (mean r of at least rPreMin and
// up to PreObs + rExtraPre observations within PreWindowDays, canopy ≤
// rPreGreen; see level) of at least rMinStraw, the last pre-break
// observation not yet dropped (rDroppedRatio); the first observation and
// the mean of up to PersistObs ones within 60 days before the canopy
// closes at most rRatio of the pre-break level, times the decomposition
// bound of a gap longer than rMaxGap; at most rNewGreen of canopy on the
// first post-break date unless the mean is below rDeepRatio of the pre
// level (a harvest followed by a crop sown into its straw is not
// tillage); the next ConfirmObs observations at most
// rConfirmTol above that and each confirmK·K standard errors below the pre
// level; the mean below the pre-break level by more than K standard
// errors of the cell's own σ of r, and the first observation alone by
// more than firstObsK·K.
func strawDropAt(cs []clearObs, j int, p Params, sigma float64, buf, post []float64) (Break, bool) {
	b, why := strawDrop(cs, j, p, sigma, buf, post)
	return b, why == ""
}

// strawDrop is strawDropAt with the name of the first failed condition
// ("" when the break is accepted), for the diagnostics. p.tune must have
// its defaults (DetectCell and Detect set them).
func strawDrop(cs []clearObs, j int, p Params, sigma float64, buf, post []float64) (Break, string) {
	t := &p.tune
	c := cs[j]
	if c.green > t.rMaxGreen {
		return Break{}, "green1"
	}
	decay, ok := gapDecay(c.date.Sub(cs[j-1].date), t)
	if !ok {
		return Break{}, "gap"
	}
	var preScaleArr, postScaleArr, tmpArr [16]float64
	v, preScales := strawPre(cs, j, p, buf, preScaleArr[:0])
	npre := len(v)
	if npre == 0 {
		return Break{}, "nopre"
	}
	pre, sePre := level(v, preScales, sigma, t.levelTrim, tmpArr[:0])
	if pre < t.rMinStraw {
		return Break{}, "lowpre"
	}
	r1 := c.strawShare()
	hi := t.rRatio * pre * decay
	if r1 > hi { // cheap rejection of most observations
		return Break{}, "ratio"
	}
	if npre < t.rPreMin {
		return Break{}, "npre"
	}
	d := strawDropLevels{pre: pre, sePre: sePre, hi: hi, sigma: sigma}
	post, postScales, ok := d.confirmed(cs, j, p, post, postScaleArr[:0])
	if !ok {
		return Break{}, "confirm"
	}
	if len(post) < p.ConfirmObs+1 {
		return Break{}, "npost"
	}
	postLvl, sePost := level(post, postScales, sigma, t.levelTrim, tmpArr[:0])
	if postLvl > hi {
		return Break{}, "postlvl"
	}
	if c.green > t.rNewGreen && postLvl > t.rDeepRatio*pre {
		return Break{}, "green-new"
	}
	if d.dropped(cs[j-1], p, decay) {
		return Break{}, "lastpre"
	}
	z := (pre - postLvl) / math.Sqrt(sePre*sePre+sePost*sePost)
	if z <= p.K {
		return Break{MagnitudeSigma: z}, "z"
	}
	s1 := sigma * postScales[0]
	if z1 := (pre - r1) / math.Sqrt(sePre*sePre+s1*s1); z1 <= t.firstObsK*p.K {
		return Break{}, "z1"
	}
	return Break{
		Date: c.date, Before: cs[j-1].date, After: c.date, Test: TestStrawShare,
		MagnitudeSigma: z, Sigma: sigma, PreLevel: 1 - pre, PostLevel: 1 - postLvl,
	}, ""
}

// gapDecay returns the factor by which straw decomposition may have lowered
// r across a gap between two clear dates: 1 up to rMaxGap days, the fastest
// decomposition 2^(−(gap − rMaxGap)/rHalfLife) beyond, and false beyond
// rMaxGapLong days (no step can be told from decay over such a gap).
func gapDecay(gap time.Duration, t *tuning) (float64, bool) {
	days := gap.Hours() / 24
	if days <= t.rMaxGap {
		return 1, true
	}
	if days > t.rMaxGapLong {
		return 0, false
	}
	return math.Exp2(-(days - t.rMaxGap) / t.rHalfLife), true
}

// strawPre returns the r values, and their noise scales, of the pre-break
// level of the straw-drop test with cs[j] as the first post-break
// observation: up to PreObs + rExtraPre observations within PreWindowDays
// of cs[j-1] with the ground in full view (canopy ≤ rPreGreen), newest
// first. v and scales are reused.
func strawPre(cs []clearObs, j int, p Params, v, scales []float64) ([]float64, []float64) {
	v = v[:0]
	window := time.Duration(p.PreWindowDays) * 24 * time.Hour
	lastPre := cs[j-1].date
	for i := j - 1; i >= 0 && len(v) < p.PreObs+p.tune.rExtraPre; i-- {
		if lastPre.Sub(cs[i].date) > window {
			break
		}
		if cs[i].green <= p.tune.rPreGreen {
			v = append(v, cs[i].strawShare())
			scales = append(scales, cs[i].groundScale())
		}
	}
	return v, scales
}

// strawDropLevels is what the straw-drop test knows once the pre-break level
// is set: that level of r and its standard error, the ratio gate hi (after
// the gap's decay) and the cell's σ of r.
type strawDropLevels struct{ pre, sePre, hi, sigma float64 }

// confirmed collects the post-break r values, and their noise scales, from
// cs[j]: up to max(PersistObs, ConfirmObs+1) observations within
// persistDays, stopping at the first with canopy above rMaxGreen. false when
// one of the ConfirmObs observations after the first is not itself
// confirmK·K standard errors below the pre level, or lies more than
// rConfirmTol above the gate. post and scales are reused.
func (d strawDropLevels) confirmed(cs []clearObs, j int, p Params, post, scales []float64) ([]float64, []float64, bool) {
	t := &p.tune
	post = post[:0]
	limit := cs[j].date.Add(persistDays * 24 * time.Hour)
	for i := j; i < len(cs) && len(post) < max(p.PersistObs, p.ConfirmObs+1); i++ {
		x := cs[i]
		if x.green > t.rMaxGreen || x.date.After(limit) {
			break
		}
		r := x.strawShare()
		if k := len(post); k > 0 && k <= p.ConfirmObs {
			si := d.sigma * x.groundScale()
			if (d.pre-r)/math.Sqrt(d.sePre*d.sePre+si*si) <= t.confirmK*p.K || r > d.hi+t.rConfirmTol {
				return post, scales, false
			}
		}
		post = append(post, r)
		scales = append(scales, x.groundScale())
	}
	return post, scales, true
}

// dropped reports whether the last pre-break observation x has already
// dropped (then the break is earlier, or the series is a ramp — straw
// decaying — rather than a step): at or below the gate (the ratio gate, or
// rDroppedRatio of the pre level after the gap's decay, whichever is
// higher), or within half its σ above it while lying confirmK·K standard
// errors below the pre level. An observation under a canopy above
// rMaxGreen does not show r and has not dropped.
func (d strawDropLevels) dropped(x clearObs, p Params, decay float64) bool {
	t := &p.tune
	if x.green > t.rMaxGreen {
		return false
	}
	r := x.strawShare()
	si := d.sigma * x.groundScale()
	gate := math.Max(d.hi, t.rDroppedRatio*d.pre*decay)
	return r <= gate || (r <= gate+si/2 && (d.pre-r)/math.Sqrt(d.sePre*d.sePre+si*si) > t.confirmK*p.K)
}

// level returns the level of the values v, whose noise is sigma·scales[i],
// and its standard error: the weighted mean (weights 1/scales[i]²) of the
// values within trim·sigma·scales[i] of their median, and
// sigma/√Σweights. Once unflagged residue is trimmed, a mean is a far
// more efficient estimate than a median of 3–6 noisy observations (the
// standard error formula of the z test assumes a mean). tmp is scratch.
func level(v, scales []float64, sigma, trim float64, tmp []float64) (float64, float64) {
	tmp = append(tmp[:0], v...)
	m := num.Median(tmp)
	var sw, swx float64
	for i, x := range v {
		if math.Abs(x-m) > trim*sigma*scales[i] {
			continue
		}
		w := 1 / (scales[i] * scales[i])
		sw += w
		swx += w * x
	}
	if sw == 0 { // every value far from an even count's median: use it
		for _, x := range scales {
			sw += 1 / (x * x)
		}
		return m, sigma / math.Sqrt(sw)
	}
	return swx / sw, sigma / math.Sqrt(sw)
}

// medianVar is the variance of the median of n independent standard normal
// values (exact for n ≤ 3, asymptotic π/2n above).
func medianVar(n int) float64 {
	switch n {
	case 1:
		return 1
	case 2:
		return 0.5
	case 3:
		return 0.4487
	}
	return math.Pi / (2 * float64(n))
}
