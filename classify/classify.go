package classify

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/manejo/manejo/export"
	"github.com/manejo/manejo/zarc"
)

// Sentinel errors of Classify.
var (
	// ErrCrop reports a main crop other than soja or milho.
	ErrCrop = errors.New("classify: main crop must be soja or milho")
	// ErrValue reports a value that is out of its physical range (negative
	// content, a percentage over 100, NaN or infinite).
	ErrValue = errors.New("classify: value out of range")
)

// Rule identifiers, as the regulation items they implement. Portaria 349
// renumbered 3.2.1: II (consecutive crops in the same agricultural year), IV
// (Poaceae in succession for maize), V (limiting indicators), VI (m%); items
// I and III of the IN still stand.
const (
	RuleContour     = "IN 3.2.1 I"              // slope ≥ 3 % without contour planting on ≥ 75 % → NM1
	RuleConsecutive = "Portaria 349 3.2.1 II"   // soja on soja or milho on milho in one agricultural year → NM1
	RuleLegumes     = "IN 3.2.1 III"            // only legumes before/after soja → at most NM2
	RulePoaceae     = "Portaria 349 3.2.1 IV"   // only grasses before/after milho → at most NM2
	RuleLimiting1   = "Portaria 349 3.2.1 V a"  // two or more indicators at level 1 → NM1
	RuleLimiting2   = "Portaria 349 3.2.1 V b"  // two at level 2, or one at 1 and one at 2 → NM2
	RuleAluminium1  = "Portaria 349 3.2.1 VI a" // Mi at NM3/NM4 and m% at level 1 → NM2
	RuleAluminium2  = "Portaria 349 3.2.1 VI b" // Mi at NM3/NM4 and m% at level 2 → NM3
	RuleDepth       = "Portaria 349 3.4"        // effective depth < Ze → not classifiable
	// DecidedByMean names the Mi bands (IN 3.2) when no rule lowered the level.
	DecidedByMean = "IN 3.2"
	// DecidedByMissing names IN 2.2 when an indicator or rule input is missing.
	DecidedByMissing = "IN 2.2"
)

// Regulation constants of 3.2.1 I and 3.4.
const (
	ContourSlopePct = 3.0  // slope (%) from which contour planting is mandatory
	ContourMinPct   = 75.0 // share of the area (%) that must be on contour
)

// DefaultZe returns the effective root depth Ze (cm) of crop's ZARC
// portaria: soybean 60 cm (Portaria SPA/MAPA 206/2026, annex 1.9.3). Maize
// has none (ok false): its ZARC portaria is not among the texts this tool
// implements, so Ze must be given in Input.ZeCm.
func DefaultZe(crop zarc.Crop) (cm float64, ok bool) {
	if crop == zarc.Soja {
		return 60, true
	}
	return 0, false
}

// Input holds everything the classification of one talhão needs. A nil
// pointer is a value not measured or not informed.
type Input struct {
	FieldID string
	Crop    zarc.Crop // main crop assessed, soja or milho; "" means soja

	// Soil analysis (IN 2.1 I–III).
	CTC  *float64 // CTC at pH 7,0 in 0–20 cm, cmolc dm⁻³ (chooses the V% row)
	VPct *float64 // base saturation V in 0–20 cm, %
	Ca   *float64 // calcium in 20–40 cm, cmolc dm⁻³
	MPct *float64 // aluminium saturation m in 20–40 cm, %

	// Remote sensing (IN 2.1 IV–V, 3.2.1 I).
	TYears     *float64 // T, full years without soil revolving
	CPct       *float64 // C, straw cover before sowing, %
	SlopePct   *float64 // mean slope of the talhão, %
	ContourPct *float64 // share of the area planted on contour in the last year, %; needed only when slope ≥ 3 %

	// Effective depth (Portaria 349, 3.4).
	EffectiveDepthCm *float64 // effective soil depth, cm
	ZeCm             *float64 // effective root depth of the crop, cm; nil → DefaultZe

	// Crop history for D (IN 2.1 VI, 2.4) and the succession rules.
	History []Planting
	// Years are the agricultural years D looks at; nil → the three ending
	// at the latest year of History.
	Years []zarc.AgriYear

	// Notes are remarks on an input by indicator key (v_pct, ca, m_pct, t,
	// c, d), such as why the remote-sensing stage could not measure it; they
	// are appended to the indicator's Detail.
	Notes map[string]string
}

