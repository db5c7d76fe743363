package tillage

import (
	"github.com/manejo/manejo/spectral"
)

// Params configures break detection and talhão aggregation. Build it with
// DefaultParams and change single fields; Validate reports bad values.
type Params struct {
	// K is the break threshold: a break needs a rise of the soil fraction
	// (or a drop of the straw share of the ground) larger than K standard
	// errors, computed from the cell's own historical σ (Portaria 349,
	// 6.8, "desvio-padrão superior ao limiar histórico"): z = (post −
	// pre)/√(SE²pre + SE²post), each level's standard error from σ, the
	// number of observations and their canopy (see level, medianVar).
	// Default 3: below it recall hardly grows while precision falls
	// (docs/tillage.md).
	K float64
	// MinSigma is the floor of σ, in the units of the series (fraction for
	// DetectCell, index units for Breaks): it stops a series that happens
	// to be very smooth from turning tiny wiggles into breaks. Default 0.01,
	// about the noise of a good surface-reflectance NDVI.
	MinSigma float64
	// PreObs is how many clear observations before a candidate form the
	// pre-break level (their median). Default 3.
	PreObs int
	// PreWindowDays bounds how far back from the last pre-break observation
	// the pre-break level may reach, in days. Default 30.
	PreWindowDays int
	// ConfirmObs is how many clear observations after the first post-break
	// one must also show exposed ground (the soil share of the ground not
	// hidden by canopy at or above the gate, canopy ≤ 0.6) before a break is
	// accepted: a single-date unflagged cloud or shadow is never enough.
	// Default 1.
	ConfirmObs int
	// PersistObs is how many clear observations, from the first post-break
	// one up to the next green-up (green > 0.6) and within 60 days, form the
	// post-break level: their median ground soil share must stay at exposed
	// soil, since buried straw does not come back before the next crop.
	// Default 5.
	PersistObs int

	// Soil, Straw and Green are the endmembers each clear observation is
	// unmixed into (bare oxisol, dry crop straw, green canopy). Defaults:
	// the reference set spectral.Soil, spectral.Straw and spectral.Green.
	Soil, Straw, Green spectral.Endmember
	// BareSoilMin is the soil-fraction gate (0..1) for a break that follows
	// a canopy (green ≥ 0.2 within 45 days): harvest, desiccation and weed
	// dry-out expose soil too, so only bare soil counts then. Default 0.7.
	BareSoilMin float64
	// ExposedMin is the lower soil-fraction gate (0..1) used when no green
	// canopy was seen in the 45 days before a candidate break: chiselling
	// and subsoiling leave 30–50 % of the straw, so the soil need not be
	// fully bare. Default 0.65.
	ExposedMin float64
	// MaxGreen is the green fraction (0..1) above which the first post-break
	// observation cannot be soil exposure by machinery (it is a canopy).
	// Default 0.25.
	MaxGreen float64
	// Outside is how far (in fraction units) an observation may fall outside
	// the endmember triangle before it is treated as unflagged residue
	// (cloud, haze, shadow, water) and skipped. Default 0.2.
	Outside float64

	// WindowDays is the talhão window: a cell agrees with a candidate break
	// dated D when its own first post-break observation is within this many
	// days after D. Default 16 (one MODIS composite, one Landsat revisit,
	// about three Sentinel-2 revisits).
	WindowDays int
	// CellK is the per-cell threshold (in standard errors, as K) for a cell
	// to agree with a talhão candidate break already found at K in the
	// pooled interior series or in another cell. Default 3 (one-sided
	// Gaussian tail 1.3·10⁻³ per test; half of the interior cells must
	// agree, so noise alone makes no event).
	CellK float64
	// MinCellFraction is the share of interior cells (0..1] that must agree
	// with a candidate for a talhão event. Default 0.5.
	MinCellFraction float64

	// tune holds the internal thresholds of the break tests; its zero value
	// is their defaults (see tuning).
	tune tuning
	// portfolio is what the other talhões of the portfolio say about this
	// one's dates (WithPortfolio; nil: nothing).
	portfolio *Portfolio
}

// DefaultParams returns the calibrated defaults (see the field comments and
// docs/tillage.md for where each value comes from).
func DefaultParams() Params {
	return Params{
		K:               3,
		MinSigma:        0.01,
		PreObs:          3,
		PreWindowDays:   30,
		ConfirmObs:      1,
		PersistObs:      5,
		Soil:            spectral.Soil,
		Straw:           spectral.Straw,
		Green:           spectral.Green,
		BareSoilMin:     0.7,
		ExposedMin:      0.65,
		MaxGreen:        0.25,
		Outside:         0.2,
		WindowDays:      16,
		MinCellFraction: 0.5,
		CellK:           3,
	}
}

