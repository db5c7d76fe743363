package coverage

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/manejo/manejo/spectral"
)

// The declared residue (issue 30). Four bands cannot tell "less, fresher
// straw" from "more, further decomposed straw" (docs/coverage.md, "What
// the readings cannot tell: twins"); the operator can: the crop history it
// declares says which residue lies on the field before each sowing and how
// long it has been decomposing. A published law — fresh dry residue's NDTI,
// the loss of its cellulose absorption as it decomposes, and the litter-bag
// decomposition rates of tropical no-till by residue type — turns that into
// a prior on the season's straw NDTI (residuePrior), which the season's
// dry-residue envelope then updates as before (seasonStrawDeclared). None
// of these values comes from the simulator (sim/pheno draws its residues
// with laws of its own); the table and its sources are in
// docs/coverage.md, "The declared residue".

// Planting is one crop of a talhão's declared history: a row of the crop
// history table that `classify --crops` reads (docs/classify.md), which
// `manejo run --crops` and `manejo analyse --crops` pass to Assess.
type Planting struct {
	Crop    string    // common name: soja, milho, milheto, braquiaria, trigo…
	Species string    // botanical species, e.g. "Glycine max"; optional
	Purpose string    // grain, cover, forage or pasture; "" is grain
	Start   time.Time // sowing or establishment; zero when not declared
	End     time.Time // harvest or desiccation; zero when not declared
}

// History is the declared crop history of one talhão, in any order; nil
// declares nothing, and Assess then reads every season as without it.
type History []Planting

// ResidueLaw is what the straw prior assumes of one residue type: a row of
// ResidueLaws.
type ResidueLaw struct {
	Name string // residue type, e.g. "maize"
	// HalfLifeDays is the half-life of the residue's dry mass on the
	// surface of a no-till field in the rainy (or warm) season, from
	// litter-bag studies of tropical and subtropical Brazil.
	HalfLifeDays float64
	Source       string
}

// The spectral half of the law, common to every residue type
// (docs/coverage.md, "The declared residue").
const (
	// freshResidueNDTI and freshResidueSD: dry, fresh crop residue (maize,
	// soybean, wheat) in the Landsat/Sentinel-2 SWIR bands, NDTI ≈ 0.22–0.32
	// (Daughtry et al. 2005, 2006; Quemada & Daughtry 2016; Serbin et al.
	// 2009), the types overlapping within that range.
	freshResidueNDTI = 0.27
	freshResidueSD   = 0.03
	// decayDrop is the NDTI a residue loses when its mass is all but gone
	// (linear in the share of the mass lost), and decayDropSD its
	// uncertainty: cellulose and hemicellulose decompose first and lignin
	// accumulates, so the 2.1 µm cellulose absorption weakens as the straw
	// decomposes (Daughtry, Serbin, Reeves, Doraiswamy & Hunt 2009,
	// "Wheat straw composition and spectral reflectance changes during
	// decomposition", wheat straw in mesh bags over 22 months: the
	// mechanism checked against its abstract; so is Nagler, Daughtry &
	// Goward 2000, Remote Sens. Environ. 71: the cellulose absorption
	// index of dry litters "generally decreased with age"; the size of the
	// drop as recalled).
	decayDrop   = 0.10
	decayDropSD = 0.05
	// slowSeasonRate is the decomposition rate of the dry (Cerrado) or
	// cold (South) months, May to September, relative to the rainy
	// season's: litter bags lose 10–16 % of their mass in the first 60
	// days without rain (Leite et al. 2010) against about a third at the
	// rainy-season half-lives below.
	slowSeasonRate = 0.35
	// halfLifeSpread scales the half-life to the edges of its range (×
	// 1/1.4 … × 1.4): the studies' spread between sites and years.
	halfLifeSpread = 1.4
	// maxResidueAgeDays: a crop that ended longer ago than this before the
	// sowing is not taken as the season's residue.
	maxResidueAgeDays = 400
)

