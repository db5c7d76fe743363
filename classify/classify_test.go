package classify

import (
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/manejo/manejo/internal/testkit"
	"github.com/manejo/manejo/zarc"
)

// best returns an input at level 4 on every indicator (Mi = 4, NM4) with no
// rule firing: CTC 8 and V 60 % (row 1 ≥ 55), Ca 2 (≥ 1,5), m 2 % (< 5),
// T 10 (≥ 8), C 95 (≥ 90), D 4 (richHistory), flat (slope 1 %), deep soil
// (100 cm ≥ Ze 60 cm of soybean).
func best(t *testing.T) Input {
	return Input{
		FieldID: "t1", Crop: zarc.Soja,
		CTC: new(8.0), VPct: new(60.0), Ca: new(2.0), MPct: new(2.0),
		TYears: new(10.0), CPct: new(95.0), SlopePct: new(1.0),
		EffectiveDepthCm: new(100.0), History: richHistory(t),
	}
}

func ruleIDs(r Result) []string {
	ids := make([]string, len(r.Rules))
	for i, x := range r.Rules {
		ids[i] = x.ID
	}
	return ids
}

// step is a fired rule with its level before and after.
type step struct {
	id            string
	before, after int
}

func TestClassifyRules(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		item     string // regulation item checked
		mod      func(t *testing.T, in *Input)
		mi       float64
		level    int
		steps    []step
		deciding string
	}{
		{
			name: "all level 4: NM4 by the mean", item: "IN 3.2 IV (Mi > 3,50)",
			mod: func(t *testing.T, in *Input) {}, mi: 4, level: 4, deciding: DecidedByMean,
		},
		{
			name: "Mi exactly 3,50 is NM3", item: "IN 3.2 III (2,75 < Mi ≤ 3,50)",
			mod: func(t *testing.T, in *Input) { in.TYears = new(2.9) }, // T level 1 alone: 21/6
			mi:  3.5, level: 3, deciding: DecidedByMean,
		},
		// IN 3.2.1 I, contour planting.
		{
			name: "slope 3 % with contour on 74.9 %: NM1", item: "IN 3.2.1 I",
			mod: func(t *testing.T, in *Input) { in.SlopePct, in.ContourPct = new(3.0), new(74.9) },
			mi:  4, level: 1, steps: []step{{RuleContour, 4, 1}}, deciding: RuleContour,
		},
		{
			name: "slope 3 % with contour on 75 %: no downgrade", item: "IN 3.2.1 I ('pelo menos 75%')",
			mod: func(t *testing.T, in *Input) { in.SlopePct, in.ContourPct = new(3.0), new(75.0) },
			mi:  4, level: 4, deciding: DecidedByMean,
		},
		{
			name: "slope 2.99 % without contour: rule does not apply", item: "IN 3.2.1 I ('declividade ≥ 3%')",
			mod: func(t *testing.T, in *Input) { in.SlopePct, in.ContourPct = new(2.99), new(0.0) },
			mi:  4, level: 4, deciding: DecidedByMean,
		},
		// Portaria 349 3.2.1 II, consecutive crops in the same agricultural year.
		{
			name: "soja on soja in the same agricultural year: NM1", item: "Portaria 349 3.2.1 II",
			mod: func(t *testing.T, in *Input) {
				in.History = append(in.History, soja(t, 2024, "2025-02-08", "2025-06-01"))
			},
			mi: 4, level: 1, steps: []step{{RuleConsecutive, 4, 1}}, deciding: RuleConsecutive,
		},
		{
			name: "milho on milho in the same agricultural year (maize assessed): NM1", item: "Portaria 349 3.2.1 II",
			mod: func(t *testing.T, in *Input) {
				in.Crop, in.ZeCm = zarc.Milho, new(50.0)
				in.History[0] = milho(t, 2022, "2022-10-10", "2023-02-15")
			},
			mi: 4, level: 1, steps: []step{{RuleConsecutive, 4, 1}}, deciding: RuleConsecutive,
		},
		{
			name: "milho on milho also counts when soybean is assessed", item: "Portaria 349 3.2.1 II (both crops named)",
			mod: func(t *testing.T, in *Input) {
				in.History[0] = milho(t, 2022, "2022-10-10", "2023-02-15")
			},
			mi: 4, level: 1, steps: []step{{RuleConsecutive, 4, 1}}, deciding: RuleConsecutive,
		},
		{
			name: "soja after soja across agricultural years is not rule II", item: "Portaria 349 3.2.1 II ('no mesmo ano agrícola'), replacing IN 3.2.1 II",
			mod: func(t *testing.T, in *Input) {
				in.Crop, in.ZeCm = zarc.Milho, new(50.0) // maize assessed, so IN 3.2.1 III does not apply either
				// 2022/2023 ends with a soja safrinha; 2023/2024 starts with a soja.
				in.History = []Planting{
					milho(t, 2022, "2022-10-10", "2023-02-15"),
					soja(t, 2022, "2023-02-20", "2023-06-10"),
					soja(t, 2023, "2023-10-05", "2024-02-10"),
					pl(t, 2023, "aveia-preta", "Avena strigosa", "Poaceae", Cover, "2024-02-20", "2024-08-30"),
					pl(t, 2023, "nabo-forrageiro", "Raphanus sativus", "Brassicaceae", Cover, "2024-02-20", "2024-08-30"),
					soja(t, 2024, "2024-10-01", "2025-02-05"),
					milho(t, 2024, "2025-02-10", "2025-06-20"),
					trigo(t, 2024, "2025-06-25", "2025-09-30"),
				}
			},
			// D: 7 crops, 5 species, 3 families, 1 long cover, 2 covers >45 days: level 3; Mi 23/6.
			mi: 23.0 / 6, level: 4, deciding: DecidedByMean,
		},
		// IN 3.2.1 III, only legumes before/after soybean.
		{
			name: "only legumes around soybean: cap NM2", item: "IN 3.2.1 III",
			mod: func(t *testing.T, in *Input) { in.History = legumeHistory(t, false) }, // D 3: no grass in the long cover
			mi:  23.0 / 6, level: 2, steps: []step{{RuleLegumes, 4, 2}}, deciding: RuleLegumes,
		},
		{
			name: "a grass in consortium with the legume breaks the succession", item: "IN 3.2.1 III ('sem intercalação com outras espécies')",
			mod: func(t *testing.T, in *Input) { in.History = legumeHistory(t, true) },
			mi:  4, level: 4, deciding: DecidedByMean,
		},
		{
			name: "legume rule is for soybean only (maize assessed)", item: "IN 3.2.1 III ('antes ou após a soja')",
			mod: func(t *testing.T, in *Input) {
				in.Crop, in.ZeCm = zarc.Milho, new(50.0)
				in.History = legumeHistory(t, false)
			},
			mi: 23.0 / 6, level: 4, deciding: DecidedByMean,
		},
		// Portaria 349 3.2.1 IV, only grasses before/after maize.
		{
			name: "only grasses around maize: cap NM2", item: "Portaria 349 3.2.1 IV",
			mod: func(t *testing.T, in *Input) {
				in.Crop, in.ZeCm = zarc.Milho, new(50.0)
				in.History = grassHistory(t)
			},
			mi: 4, level: 2, steps: []step{{RulePoaceae, 4, 2}}, deciding: RulePoaceae,
		},
		{
			name: "grass rule is for maize only (soybean assessed)", item: "Portaria 349 3.2.1 IV ('antes ou após o milho')",
			mod: func(t *testing.T, in *Input) { in.History = grassHistory(t) },
			mi:  4, level: 4, deciding: DecidedByMean,
		},
		{
			name: "maize after soybean: no grass succession", item: "Portaria 349 3.2.1 IV ('sem intercalação com espécies de outras famílias')",
			mod: func(t *testing.T, in *Input) { in.Crop, in.ZeCm = zarc.Milho, new(50.0) },
			mi:  4, level: 4, deciding: DecidedByMean,
		},
		// Portaria 349 3.2.1 V, limiting indicators.
		{
			name: "two indicators at level 1: NM1", item: "Portaria 349 3.2.1 V a",
			mod: func(t *testing.T, in *Input) { in.Ca, in.TYears = new(0.49), new(2.0) }, // 4+1+4+1+4+4 = 18
			mi:  3, level: 1, steps: []step{{RuleLimiting1, 3, 1}}, deciding: RuleLimiting1,
		},
		{
			name: "one indicator at level 1 alone: no limiting rule", item: "Portaria 349 3.2.1 V (needs two)",
			mod: func(t *testing.T, in *Input) { in.Ca = new(0.49) }, // 21/6 = 3.5
			mi:  3.5, level: 3, deciding: DecidedByMean,
		},
		{
			name: "two indicators at level 2: NM2", item: "Portaria 349 3.2.1 V b",
			mod: func(t *testing.T, in *Input) { in.Ca, in.TYears = new(0.5), new(3.0) }, // 20/6
			mi:  20.0 / 6, level: 2, steps: []step{{RuleLimiting2, 3, 2}}, deciding: RuleLimiting2,
		},
		{
			name: "one at level 1 and one at level 2: NM2", item: "Portaria 349 3.2.1 V b",
			mod: func(t *testing.T, in *Input) { in.CPct, in.TYears = new(29.9), new(4.9) }, // 19/6
			mi:  19.0 / 6, level: 2, steps: []step{{RuleLimiting2, 3, 2}}, deciding: RuleLimiting2,
		},
		{
			name: "one indicator at level 2 alone: no limiting rule", item: "Portaria 349 3.2.1 V b (needs two)",
			mod: func(t *testing.T, in *Input) { in.CPct = new(30.0) }, // 22/6
			mi:  22.0 / 6, level: 4, deciding: DecidedByMean,
		},
		{
			name: "V% just below the bound of its CTC class counts as level 1", item: "Portaria 349 3.2.1 V a with Tabela 1 row 1 (CTC ≥ 10)",
			mod: func(t *testing.T, in *Input) { in.CTC, in.VPct, in.CPct = new(12.0), new(49.9), new(10.0) },
			mi:  18.0 / 6, level: 1, steps: []step{{RuleLimiting1, 3, 1}}, deciding: RuleLimiting1,
		},
		// Portaria 349 3.2.1 VI, aluminium saturation.
		{
			name: "Mi at NM3 and m% at level 1: NM2", item: "Portaria 349 3.2.1 VI a",
			mod: func(t *testing.T, in *Input) { in.MPct = new(20.0) }, // 21/6 = 3.5 → NM3
			mi:  3.5, level: 2, steps: []step{{RuleAluminium1, 3, 2}}, deciding: RuleAluminium1,
		},
		{
			name: "Mi at NM4 and m% at level 2: NM3", item: "Portaria 349 3.2.1 VI b",
			mod: func(t *testing.T, in *Input) { in.MPct = new(10.0) }, // 22/6 → NM4
			mi:  22.0 / 6, level: 3, steps: []step{{RuleAluminium2, 4, 3}}, deciding: RuleAluminium2,
		},
		{
			name: "m% just below 10 is level 3: no aluminium rule", item: "Portaria 349 3.2.1 VI with Tabela 1 row 3",
			mod: func(t *testing.T, in *Input) { in.MPct = new(9.99) },
			mi:  23.0 / 6, level: 4, deciding: DecidedByMean,
		},
		{
			name: "m% at level 1 with Mi at NM2: VI does not apply, V does", item: "Portaria 349 3.2.1 VI ('se a média for nível 3 ou 4')",
			mod: func(t *testing.T, in *Input) {
				in.MPct, in.Ca, in.TYears, in.CPct = new(25.0), new(0.1), new(0.0), new(50.0) // 4+1+1+1+2+4 = 13
			},
			mi: 13.0 / 6, level: 1, steps: []step{{RuleLimiting1, 2, 1}}, deciding: RuleLimiting1,
		},
		// Portaria 349 3.4, effective depth.
		{
			name: "effective depth 59.9 cm < Ze 60 cm of soybean: not classifiable", item: "Portaria 349 3.4; Portaria 206/2026 1.9.3 (Ze 60 cm)",
			mod: func(t *testing.T, in *Input) { in.EffectiveDepthCm = new(59.9) },
			mi:  4, level: 0, steps: []step{{RuleDepth, 4, 0}}, deciding: RuleDepth,
		},
		{
			name: "effective depth equal to Ze: classifiable", item: "Portaria 349 3.4 ('inferiores a ... Ze')",
			mod: func(t *testing.T, in *Input) { in.EffectiveDepthCm = new(60.0) },
			mi:  4, level: 4, deciding: DecidedByMean,
		},
		{
			name: "maize with Ze given, depth below it: not classifiable", item: "Portaria 349 3.4",
			mod: func(t *testing.T, in *Input) {
				in.Crop, in.ZeCm, in.EffectiveDepthCm = zarc.Milho, new(80.0), new(70.0)
			},
			mi: 4, level: 0, steps: []step{{RuleDepth, 4, 0}}, deciding: RuleDepth,
		},
		{
			name: "Ze given overrides the soybean default", item: "Portaria 349 3.4",
			mod: func(t *testing.T, in *Input) { in.ZeCm, in.EffectiveDepthCm = new(50.0), new(55.0) },
			mi:  4, level: 4, deciding: DecidedByMean,
		},
		// Combinations: cumulative, lowest wins (Portaria 349 3.2.2).
		{
			name: "contour then aluminium: NM1 decided by contour", item: "Portaria 349 3.2.2 with IN 3.2.1 I and 3.2.1 VI b",
			mod: func(t *testing.T, in *Input) { in.SlopePct, in.ContourPct, in.MPct = new(8.0), new(10.0), new(15.0) },
			mi:  22.0 / 6, level: 1, steps: []step{{RuleContour, 4, 1}, {RuleAluminium2, 1, 1}}, deciding: RuleContour,
		},
		{
			name: "legumes cap then limiting to NM1", item: "Portaria 349 3.2.2 with IN 3.2.1 III and 3.2.1 V a",
			mod: func(t *testing.T, in *Input) {
				in.History = legumeHistory(t, false)
				in.Ca, in.CPct = new(0.2), new(5.0)
			},
			mi: 17.0 / 6, level: 1, steps: []step{{RuleLegumes, 3, 2}, {RuleLimiting1, 2, 1}}, deciding: RuleLimiting1,
		},
		{
			name: "limiting NM2 and aluminium NM3: lowest (NM2) wins", item: "Portaria 349 3.2.2 with 3.2.1 V b and VI b",
			mod: func(t *testing.T, in *Input) { in.MPct, in.TYears = new(15.0), new(4.0) }, // 20/6 → NM3
			mi:  20.0 / 6, level: 2, steps: []step{{RuleLimiting2, 3, 2}, {RuleAluminium2, 2, 2}}, deciding: RuleLimiting2,
		},
		{
			name: "aluminium VI a and limiting V b agree on NM2: first decides", item: "Portaria 349 3.2.2 with 3.2.1 V b and VI a",
			mod: func(t *testing.T, in *Input) { in.MPct, in.CPct = new(30.0), new(59.0) }, // 4+4+1+4+2+4 = 19
			mi:  19.0 / 6, level: 2, steps: []step{{RuleLimiting2, 3, 2}, {RuleAluminium1, 2, 2}}, deciding: RuleLimiting2,
		},
		{
			name: "every rule at once: not classifiable by depth", item: "Portaria 349 3.2.2 and 3.4",
			mod: func(t *testing.T, in *Input) {
				in.Crop, in.ZeCm = zarc.Milho, new(50.0)
				in.History = grassHistory(t)
				in.History = append(in.History, milho(t, 2024, "2025-02-10", "2025-06-10"))
				in.SlopePct, in.ContourPct = new(12.0), new(0.0)
				in.MPct, in.Ca, in.EffectiveDepthCm = new(40.0), new(0.1), new(30.0)
			},
			mi: 18.0 / 6, level: 0,
			steps:    []step{{RuleContour, 3, 1}, {RuleConsecutive, 1, 1}, {RulePoaceae, 1, 1}, {RuleLimiting1, 1, 1}, {RuleAluminium1, 1, 1}, {RuleDepth, 1, 0}},
			deciding: RuleDepth,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := best(t)
			tt.mod(t, &in)
			r, err := Classify(in)
			if err != nil {
				t.Fatalf("%s: %v", tt.item, err)
			}
			if !testkit.Near(r.Mi, tt.mi, eps) || r.Level != tt.level || r.DecidingRule != tt.deciding {
				t.Errorf("%s: Classify = level %d Mi %v deciding %q (missing %v, D %s); want level %d Mi %v deciding %q",
					tt.item, r.Level, r.Mi, r.DecidingRule, r.Missing, r.Diversity, tt.level, tt.mi, tt.deciding)
			}
			var got []step
			for _, x := range r.Rules {
				got = append(got, step{x.ID, x.Before, x.After})
			}
			if !slices.Equal(got, tt.steps) {
				t.Errorf("%s: rules = %+v, want %+v", tt.item, got, tt.steps)
			}
			if r.MeanLevel != Band(tt.mi) {
				t.Errorf("%s: MeanLevel = %d, want %d", tt.item, r.MeanLevel, Band(tt.mi))
			}
			if (r.Level == 0) != (r.Reason != "") {
				t.Errorf("Level %d with Reason %q", r.Level, r.Reason)
			}
		})
	}
}

