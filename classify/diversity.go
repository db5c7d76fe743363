package classify

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/manejo/manejo/zarc"
)

// DiversityYears is the number of agricultural years D looks back over
// (Tabela 1, indicator 6: "nos últimos três anos agrícolas").
const DiversityYears = 3

// DiversityDetail explains the D level: what was counted in the window.
type DiversityDetail struct {
	Level int             // Tabela 1 level 1–4; 0 when D cannot be computed
	Years []zarc.AgriYear // the agricultural years looked at, oldest first
	// EmptyYears lists years of the window without any declared crop; D is
	// then not informed (IN 2.2) and Level is 0.
	EmptyYears []zarc.AgriYear

	Crops    int // crops counted (a consortium counts once; conserved forage does not count, IN 2.4 III)
	Forage   int // conserved-forage crops left out of the count (IN 2.4 III)
	Species  int // distinct species over the window
	Families int // distinct botanical families over the window

	// LongCovers counts cover crops of more than 4 months that include a
	// grass (Poaceae), single or in consortium (IN 2.4 IV).
	LongCovers int
	// LongCoversNoGrass counts cover crops of more than 4 months without a
	// grass: they do not meet the "more than 4 months" criterion (IN 2.4 IV)
	// but still count as covers of more than 45 days.
	LongCoversNoGrass int
	// Covers45 counts cover crops of more than 45 days, long ones included,
	// plus the substitutes of IN 2.4 I.
	Covers45 int
	// Substitutes counts grain crops standing in for a short cover crop
	// (IN 2.4 I): a grass in the third season, or a crop in the autumn window
	// between the soybean harvest and the next sowing.
	Substitutes int
	// ILP is true when a pasture was kept 12 months or more (IN 2.4 V); it
	// meets the "minimum number of crops" criterion.
	ILP bool
}

// String summarises the counts, e.g. "7 crops, 4 species, 3 families, ...".
func (d DiversityDetail) String() string {
	if len(d.EmptyYears) > 0 {
		ys := make([]string, len(d.EmptyYears))
		for i, y := range d.EmptyYears {
			ys[i] = y.String()
		}
		return "no crop declared in " + strings.Join(ys, ", ")
	}
	s := fmt.Sprintf("%d crops, %d species, %d families; covers >4 months with a grass: %d; covers >45 days: %d",
		d.Crops, d.Species, d.Families, d.LongCovers, d.Covers45)
	if d.Substitutes > 0 {
		s += fmt.Sprintf(" (%d by IN 2.4 I substitution)", d.Substitutes)
	}
	if d.LongCoversNoGrass > 0 {
		s += fmt.Sprintf("; covers >4 months without a grass (IN 2.4 IV): %d", d.LongCoversNoGrass)
	}
	if d.Forage > 0 {
		s += fmt.Sprintf("; conserved forage not counted (IN 2.4 III): %d", d.Forage)
	}
	if d.ILP {
		s += "; ILP pasture ≥12 months (IN 2.4 V)"
	}
	return s
}

// WindowYears returns the DiversityYears agricultural years ending at last,
// oldest first.
func WindowYears(last zarc.AgriYear) []zarc.AgriYear {
	ys := make([]zarc.AgriYear, DiversityYears)
	for i := range ys {
		ys[i] = last - zarc.AgriYear(DiversityYears-1-i)
	}
	return ys
}

// autumn reports whether t falls in the southern autumn (20 March to 20 June),
// the "janela outonal" of IN 2.4 I.
func autumn(t time.Time) bool {
	y := t.Year()
	return !t.Before(time.Date(y, 3, 20, 0, 0, 0, 0, t.Location())) &&
		t.Before(time.Date(y, 6, 21, 0, 0, 0, 0, t.Location()))
}

// Diversity computes D, the crop diversity of the last three agricultural
// years (Tabela 1, indicator 6, with the criteria of IN 2.4), from the crop
// history of one talhão over the given years (nil: the DiversityYears years
// ending at the latest year in history). Plantings outside the years are
// ignored. A year without any crop leaves D not informed (Level 0,
// EmptyYears set). An invalid planting returns an error wrapping ErrPlanting.
//
// Levels (Tabela 1): 2 = at least 4 crops, 2 species and 2 families; 3 = at
// least 6 crops, 2 species, 2 families and (1 cover > 4 months or 3 covers
// > 45 days); 4 = at least 6 crops, 4 species, 2 families, 1 cover > 4 months
// and 2 more covers > 45 days; 1 otherwise.
func Diversity(history []Planting, years []zarc.AgriYear) (DiversityDetail, error) {
	for i, p := range history {
		if err := p.validate(); err != nil {
			return DiversityDetail{}, fmt.Errorf("history row %d: %w", i+1, err)
		}
	}
	if len(years) == 0 {
		if len(history) == 0 {
			return DiversityDetail{}, nil
		}
		years = WindowYears(latestYear(history))
	}
	years = slices.Clone(years)
	slices.Sort(years)
	years = slices.Compact(years)
	d := DiversityDetail{Years: years}
	in := yearSet(years)
	d.Species, d.Families, d.EmptyYears = variety(history, in)
	if len(d.EmptyYears) > 0 {
		d.Species, d.Families = 0, 0
		return d, nil
	}
	d.count(sequence(history, in))
	d.Level = diversityLevel(d)
	return d, nil
}