// Indicator is one of the six indicators of Tabela 1 as it entered the mean.
type Indicator struct {
	Key      string  // machine name: v_pct, ca, m_pct, t, c, d
	Name     string  // as in Tabela 1: V%, Ca, m%, T, C, D
	Unit     string  // %, cmolc dm⁻³, years, crops
	Item     string  // regulation item, e.g. "IN 2.1 I, Tabela 1 row 1"
	Measured bool    // false when not measured or not informed
	Value    float64 // the value (D: the number of crops counted); NaN when not measured
	Level    int     // Tabela 1 level 1–4; 0 when not measured
	Points   int     // points in the mean (level n = n points)
	Detail   string  // CTC class for V%, counts for D, or why it is missing
}

// Rule is one exclusion or downgrade rule that fired: its condition held.
// After = min(Before, the rule's level); After 0 means not classifiable.
type Rule struct {
	ID     string // one of the Rule* constants
	Text   string // the condition with this talhão's values
	Cap    int    // the level the rule imposes (0 = not classifiable)
	Before int    // level before the rule
	After  int    // level after the rule
}

// Result is the preview of one talhão's management level and its explanation.
type Result struct {
	FieldID string
	Crop    zarc.Crop
	// Level is the management level 1–4, or 0 when the talhão is not
	// classifiable (missing data, IN 2.2, or an effective depth below Ze,
	// Portaria 349 3.4).
	Level int
	// Mi is the mean of the six indicator points (IN 3.2); NaN when an
	// indicator is missing.
	Mi float64
	// MeanLevel is Band(Mi), the level before the rules; 0 when Mi is NaN.
	MeanLevel  int
	Indicators []Indicator // the six indicators in Tabela 1 order
	Rules      []Rule      // rules that fired, in regulation order
	// DecidingRule is the rule that set Level: a Rule* constant, or
	// DecidedByMean, or DecidedByMissing.
	DecidingRule string
	// Missing lists what is not measured or informed: indicator keys
	// (v_pct, ca, m_pct, t, c, d) and rule inputs (ctc_0_20, slope_pct,
	// contour_pct, effective_depth_cm, ze_cm).
	Missing []string
	// Reason says in one sentence why Level is 0 ("" otherwise).
	Reason    string
	Diversity DiversityDetail // the counts behind D
}

// Classifiable reports whether the result has a level.
func (r Result) Classifiable() bool { return r.Level > 0 }

// checkRange returns an error when v is present and outside [lo, hi].
func checkRange(name string, v *float64, lo, hi float64) error {
	if v == nil {
		return nil
	}
	if math.IsNaN(*v) || math.IsInf(*v, 0) || *v < lo || *v > hi {
		return fmt.Errorf("%s = %g outside [%g, %g]: %w", name, *v, lo, hi, ErrValue)
	}
	return nil
}

func (in Input) validate() error {
	inf := math.Inf(1)
	for _, c := range []struct {
		name   string
		v      *float64
		lo, hi float64
	}{
		{"ctc_0_20", in.CTC, 0, inf},
		{"v_pct_0_20", in.VPct, 0, 100},
		{"ca_20_40", in.Ca, 0, inf},
		{"m_pct_20_40", in.MPct, 0, 100},
		{"t_years", in.TYears, 0, inf},
		{"c_pct", in.CPct, 0, 100},
		{"slope_pct", in.SlopePct, 0, inf},
		{"contour_pct", in.ContourPct, 0, 100},
		{"effective_depth_cm", in.EffectiveDepthCm, 0, inf},
		{"ze_cm", in.ZeCm, 0, inf},
	} {
		if err := checkRange(c.name, c.v, c.lo, c.hi); err != nil {
			return err
		}
	}
	return nil
}