// legumeHistory alternates soybean with legumes only (feijão, crotalária).
// With grassMix the crotalária is in consortium with milheto, a grass.
func legumeHistory(t *testing.T, grassMix bool) []Planting {
	h := []Planting{
		soja(t, 2022, "2022-10-10", "2023-02-15"),
		feijao(t, 2022, "2023-02-20", "2023-05-30"),
		soja(t, 2023, "2023-10-05", "2024-02-10"),
		pl(t, 2023, "crotalaria", "Crotalaria juncea", "Fabaceae", Cover, "2024-02-20", "2024-08-30"),
		soja(t, 2024, "2024-10-01", "2025-02-05"),
		pl(t, 2024, "crotalaria", "Crotalaria spectabilis", "Fabaceae", Cover, "2025-02-10", "2025-04-10"),
		pl(t, 2024, "feijao-guandu", "Cajanus cajan", "Fabaceae", Cover, "2025-04-20", "2025-07-10"),
		pl(t, 2024, "aveia-preta", "Avena strigosa", "Poaceae", Cover, "2025-04-20", "2025-07-10"),
	}
	if grassMix {
		h = append(h, pl(t, 2023, "milheto", "Pennisetum glaucum", "Poaceae", Cover, "2024-02-20", "2024-08-30"))
	}
	return h
}