// residueLaws are the residue types with a published decomposition rate.
var residueLaws = []ResidueLaw{
	{Name: "soybean", HalfLifeDays: 120, Source: "soybean and maize residues decompose at similar rates on the surface of no-till fields: Gonçalves et al. 2010 (Embrapa Soja, Boletim de Pesquisa e Desenvolvimento 3: 12 years of litter bags in Londrina-PR, \"semelhanças na velocidade de decomposição dos resíduos de milho e soja\"); Ghidey & Alberts 1993 (surface residues lost 66 % of their mass in one year, maize and soybean alike); so maize's half-life (checked 2026-12-01; the 65 d used before cited Pesq. Agropec. Bras. 41(4), 2006, which is soybean cut green as green manure, not harvest residue)"},
	{Name: "maize", HalfLifeDays: 120, Source: "safrinha maize straw, Sorriso-MT: 14.18 → 6.45 t/ha in 140 days (Cavalli et al. 2015, XXXV CBCS), T½ ≈ 123 d; maize + B. ruziziensis straw, western Bahia Cerrado, T½ 115 d (Rev. Bras. Ciênc. Solo 38(6), 2014)"},
	{Name: "millet", HalfLifeDays: 100, Source: "pearl millet cover straw in the Cerrado: Torres et al. 2005 (Rev. Bras. Ciênc. Solo 29); Costa et al. 2015 (Biosci. J. 31(3)); value as recalled, not checked offline"},
	{Name: "brachiaria", HalfLifeDays: 115, Source: "Urochloa ruziziensis straw with maize, western Bahia Cerrado, T½ 115 d (Rev. Bras. Ciênc. Solo 38(6), 2014); Acosta et al. 2014 (Ciência Rural 44(5)) on the amount's effect"},
	{Name: "winter cereal", HalfLifeDays: 110, Source: "wheat straw T½ > 100 d in western Paraná (Agrineo, UEMS, 2021: checked, \"half-life greater than 100 days\"); Gonçalves et al. 2010 (Embrapa Soja BPD 4, oats and wheat); Ghidey & Alberts 1993: surface wheat residue lost 36 % in a year, slower than maize and soybean"},
}

// ResidueLaws returns a copy of the residue table.
func ResidueLaws() []ResidueLaw { return append([]ResidueLaw(nil), residueLaws...) }

// residueLaw returns the law of a planting's residue by its common name or
// species, false for a crop without one (cotton, beans, forage: the season
// is then read as undeclared).
func residueLaw(p Planting) (ResidueLaw, bool) {
	name, sp := fold(p.Crop), fold(p.Species)
	has := func(s string, keys ...string) bool {
		for _, k := range keys {
			if strings.Contains(s, k) {
				return true
			}
		}
		return false
	}
	var want string
	switch {
	case has(name, "soja", "soy") || has(sp, "glycine max"):
		want = "soybean"
	case has(name, "milho", "maize", "corn", "sorgo", "sorghum") || has(sp, "zea mays", "sorghum"):
		want = "maize"
	case has(name, "milheto", "millet") || has(sp, "pennisetum", "cenchrus americanus"):
		want = "millet"
	case has(name, "braquiaria", "brachiaria", "urochloa", "capim") || has(sp, "urochloa", "brachiaria"):
		want = "brachiaria"
	case has(name, "trigo", "wheat", "aveia", "oat", "cevada", "triticale") || has(sp, "triticum", "avena"):
		want = "winter cereal"
	}
	for _, l := range residueLaws {
		if l.Name == want {
			return l, true
		}
	}
	return ResidueLaw{}, false
}

// fold lower-cases s and drops the Portuguese accents of crop names.
func fold(s string) string {
	return strings.NewReplacer("á", "a", "â", "a", "ã", "a", "é", "e", "ê", "e", "í", "i", "ó", "o", "ô", "o", "õ", "o", "ú", "u", "ç", "c").
		Replace(strings.ToLower(strings.TrimSpace(s)))
}