// Validate reports the first parameter that cannot work, naming it.
func (p Params) Validate() error {
	switch {
	case !(p.K > 0):
		return paramError("K", "must be > 0")
	case !(p.CellK > 0):
		return paramError("CellK", "must be > 0")
	case !(p.MinSigma > 0):
		return paramError("MinSigma", "must be > 0")
	case p.PreObs < 1:
		return paramError("PreObs", "must be ≥ 1")
	case p.PreWindowDays < 0:
		return paramError("PreWindowDays", "must be ≥ 0")
	case p.ConfirmObs < 0:
		return paramError("ConfirmObs", "must be ≥ 0")
	case p.PersistObs < 0:
		return paramError("PersistObs", "must be ≥ 0")
	case !(p.BareSoilMin > 0 && p.BareSoilMin <= 1):
		return paramError("BareSoilMin", "must be in (0, 1]")
	case !(p.ExposedMin > 0 && p.ExposedMin <= p.BareSoilMin):
		return paramError("ExposedMin", "must be in (0, BareSoilMin]")
	case !(p.MaxGreen >= 0 && p.MaxGreen <= 1):
		return paramError("MaxGreen", "must be in [0, 1]")
	case !(p.Outside >= 0):
		return paramError("Outside", "must be ≥ 0")
	case p.WindowDays < 0:
		return paramError("WindowDays", "must be ≥ 0")
	case !(p.MinCellFraction > 0 && p.MinCellFraction <= 1):
		return paramError("MinCellFraction", "must be in (0, 1]")
	}
	if _, ok := newUnmixer(p); !ok {
		return paramError("Soil/Straw/Green", "need VNIR, SWIR > 0, non-collinear (NDVI, NDTI) and straw and soil of different NDTI")
	}
	return nil
}