// grassHistory alternates maize with grasses only (trigo, aveia, braquiária)
// and keeps D at level 4 (a Brassicaceae cover away from the maize).
func grassHistory(t *testing.T) []Planting {
	return []Planting{
		milho(t, 2022, "2022-10-10", "2023-02-15"),
		pl(t, 2022, "braquiaria", "Urochloa ruziziensis", "Poaceae", Cover, "2023-02-20", "2023-08-30"),
		pl(t, 2023, "nabo-forrageiro", "Raphanus sativus", "Brassicaceae", Cover, "2023-09-01", "2023-10-20"),
		pl(t, 2023, "aveia-preta", "Avena strigosa", "Poaceae", Cover, "2023-10-25", "2023-12-20"),
		milho(t, 2023, "2024-01-05", "2024-05-10"),
		trigo(t, 2023, "2024-05-20", "2024-09-20"),
		milho(t, 2024, "2024-10-01", "2025-02-05"),
	}
}

func TestClassifyMissing(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		item    string
		mod     func(t *testing.T, in *Input)
		missing []string
	}{
		{"V% not informed", "IN 2.2", func(t *testing.T, in *Input) { in.VPct = nil }, []string{"v_pct"}},
		{"CTC not informed", "IN 2.2 with Tabela 1 row 1 (V% row by CTC)", func(t *testing.T, in *Input) { in.CTC = nil }, []string{"v_pct", "ctc_0_20"}},
		{"Ca not informed", "IN 2.2", func(t *testing.T, in *Input) { in.Ca = nil }, []string{"ca"}},
		{"m% not informed", "IN 2.2", func(t *testing.T, in *Input) { in.MPct = nil }, []string{"m_pct"}},
		{"T not measured", "IN 2.2", func(t *testing.T, in *Input) { in.TYears = nil }, []string{"t"}},
		{"C not measured", "IN 2.2", func(t *testing.T, in *Input) { in.CPct = nil }, []string{"c"}},
		{"no crop history", "IN 2.2", func(t *testing.T, in *Input) { in.History = nil }, []string{"d"}},
		{"a year of the window without crops", "IN 2.2", func(t *testing.T, in *Input) { in.Years = WindowYears(2025) }, []string{"d"}},
		{"several at once", "IN 2.2", func(t *testing.T, in *Input) { in.TYears, in.CPct, in.Ca = nil, nil, nil }, []string{"ca", "t", "c"}},
		{"slope not measured", "IN 3.2.1 I needs the slope", func(t *testing.T, in *Input) { in.SlopePct = nil }, []string{"slope_pct"}},
		{"contour unknown on a 3 % slope", "IN 3.2.1 I", func(t *testing.T, in *Input) { in.SlopePct = new(3.0) }, []string{"contour_pct"}},
		{"effective depth not informed", "Portaria 349 3.4", func(t *testing.T, in *Input) { in.EffectiveDepthCm = nil }, []string{"effective_depth_cm"}},
		{"maize without Ze", "Portaria 349 3.4 (Ze from the crop's ZARC portaria)", func(t *testing.T, in *Input) { in.Crop = zarc.Milho }, []string{"ze_cm"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := best(t)
			tt.mod(t, &in)
			r, err := Classify(in)
			if err != nil {
				t.Fatal(err)
			}
			if r.Level != 0 || r.Classifiable() || !slices.Equal(r.Missing, tt.missing) || r.DecidingRule != DecidedByMissing ||
				!math.IsNaN(r.Mi) || r.Reason == "" || len(r.Rules) != 0 {
				t.Errorf("%s: Classify = level %d missing %v deciding %q Mi %v rules %v reason %q; want 0 %v %q NaN",
					tt.item, r.Level, r.Missing, r.DecidingRule, r.Mi, ruleIDs(r), r.Reason, tt.missing, DecidedByMissing)
			}
			if len(r.Indicators) != 6 {
				t.Errorf("%d indicators, want all six listed", len(r.Indicators))
			}
		})
	}
}

func TestClassifyErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		mod  func(in *Input)
		want error
	}{
		{"V% over 100", func(in *Input) { in.VPct = new(100.1) }, ErrValue},
		{"negative Ca", func(in *Input) { in.Ca = new(-0.1) }, ErrValue},
		{"m% NaN", func(in *Input) { in.MPct = new(math.NaN()) }, ErrValue},
		{"C infinite", func(in *Input) { in.CPct = new(math.Inf(1)) }, ErrValue},
		{"negative T", func(in *Input) { in.TYears = new(-1.0) }, ErrValue},
		{"contour over 100", func(in *Input) { in.ContourPct = new(101.0) }, ErrValue},
		{"negative depth", func(in *Input) { in.EffectiveDepthCm = new(-5.0) }, ErrValue},
		{"unknown crop", func(in *Input) { in.Crop = "trigo" }, ErrCrop},
		{"bad history row", func(in *Input) { in.History[2].Family = "" }, ErrPlanting},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := best(t)
			tt.mod(&in)
			if _, err := Classify(in); !errors.Is(err, tt.want) {
				t.Errorf("Classify(%s) error = %v, want %v", tt.name, err, tt.want)
			}
		})
	}
}

// TestClassifyExplanation checks the explanation of one result field by field.
func TestClassifyExplanation(t *testing.T) {
	t.Parallel()
	in := best(t)
	in.CTC, in.VPct, in.MPct = new(12.0), new(52.0), new(12.0) // V 52 with CTC ≥ 10: level 2; m 12: level 2
	r, err := Classify(in)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		key    string
		value  float64
		unit   string
		level  int
		points int
	}{
		{"v_pct", 52, "%", 2, 2},
		{"ca", 2, "cmolc dm⁻³", 4, 4},
		{"m_pct", 12, "%", 2, 2},
		{"t", 10, "years", 4, 4},
		{"c", 95, "%", 4, 4},
		{"d", 8, "crops", 4, 4},
	}
	for i, w := range want {
		g := r.Indicators[i]
		if g.Key != w.key || !testkit.Near(g.Value, w.value, eps) || g.Unit != w.unit || g.Level != w.level || g.Points != w.points || !g.Measured || g.Item == "" {
			t.Errorf("indicator %d = %+v, want %+v", i, g, w)
		}
	}
	if d := r.Indicators[0].Detail; d != "CTC 12 cmolc dm⁻³ (CTC ≥ 10 cmolc dm⁻³: bounds 50/55/65 %)" {
		t.Errorf("V%% detail = %q", d)
	}
	// Mi = 20/6 → NM3; V b (two at level 2) → NM2; VI b (m% level 2) → NM3, no change.
	if r.Level != 2 || r.DecidingRule != RuleLimiting2 || len(r.Rules) != 2 {
		t.Fatalf("level %d deciding %q rules %+v", r.Level, r.DecidingRule, r.Rules)
	}
	if got := r.Rules[0].Text; got != "2 indicators at level 2 and 0 at level 1" {
		t.Errorf("rule text = %q", got)
	}
	if got := r.Rules[1].Text; got != "Mi 3.33 gives NM3 and m% 12 % is at level 2" {
		t.Errorf("rule text = %q", got)
	}
}

func TestClassifyNotes(t *testing.T) {
	t.Parallel()
	in := best(t)
	in.TYears = nil
	in.Notes = map[string]string{"t": "insufficient history: T ≥ 4 does not decide the level", "c": "three seasons read"}
	r, err := Classify(in)
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Indicators[3].Detail; got != "not measured or informed; insufficient history: T ≥ 4 does not decide the level" {
		t.Errorf("T detail = %q", got)
	}
	if got := r.Indicators[4].Detail; got != "three seasons read" {
		t.Errorf("C detail = %q", got)
	}
	if !slices.Equal(r.Missing, []string{"t"}) {
		t.Errorf("missing = %v", r.Missing)
	}
}