// residuePrior is the belief about a season's straw NDTI that the
// declared residue gives.
type residuePrior struct {
	ndti, sd float64
	note     string // what was declared and read, for SeasonCover.Residue
	// halfLife and end: the residue's mean rainy-season half-life and the
	// day its crop ended (zero: not declared), for the research build's
	// aged envelope (research.go).
	halfLife float64
	end      time.Time
	read     time.Time // the day the prior is read at
}

// previous returns the plantings whose residue lies on the field at
// sowing: those of the latest harvest or desiccation before it (a
// consortium ends together), within maxResidueAgeDays; forage (its straw
// is removed) is skipped. Plantings without an end date count by their
// start when no dated one qualifies.
func (h History) previous(sowing time.Time) []Planting {
	var best []Planting
	var at time.Time
	for _, dated := range []bool{true, false} {
		for _, p := range h {
			t := p.End
			switch {
			case !dated && !p.End.IsZero():
				continue
			case !dated:
				t = p.Start
			}
			if fold(p.Purpose) == "forage" || t.IsZero() || !t.Before(sowing) || sowing.Sub(t).Hours()/24 > maxResidueAgeDays {
				continue
			}
			switch {
			case at.IsZero() || t.After(at):
				best, at = []Planting{p}, t
			case t.Equal(at):
				best = append(best, p)
			}
		}
		if len(best) > 0 {
			return best
		}
	}
	return nil
}

// priorAt returns the straw prior of the season sown on sowing, read at
// the middle of its window (windowDays before sowing), and false when the
// history declares no residue with a law for it.
func (h History) priorAt(sowing time.Time, windowDays int) (residuePrior, bool) {
	prev := h.previous(sowing)
	if len(prev) == 0 {
		return residuePrior{}, false
	}
	read := sowing.AddDate(0, 0, -windowDays/2)
	var names []string
	var mean, sd, hl float64
	n := 0
	for _, p := range prev {
		names = append(names, p.Crop)
		l, ok := residueLaw(p)
		if !ok {
			continue
		}
		m, s := residueNDTI(l, p.End, read)
		mean, sd, hl, n = mean+m, math.Max(sd, s), hl+l.HalfLifeDays, n+1
	}
	what := strings.Join(names, "+")
	if n == 0 {
		return residuePrior{note: fmt.Sprintf("declared residue %s has no published decomposition law here: read as undeclared", what)}, false
	}
	mean /= float64(n)
	age := "age not declared"
	if end := prev[0].End; !end.IsZero() {
		age = fmt.Sprintf("ended %s, %d days before sowing", end.Format(time.DateOnly), int(sowing.Sub(end).Hours()/24))
	}
	return residuePrior{ndti: mean, sd: sd, halfLife: hl / float64(n), end: prev[0].End, read: read,
		note: fmt.Sprintf("declared residue %s (%s): prior straw NDTI %.3f ± %.3f", what, age, mean, sd)}, true
}

// unknownAges are the residue ages (days) a prior averages over when the
// end of the previous crop is not declared.
var unknownAges = []float64{30, 90, 180, 270}

