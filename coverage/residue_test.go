package coverage

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/manejo/manejo/sim/pheno"
	"github.com/manejo/manejo/zarc"
)

// The law of residue.go: fresh residue at the published fresh NDTI, its
// NDTI falling as its mass decomposes, faster for millet than for maize
// and soybean, slower in the dry months.
func TestResidueNDTIAge(t *testing.T) {
	soy, _ := residueLaw(Planting{Crop: "soja"})
	maize, _ := residueLaw(Planting{Crop: "Milho safrinha"})
	end := day("2025-02-10")
	m, sd := residueNDTI(soy, end, end)
	if math.Abs(m-freshResidueNDTI) > 1e-12 || math.Abs(sd-freshResidueSD) > 1e-12 {
		t.Errorf("fresh soybean residue: %.4f ± %.4f, want the published fresh %.2f ± %.2f", m, sd, freshResidueNDTI, freshResidueSD)
	}
	read := day("2025-10-01")
	ms, _ := residueNDTI(soy, end, read)
	mm, _ := residueNDTI(maize, end, read)
	millet, _ := residueLaw(Planting{Crop: "milheto"})
	ml, _ := residueNDTI(millet, end, read)
	// Soybean and maize residues at the same published rate (Gonçalves
	// et al. 2010; Ghidey & Alberts 1993), millet's faster.
	if !(ml < mm && ms == mm && mm < freshResidueNDTI) {
		t.Errorf("233 days after harvest: millet %.4f, soybean %.4f, maize %.4f: want millet < soybean = maize < fresh %.2f", ml, ms, mm, freshResidueNDTI)
	}
	// 120 days of rain lose more than 120 days of dry season.
	wet := massLeft(100, day("2024-11-01"), day("2024-11-01").AddDate(0, 0, 120))
	dry := massLeft(100, day("2025-05-01"), day("2025-05-01").AddDate(0, 0, 120))
	if want := math.Exp(-math.Ln2 * 1.2); math.Abs(wet-want) > 1e-9 || !(dry > wet) {
		t.Errorf("mass left after 120 days: rainy %.4f (want %.4f), dry %.4f (want more)", wet, want, dry)
	}
	// No declared end: the prior spans the unknown ages, wider.
	_, sdu := residueNDTI(maize, time.Time{}, read)
	_, sdk := residueNDTI(maize, end, read)
	if !(sdu > sdk) {
		t.Errorf("unknown age sd %.4f, want above the dated prior's %.4f", sdu, sdk)
	}
}

func TestResidueLawNames(t *testing.T) {
	for _, c := range []struct {
		p    Planting
		want string
	}{
		{Planting{Crop: "Soja"}, "soybean"},
		{Planting{Crop: "x", Species: "Glycine max"}, "soybean"},
		{Planting{Crop: "milho 2ª safra"}, "maize"},
		{Planting{Crop: "sorgo"}, "maize"},
		{Planting{Crop: "Milheto"}, "millet"},
		{Planting{Crop: "braquiária"}, "brachiaria"},
		{Planting{Crop: "capim", Species: "Urochloa ruziziensis"}, "brachiaria"},
		{Planting{Crop: "aveia-preta"}, "winter cereal"},
		{Planting{Crop: "algodão"}, ""},
		{Planting{Crop: "feijão"}, ""},
	} {
		l, ok := residueLaw(c.p)
		if l.Name != c.want || ok != (c.want != "") {
			t.Errorf("%+v: law %q (%v), want %q", c.p, l.Name, ok, c.want)
		}
	}
}