// tuning holds the internal thresholds of the two break tests. No caller
// outside the package sets them; they are a Params field (not constants)
// so that the -tilldebug diagnostics (debug_test.go) can vary them. A zero
// field takes the default in its comment (withDefaults); the values and the
// measurements behind them are in docs/tillage.md ("Defaults and where they
// come from").
type tuning struct {
	// rMaxGreen is the canopy cover (0..1) up to which the straw share of
	// the ground r is read: above it the ground in view is too small.
	// Default 0.6, as maxGreenSeen.
	rMaxGreen float64
	// rMinStraw is the pre-break straw share below which a drop of r cannot
	// be told from noise. Default 0.25.
	rMinStraw float64
	// rRatio bounds the post-break straw share relative to the pre-break
	// one: tillage keeps 3–50 % of the straw (ploughing 3–10, harrowing
	// 10–25, chiselling 30–45, subsoiling 35–50 %). One value for every
	// cell; harvests, which drop r too (the standing dry canopy reads as
	// straw, r ≈ 1, and a soybean harvest leaves 45–65 % of the ground
	// covered), are kept out by rPreMin and rNewGreen instead. Default 0.55.
	rRatio float64
	// rMaxGap, rHalfLife and rMaxGapLong (days): a break is a step between
	// two clear dates, not the slow loss of straw to decomposition across
	// a cloudy gap. Up to rMaxGap days between the last pre-break and the
	// first post-break observation the ratio gate stands as it is; beyond,
	// up to rMaxGapLong days, it is multiplied by 2^(−extra days /
	// rHalfLife), the loss of the fastest-decomposing straw (soybean in the
	// wet season; half-lives of 30–90 days are reported in the Cerrado).
	// Defaults 20, 30 and 60.
	rMaxGap, rHalfLife, rMaxGapLong float64
	// rPreGreen is the canopy cover up to which an observation enters the
	// pre-break level of r: a senescent canopy reads as straw (r ≈ 1) until
	// the harvest, so observations still showing some canopy stay out of
	// the level a drop is measured from. Default 0.15.
	rPreGreen float64
	// rConfirmTol: a confirming observation may lie up to this much above
	// the ratio gate (a single observation's σ of r is ≈ 0.09), provided it
	// is itself confirmK·K standard errors below the pre level. Default 0.1.
	rConfirmTol float64
	// rExtraPre: the pre-break level of r is the mean of up to PreObs +
	// rExtraPre observations within PreWindowDays. The ratio and gap gates
	// already keep slow straw decay out, so this test affords a longer,
	// quieter level; with the last pre-break observation required to be
	// undropped, the longer level does not make the break late. Default 3.
	rExtraPre int
	// rPreMin is the least number of observations in the pre-break level of
	// r. A straw level seen on a single date cannot be told from the
	// standing dry canopy of a crop about to be harvested (in the cloudy
	// months a soybean canopy is often seen once, dry, between clouds, and
	// next after the harvest, whose residue makes the drop a chisel pass
	// also makes); two clear dates within PreWindowDays, the last one
	// undropped, make it a level on the ground. Default 2.
	rPreMin int
	// rNewGreen and rDeepRatio: the first post-break observation must show
	// at most rNewGreen of canopy (about the noise of the green fraction on
	// bare ground) unless the post level is below rDeepRatio of the pre
	// level. Tillage leaves the field bare; a drop first seen under an
	// emerging canopy is a harvest followed by the next crop sown into its
	// straw (safrinha after soybean, a cover crop), unless the drop is as
	// deep as only ploughing and harrowing make (≤ 25 % of the straw kept;
	// a harvest keeps ≥ 45 %). Defaults 0.05 and 0.25.
	rNewGreen, rDeepRatio float64
	// rDroppedRatio: the last pre-break observation has already dropped
	// (the series is a ramp, or the break is earlier) when at or below
	// rDroppedRatio × the pre level (or the ratio gate, if higher), or
	// within σ/2 above it while confirmK·K standard errors below the pre
	// level. It is stricter than rRatio, which alone lets the test fire on
	// fast straw decay. Default 0.6.
	rDroppedRatio float64
	// levelTrim: pre- and post-break levels are weighted means of the
	// observations within levelTrim σ of their median (see level).
	// Default 3.
	levelTrim float64
	// firstObsK, soilFirstK and confirmK: the first post-break observation
	// alone must lie beyond firstObsK·K (straw-drop test) or soilFirstK·K
	// (soil test) standard errors, and each confirming observation of the
	// straw-drop test beyond confirmK·K: a break is dated by its first
	// changed observation (a noise-low observation just before a tillage
	// must not date it early), and a ramp (fast straw decay) is not a step.
	// Defaults 0.6, 0.9 and 0.5.
	firstObsK, soilFirstK, confirmK float64
	// mdBareNDVI, mdMaxGap, mdPostDays, mdPostObs, mdCanopyNDVI,
	// mdCanopyDays and mdRel are the thresholds of the median-NDTI drop
	// test (medianDropBreaks): dates bare of green have a median NDVI below
	// mdBareNDVI (0.3, the baseline rule's); at most mdMaxGap days (30)
	// between the last date before and the first after; the level after is
	// the median of mdPostObs dates (3) within mdPostDays (45); no canopy
	// (median NDVI ≥ mdCanopyNDVI, 0.4) in the mdCanopyDays (45) before;
	// the drop at least mdRel (0.4) of the way from the level before to
	// the soil's NDTI.
	mdBareNDVI, mdMaxGap, mdPostDays, mdCanopyNDVI, mdCanopyDays, mdRel, mdWet, mdStep float64
	mdPostObs, mdPostMin                                                               int
	// stepRel is the step test's relative gate: the drop reaches at least
	// this share of the way from the level before to the soil's NDTI.
	// Default mdRel. The US-maize world's clean readings miss most
	// moderate steps at this gate, but lowering it adds false steps once
	// its artifacts are on (TestUSWorldStepGate, -tags research).
	stepRel float64
	// soilKnobs: the research runs' soil for the step test's gate
	// (research.go; empty in the product, noresearch.go).
	soilKnobs
}

// withDefaults returns t with every zero field set to its default.
func (t tuning) withDefaults() tuning {
	f := func(v *float64, d float64) {
		if *v == 0 {
			*v = d
		}
	}
	f(&t.rMaxGreen, 0.6)
	f(&t.rMinStraw, 0.25)
	f(&t.rRatio, 0.55)
	f(&t.rMaxGap, 20)
	f(&t.rHalfLife, 30)
	f(&t.rMaxGapLong, 60)
	f(&t.rPreGreen, 0.15)
	f(&t.rConfirmTol, 0.1)
	f(&t.rNewGreen, 0.05)
	f(&t.rDeepRatio, 0.25)
	f(&t.rDroppedRatio, 0.6)
	f(&t.levelTrim, 3)
	f(&t.firstObsK, 0.6)
	f(&t.soilFirstK, 0.9)
	f(&t.confirmK, 0.5)
	f(&t.mdBareNDVI, 0.3)
	f(&t.mdMaxGap, 30)
	f(&t.mdPostDays, 45)
	f(&t.mdCanopyNDVI, 0.4)
	f(&t.mdCanopyDays, 45)
	f(&t.mdRel, 0.4)
	f(&t.mdWet, 0.9)
	f(&t.mdStep, 0.2)
	f(&t.stepRel, t.mdRel)
	if t.mdPostObs == 0 {
		t.mdPostObs = 3
	}
	if t.mdPostMin == 0 {
		t.mdPostMin = 2
	}
	if t.rExtraPre == 0 {
		t.rExtraPre = 3
	}
	if t.rPreMin == 0 {
		t.rPreMin = 2
	}
	return t
}