// numeric builds an indicator from an optional value and its level function.
func numeric(key, name, unit, item string, v *float64, level func(float64) int) Indicator {
	ind := Indicator{Key: key, Name: name, Unit: unit, Item: item, Value: math.NaN()}
	if v == nil {
		ind.Detail = "not measured or informed"
		return ind
	}
	ind.Measured, ind.Value = true, *v
	ind.Level = level(*v)
	ind.Points = ind.Level
	return ind
}

// ctcClass names the V% row of Tabela 1 chosen by ctc.
func ctcClass(ctc float64) string {
	switch {
	case ctc < ctcMid:
		return "CTC < 5 cmolc dm⁻³: bounds 35/40/50 %"
	case ctc < ctcHigh:
		return "5 ≤ CTC < 10 cmolc dm⁻³: bounds 40/45/55 %"
	default:
		return "CTC ≥ 10 cmolc dm⁻³: bounds 50/55/65 %"
	}
}

// Classify previews the management level of one talhão and explains it.
// Missing data give Level 0 with Missing listed (IN 2.2), never a guess.
// Out-of-range values return an error wrapping ErrValue, an unknown crop
// ErrCrop, an invalid crop of the history ErrPlanting.
func Classify(in Input) (Result, error) {
	crop := in.Crop
	if crop == "" {
		crop = zarc.Soja
	}
	if crop != zarc.Soja && crop != zarc.Milho {
		return Result{}, fmt.Errorf("classify talhão %q: crop %q: %w", in.FieldID, in.Crop, ErrCrop)
	}
	if err := in.validate(); err != nil {
		return Result{}, fmt.Errorf("classify talhão %q: %w", in.FieldID, err)
	}
	div, err := Diversity(in.History, in.Years)
	if err != nil {
		return Result{}, fmt.Errorf("classify talhão %q: %w", in.FieldID, err)
	}
	r := Result{FieldID: in.FieldID, Crop: crop, Mi: math.NaN(), Diversity: div}
	ind, ctcMissing := indicators(in, div)
	r.Indicators = ind.list(in.Notes)
	r.Missing = ind.missing()
	if ctcMissing {
		r.Missing = append(r.Missing, "ctc_0_20")
	}
	ze, zeKnown := DefaultZe(crop)
	if in.ZeCm != nil {
		ze, zeKnown = *in.ZeCm, true
	}
	r.Missing = append(r.Missing, missingRuleInputs(in, zeKnown)...)
	if len(r.Missing) > 0 {
		r.DecidingRule = DecidedByMissing
		r.Reason = export.NotClassifiable(" (IN 2.2; Portaria 349 3.4 for the depth): missing " + strings.Join(r.Missing, ", "))
		return r, nil
	}
	var n1, n2 int
	r.Mi, n1, n2 = mean(r.Indicators)
	r.MeanLevel = Band(r.Mi)
	fired := rules(in, crop, r, ind.m.Level, ze, n1, n2)
	r.Level, r.Rules, r.DecidingRule = settle(r.MeanLevel, fired)
	if r.Level == 0 {
		r.Reason = export.NotClassifiable(" (Portaria 349 3.4): effective depth below Ze")
	}
	return r, nil
}

// tabela1 holds the six indicators of Tabela 1 by name.
type tabela1 struct{ v, ca, m, t, c, d Indicator }