func TestHistoryPrevious(t *testing.T) {
	sow := day("2025-10-15")
	h := History{
		{Crop: "soja", Start: day("2024-10-10"), End: day("2025-02-05")},
		{Crop: "milho", Start: day("2025-02-10"), End: day("2025-07-01")},
		{Crop: "milho", Purpose: "forage", Start: day("2025-02-10"), End: day("2025-08-01")},     // silage: straw removed
		{Crop: "braquiaria", Purpose: "cover", Start: day("2025-02-10"), End: day("2025-07-01")}, // with the maize
		{Crop: "soja", Start: day("2025-10-15"), End: day("2026-02-10")},                         // the season's own crop
		{Crop: "milho", Start: day("2023-10-01"), End: day("2024-02-20")},                        // too old
	}
	got := h.previous(sow)
	var names []string
	for _, p := range got {
		names = append(names, p.Crop)
	}
	if strings.Join(names, "+") != "milho+braquiaria" {
		t.Errorf("previous of %s: %v, want the maize + brachiaria consortium ended 2025-07-01", sow.Format(time.DateOnly), names)
	}
	pr, ok := h.priorAt(sow, 30)
	if !ok || !strings.Contains(pr.note, "milho+braquiaria (ended 2025-07-01, 106 days before sowing)") {
		t.Errorf("prior %+v %v", pr, ok)
	}
	// Undated plantings count by their start when no dated one qualifies.
	u := History{{Crop: "milheto", Purpose: "cover", Start: day("2025-03-01")}}
	if pr, ok := u.priorAt(sow, 30); !ok || !strings.Contains(pr.note, "age not declared") {
		t.Errorf("undated millet: %+v %v", pr, ok)
	}
	// A crop without a law is said, and reads as undeclared.
	c := History{{Crop: "algodão", Start: day("2025-01-10"), End: day("2025-07-20")}}
	if pr, ok := c.priorAt(sow, 30); ok || !strings.Contains(pr.note, "algodão has no published decomposition law") {
		t.Errorf("cotton: %+v %v", pr, ok)
	}
}

// harderField is one talhão of the harder world with its true sowings
// declared (so that the seasons are read on the same windows).
func harderField(seed uint64) (synthField, map[string]Declared, Season) {
	rng := rand.New(rand.NewPCG(seed, 2027))
	f := newSynthField(rng, synthOptions{start: day("2022-07-01"), end: day("2026-07-31"), revisit: 5, nCells: 4, crop: pheno.Soja, cloudScale: 1, spectra: pheno.SpectraVaried})
	contract, _ := ParseSeason("2026/2027", MonthDay{})
	decl := map[string]Declared{}
	for _, s := range contract.Assessed() {
		sow, _ := f.trueSowing(s)
		decl[s.Label] = Declared{Season: s.Label, Date: sow}
	}
	return f, decl, contract
}

// Without a declaration, or with one that names no residue with a law,
// AssessHistory is Assess, value for value.
func TestAssessHistoryUndeclared(t *testing.T) {
	f, decl, contract := harderField(3)
	want := fmt.Sprintf("%v", Assess(f.cells, contract, decl, zarc.Soja, Params{}))
	cotton := History{{Crop: "algodão", Start: day("2022-12-01"), End: day("2026-07-01")}}
	for _, h := range []History{nil, {}, cotton} {
		if got := fmt.Sprintf("%v", AssessHistory(f.cells, contract, decl, h, zarc.Soja, Params{})); got != want {
			t.Errorf("history %v: C differs from Assess's:\n%s\nwant\n%s", h, got, want)
		}
	}
}

// A declared residue moves the season's straw by its age: the same
// readings declared as an old soybean residue (lower straw NDTI) read more
// cover than declared as a cover crop desiccated days before the sowing.
func TestAssessHistoryDeclaredAge(t *testing.T) {
	f, decl, contract := harderField(5)
	history := func(crop string, daysBefore int) History {
		var h History
		for _, s := range contract.Assessed() {
			sow := decl[s.Label].Date
			h = append(h, Planting{Crop: crop, Purpose: "cover", Start: sow.AddDate(0, 0, -daysBefore-120), End: sow.AddDate(0, 0, -daysBefore)})
		}
		return h
	}
	fresh := AssessHistory(f.cells, contract, decl, history("milheto", 10), zarc.Soja, Params{})
	old := AssessHistory(f.cells, contract, decl, history("soja", 250), zarc.Soja, Params{})
	if !fresh.OK || !old.OK {
		t.Fatalf("C missing: %s / %s", fresh.Reason, old.Reason)
	}
	for i, sc := range fresh.Seasons {
		o := old.Seasons[i]
		if !strings.Contains(sc.Residue, "declared residue milheto") || !strings.Contains(o.Residue, "declared residue soja") {
			t.Errorf("%s: residue notes %q / %q", sc.Season.Label, sc.Residue, o.Residue)
		}
		if !(o.CoverPct > sc.CoverPct) {
			t.Errorf("%s: old soybean residue read %.1f %%, fresh millet %.1f %%: want the older, more decomposed straw read as more cover", sc.Season.Label, o.CoverPct, sc.CoverPct)
		}
	}
}