// latestYear returns the latest agricultural year of a non-empty history.
func latestYear(history []Planting) zarc.AgriYear {
	last := history[0].AgriYear
	for _, p := range history {
		last = max(last, p.AgriYear)
	}
	return last
}

// variety counts the distinct species and botanical families planted in the
// years of in, and lists the years of in (sorted) without any planting.
func variety(history []Planting, in map[zarc.AgriYear]bool) (species, families int, empty []zarc.AgriYear) {
	seen := map[zarc.AgriYear]bool{}
	sp, fam := map[string]bool{}, map[string]bool{}
	for _, p := range history {
		if !in[p.AgriYear] {
			continue
		}
		seen[p.AgriYear] = true
		sp[norm(p.Species)] = true
		fam[family(p.Family)] = true
	}
	for _, y := range slices.Sorted(maps.Keys(in)) {
		if !seen[y] {
			empty = append(empty, y)
		}
	}
	return len(sp), len(fam), empty
}

// count counts the crops of seq by the criteria of IN 2.4: conserved forage
// left out (III), ILP pastures (V), cover crops over 4 months and over 45
// days (IV), and grain crops standing in for a cover crop (I).
func (d *DiversityDetail) count(seq []cultivo) {
	// Position of each grain crop among the grain crops of its agricultural
	// year ("safra"), for the third season of IN 2.4 I.
	pos := make([]int, len(seq))
	n := map[zarc.AgriYear]int{}
	for i, c := range seq {
		if c.purpose == Grain {
			pos[i] = n[c.year]
			n[c.year]++
		}
	}
	poaceae := func(p Planting) bool { return family(p.Family) == "poaceae" }
	for i, c := range seq {
		switch c.purpose {
		case Forage:
			d.Forage++
			continue
		case Pasture:
			if !c.end.Before(c.start.AddDate(1, 0, 0)) {
				d.ILP = true
			}
		case Cover:
			d.countCover(c, poaceae)
		case Grain:
			if c.over45Days() && substitute(seq, pos, i, poaceae) {
				d.Substitutes++
				d.Covers45++
			}
		}
		d.Crops++
	}
}

// countCover counts one cover crop (IN 2.4 IV).
func (d *DiversityDetail) countCover(c cultivo, poaceae func(Planting) bool) {
	if c.over4Months() {
		if c.any(poaceae) {
			d.LongCovers++
		} else {
			d.LongCoversNoGrass++
		}
	}
	if c.over45Days() {
		d.Covers45++
	}
}

// substitute reports IN 2.4 I for the grain crop seq[i]: a grass that is the
// third (or later) grain crop of its agricultural year (terceira safra, e.g.
// trigo after milho 2ª safra), or a crop sown in the autumn window (20 March
// to 20 June) right after a soybean of the same year and followed by another
// crop of that year (e.g. trigo mourisco between soja and trigo).
func substitute(seq []cultivo, pos []int, i int, poaceae func(Planting) bool) bool {
	c := seq[i]
	if pos[i] >= 2 && c.any(poaceae) {
		return true
	}
	if !autumn(c.start) || i == 0 || i+1 >= len(seq) {
		return false
	}
	prev, next := seq[i-1], seq[i+1]
	return prev.year == c.year && next.year == c.year && prev.any(isSoja)
}

// diversityLevel applies the Tabela 1 thresholds of D to the counts.
func diversityLevel(d DiversityDetail) int {
	crops := func(n int) bool { return d.Crops >= n || d.ILP }
	base := d.Families >= 2
	switch {
	case crops(6) && base && d.Species >= 4 && d.LongCovers >= 1 && d.Covers45-1 >= 2:
		return 4
	case crops(6) && base && d.Species >= 2 && (d.LongCovers >= 1 || d.Covers45 >= 3):
		return 3
	case crops(4) && base && d.Species >= 2:
		return 2
	default:
		return 1
	}
}