// indicators measures the six indicators of in; ctcMissing reports that the
// CTC, which chooses the V% row, was not informed.
func indicators(in Input, div DiversityDetail) (ind tabela1, ctcMissing bool) {
	ind.v = numeric("v_pct", "V%", "%", "IN 2.1 I, Tabela 1 row 1", in.VPct, func(x float64) int {
		if in.CTC == nil {
			return 0
		}
		return VLevel(*in.CTC, x)
	})
	switch {
	case in.VPct != nil && in.CTC == nil:
		ind.v.Measured, ind.v.Points = false, 0
		ind.v.Detail = "ctc_0_20 not informed: the V% row of Tabela 1 depends on the CTC class"
		ctcMissing = true
	case in.VPct == nil && in.CTC == nil:
		ctcMissing = true
	case in.VPct != nil:
		ind.v.Detail = fmt.Sprintf("CTC %g cmolc dm⁻³ (%s)", *in.CTC, ctcClass(*in.CTC))
	}
	ind.ca = numeric("ca", "Ca", "cmolc dm⁻³", "IN 2.1 II, Tabela 1 row 2", in.Ca, CaLevel)
	ind.m = numeric("m_pct", "m%", "%", "IN 2.1 III, Tabela 1 row 3", in.MPct, MLevel)
	ind.t = numeric("t", "T", "years", "IN 2.1 IV, Tabela 1 row 4", in.TYears, zarc.TLevel)
	ind.c = numeric("c", "C", "%", "IN 2.1 V, Tabela 1 row 5", in.CPct, zarc.CLevel)
	ind.d = Indicator{Key: "d", Name: "D", Unit: "crops", Item: "IN 2.1 VI and 2.4, Tabela 1 row 6", Value: math.NaN()}
	switch {
	case len(in.History) == 0:
		ind.d.Detail = "no crop history informed"
	case div.Level == 0:
		ind.d.Detail = div.String()
	default:
		ind.d.Measured, ind.d.Value, ind.d.Level, ind.d.Points, ind.d.Detail = true, float64(div.Crops), div.Level, div.Level, div.String()
	}
	return ind, ctcMissing
}

// list returns the indicators in Tabela 1 order, each note of notes
// appended to its indicator's Detail.
func (ind tabela1) list(notes map[string]string) []Indicator {
	list := []Indicator{ind.v, ind.ca, ind.m, ind.t, ind.c, ind.d}
	for i, x := range list {
		if note := notes[x.Key]; note != "" {
			if x.Detail != "" {
				note = x.Detail + "; " + note
			}
			list[i].Detail = note
		}
	}
	return list
}

// missing returns the keys of the indicators not measured, in Tabela 1 order.
func (ind tabela1) missing() []string {
	var keys []string
	for _, x := range []Indicator{ind.v, ind.ca, ind.m, ind.t, ind.c, ind.d} {
		if !x.Measured {
			keys = append(keys, x.Key)
		}
	}
	return keys
}

// missingRuleInputs lists the inputs of the rules of 3.2.1 I and 3.4 that
// are not informed.
func missingRuleInputs(in Input, zeKnown bool) []string {
	var keys []string
	if in.SlopePct == nil {
		keys = append(keys, "slope_pct")
	} else if *in.SlopePct >= ContourSlopePct && in.ContourPct == nil {
		keys = append(keys, "contour_pct")
	}
	if in.EffectiveDepthCm == nil {
		keys = append(keys, "effective_depth_cm")
	}
	if !zeKnown {
		keys = append(keys, "ze_cm")
	}
	return keys
}

// mean returns Mi, the mean of the indicator points (IN 3.2), and the
// number of indicators at level 1 and at level 2.
func mean(list []Indicator) (mi float64, n1, n2 int) {
	sum := 0
	for _, x := range list {
		sum += x.Points
		switch x.Level {
		case 1:
			n1++
		case 2:
			n2++
		}
	}
	return float64(sum) / float64(len(list)), n1, n2
}