// residueNDTI returns the mean and standard deviation of the straw NDTI
// that law l gives a residue whose crop ended on end (zero: unknown), read
// on day read: fresh NDTI less decayDrop times the share of its mass
// decomposed, over the combinations of fresh NDTI ± freshResidueSD, drop ±
// decayDropSD and half-life ×/÷ halfLifeSpread (and unknownAges without
// an end date), equally weighted.
func residueNDTI(l ResidueLaw, end, read time.Time) (mean, sd float64) {
	var vals []float64
	ages := unknownAges
	if !end.IsZero() {
		ages = nil
	}
	for _, fresh := range []float64{freshResidueNDTI - freshResidueSD, freshResidueNDTI + freshResidueSD} {
		for _, drop := range []float64{decayDrop - decayDropSD, decayDrop, decayDrop + decayDropSD} {
			for _, k := range []float64{1 / halfLifeSpread, 1, halfLifeSpread} {
				if ages == nil {
					vals = append(vals, fresh-drop*(1-massLeft(l.HalfLifeDays*k, end, read)))
					continue
				}
				for _, a := range ages {
					vals = append(vals, fresh-drop*(1-massLeft(l.HalfLifeDays*k, read.AddDate(0, 0, -int(a)), read)))
				}
			}
		}
	}
	for _, v := range vals {
		mean += v
	}
	mean /= float64(len(vals))
	for _, v := range vals {
		sd += (v - mean) * (v - mean)
	}
	return mean, math.Sqrt(sd / float64(len(vals)))
}

// massLeft is the share of a residue's mass left on day read of one laid on
// day from, decomposing with the given rainy-season half-life, at
// slowSeasonRate of that rate from May to September.
func massLeft(halfLife float64, from, read time.Time) float64 {
	k := math.Ln2 / halfLife
	eff := 0.0
	for d := from; d.Before(read); d = d.AddDate(0, 0, 1) {
		if m := d.Month(); m >= time.May && m <= time.September {
			eff += slowSeasonRate
		} else {
			eff++
		}
	}
	return math.Exp(-k * eff)
}

// withResidue returns c with the straw prior that h declares for the
// season sown on sowing, and a note of what was declared ("" when
// nothing): c itself when h declares no residue with a law (or c is nil:
// endmembers given, nothing calibrated), so that season reads as without
// a declaration.
func (c *calibration) withResidue(h History, sowing time.Time, windowDays int) (*calibration, string) {
	if len(h) == 0 && !oracleSet() {
		return c, ""
	}
	if c == nil || sowing.IsZero() {
		return c, ""
	}
	r, ok := h.priorAt(sowing, windowDays)
	if oracleSet() {
		r, ok = oraclePrior(sowing)
	}
	if !ok {
		return c, r.note
	}
	d := *c
	d.residue = &r
	return &d, r.note
}

// strawDeclared is the straw belief of the straw period [from, to) with a
// declared residue: its prior (residuePrior) updated by the dry-residue
// envelope, as seasonStraw updates the reference prior. The season is read
// with the posterior-mean straw: the prior is the declared residue's own,
// not a reference the envelope must refute. An envelope more than two
// prior deviations above the prior refutes it, and the wide spread
// (priorStrawSD) is used around it. A talhão whose readings are mixtures
// of the templates (calibrate: the narrow reference prior; or, its soil
// fit refused, the reference soil's: calibration.explained) keeps
// seasonStraw: the readings themselves say its straw is the reference's
// (combining the two priors instead read today's world worse, tuning
// seeds 12 and 13: docs/coverage.md).
func (c *calibration) strawDeclared(from, to time.Time) spectral.StrawFit {
	if c.strawSD < priorStrawSD || c.explained {
		return seasonStraw(c.dates, c.ndvi, c.ndti, from, to, c.strawSD)
	}
	mu, sd := c.residue.ndti, residueSDScale*c.residue.sd
	env, ok := dryEnvelope(c.dates, c.ndvi, c.ndti, from, to)
	if ok && env-envelopeSD > mu+2*sd {
		sd = math.Max(sd, priorStrawSD)
	}
	env, ok = withAgedEnvelope(c, to, env, ok)
	fit := spectral.PriorStrawAt(mu, sd)
	if ok {
		fit = fit.AtLeast(env, envelopeSD)
	}
	b := withDeclaredPoint(fit, fit.Mean().Endmember().NDTI)
	s := fit.Straw
	s.SWIR2 = s.SWIR1 * (1 - b) / (1 + b)
	fit.Straw = s
	return fit
}