// rules returns the rules of 3.2.1 (Portaria 349 numbering) and 3.4 that
// fire for a talhão whose inputs are complete, in regulation order. mLevel
// is the level of m%, n1 and n2 the number of indicators at levels 1 and 2.
func rules(in Input, crop zarc.Crop, r Result, mLevel int, ze float64, n1, n2 int) []Rule {
	var fired []Rule
	fire := func(id string, cap int, format string, a ...any) {
		fired = append(fired, Rule{ID: id, Cap: cap, Text: fmt.Sprintf(format, a...)})
	}
	if s := *in.SlopePct; s >= ContourSlopePct && *in.ContourPct < ContourMinPct {
		fire(RuleContour, 1, "slope %g %% ≥ %g %% and contour planting on %g %% < %g %% of the area in the last year",
			s, ContourSlopePct, *in.ContourPct, ContourMinPct)
	}
	seq := sequence(in.History, yearSet(r.Diversity.Years))
	if txt := consecutive(seq); txt != "" {
		fire(RuleConsecutive, 1, "%s", txt)
	}
	switch crop {
	case zarc.Soja:
		if txt := onlyNeighbours(seq, isSoja, "fabaceae"); txt != "" {
			fire(RuleLegumes, 2, "only legumes (Fabaceae) before/after soja: %s", txt)
		}
	case zarc.Milho:
		if txt := onlyNeighbours(seq, isMilho, "poaceae"); txt != "" {
			fire(RulePoaceae, 2, "only grasses (Poaceae) before/after milho: %s", txt)
		}
	}
	switch {
	case n1 >= 2:
		fire(RuleLimiting1, 1, "%d indicators at level 1", n1)
	case n2 >= 2:
		fire(RuleLimiting2, 2, "%d indicators at level 2 and %d at level 1", n2, n1)
	case n1 == 1 && n2 >= 1:
		fire(RuleLimiting2, 2, "1 indicator at level 1 and %d at level 2", n2)
	}
	if r.MeanLevel >= 3 {
		switch mLevel {
		case 1:
			fire(RuleAluminium1, 2, "Mi %.2f gives NM%d and m%% %g %% is at level 1", r.Mi, r.MeanLevel, *in.MPct)
		case 2:
			fire(RuleAluminium2, 3, "Mi %.2f gives NM%d and m%% %g %% is at level 2", r.Mi, r.MeanLevel, *in.MPct)
		}
	}
	if dep := *in.EffectiveDepthCm; dep < ze {
		fire(RuleDepth, 0, "effective depth %g cm < Ze %g cm of %s: the final classification is conditioned on no such impediment", dep, ze, crop)
	}
	return fired
}

// settle applies the fired rules cumulatively to the Mi level, the lowest
// level winning (Portaria 349, 3.2.2), and fills Before/After. The deciding
// rule is the first that brought the level to its final value, or
// DecidedByMean when none lowered it.
func settle(mean int, fired []Rule) (level int, rules []Rule, deciding string) {
	level, deciding = mean, DecidedByMean
	for i := range fired {
		fired[i].Before = level
		fired[i].After = min(level, fired[i].Cap)
		if fired[i].After < level {
			deciding = fired[i].ID
		}
		level = fired[i].After
	}
	return level, fired, deciding
}

func yearSet(ys []zarc.AgriYear) map[zarc.AgriYear]bool {
	m := make(map[zarc.AgriYear]bool, len(ys))
	for _, y := range ys {
		m[y] = true
	}
	return m
}

// consecutive finds soja right after soja, or milho right after milho, in
// the same agricultural year (Portaria 349, 3.2.1 II), and describes the
// first such pair ("" when none).
func consecutive(seq []cultivo) string {
	for i := 1; i < len(seq); i++ {
		a, b := seq[i-1], seq[i]
		if a.year != b.year {
			continue
		}
		for _, c := range []struct {
			name string
			is   func(Planting) bool
		}{{"soja", isSoja}, {"milho", isMilho}} {
			if a.any(c.is) && b.any(c.is) {
				return fmt.Sprintf("%s sown %s after %s sown %s in the same agricultural year %s",
					c.name, b.start.Format("2006-01-02"), c.name, a.start.Format("2006-01-02"), a.year)
			}
		}
	}
	return ""
}

// onlyNeighbours reports IN 3.2.1 III / Portaria 349 3.2.1 IV: every crop
// right before or right after a crop matching is (soja, milho) is made
// exclusively of species of fam, with no crop of another family in between.
// It describes the neighbours, or returns "" when the rule does not fire
// (no neighbour at all, or some neighbour has another family).
func onlyNeighbours(seq []cultivo, is func(Planting) bool, fam string) string {
	var names []string
	seen := map[int]bool{}
	ofFam := func(p Planting) bool { return family(p.Family) == fam }
	for i, c := range seq {
		if !c.any(is) {
			continue
		}
		for _, j := range []int{i - 1, i + 1} {
			if j < 0 || j >= len(seq) || seen[j] {
				continue
			}
			seen[j] = true
			if !seq[j].all(ofFam) {
				return ""
			}
			names = append(names, fmt.Sprintf("%s (%s)", seq[j].name(), seq[j].start.Format("2006-01-02")))
		}
	}
	if len(names) == 0 {
		return ""
	}
	return strings.Join(names, ", ")
}
