package classify

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/manejo/manejo/zarc"
)

// Purpose is what a crop of the history was grown for (crops.csv `purpose`).
type Purpose string

// Purposes of a crop in the history.
const (
	Grain   Purpose = "grain"   // grain (or fibre, seed) harvest
	Cover   Purpose = "cover"   // cover crop (planta de cobertura, IN 1.1 I), grazed or not (IN 2.4 II)
	Forage  Purpose = "forage"  // conserved forage, silage or hay: not counted as a crop (IN 2.4 III)
	Pasture Purpose = "pasture" // pasture of an ILP system (IN 2.4 V)
)

// ErrPlanting reports a crop of the history that cannot be used: a missing
// field, an unknown purpose or an end before the start.
var ErrPlanting = errors.New("classify: invalid crop in history")

// Planting is one declared crop of a talhão's history (one row of crops.csv).
// Rows of the same agricultural year with the same purpose, start and end are
// one consortium (consorciação, IN 1.1 II) and count as one crop.
type Planting struct {
	AgriYear zarc.AgriYear // agricultural year the crop belongs to
	Crop     string        // common name: soja, milho, trigo, aveia-preta, braquiaria…
	Species  string        // botanical species, e.g. "Glycine max"
	Family   string        // botanical family, e.g. "Fabaceae", "Poaceae"
	Purpose  Purpose       // grain, cover, forage or pasture
	Start    time.Time     // sowing (or establishment) date
	End      time.Time     // harvest, desiccation or end of the crop
}

// validate checks the fields a planting needs.
func (p Planting) validate() error {
	switch {
	case strings.TrimSpace(p.Crop) == "":
		return fmt.Errorf("crop of %s: empty crop name: %w", p.AgriYear, ErrPlanting)
	case strings.TrimSpace(p.Species) == "":
		return fmt.Errorf("crop %q of %s: empty species: %w", p.Crop, p.AgriYear, ErrPlanting)
	case strings.TrimSpace(p.Family) == "":
		return fmt.Errorf("crop %q of %s: empty family: %w", p.Crop, p.AgriYear, ErrPlanting)
	case p.Start.IsZero() || p.End.IsZero():
		return fmt.Errorf("crop %q of %s: missing start or end date: %w", p.Crop, p.AgriYear, ErrPlanting)
	case p.End.Before(p.Start):
		return fmt.Errorf("crop %q of %s: end %s before start %s: %w", p.Crop, p.AgriYear,
			p.End.Format(time.DateOnly), p.Start.Format(time.DateOnly), ErrPlanting)
	}
	switch p.Purpose {
	case Grain, Cover, Forage, Pasture:
	default:
		return fmt.Errorf("crop %q of %s: purpose %q is not grain, cover, forage or pasture: %w",
			p.Crop, p.AgriYear, p.Purpose, ErrPlanting)
	}
	return nil
}

// norm lower-cases and trims a name.
func norm(s string) string { return strings.ToLower(strings.TrimSpace(s)) }

// family returns the normalised botanical family, folding the classical
// synonyms Leguminosae → fabaceae and Gramineae → poaceae.
func family(s string) string {
	switch f := norm(s); f {
	case "leguminosae":
		return "fabaceae"
	case "gramineae":
		return "poaceae"
	default:
		return f
	}
}

// isSoja reports whether p is soybean (Glycine max).
func isSoja(p Planting) bool {
	c, err := zarc.ParseCrop(p.Crop)
	return (err == nil && c == zarc.Soja) || strings.HasPrefix(norm(p.Species), "glycine max")
}

// isMilho reports whether p is maize (Zea mays).
func isMilho(p Planting) bool {
	c, err := zarc.ParseCrop(p.Crop)
	return (err == nil && c == zarc.Milho) || strings.HasPrefix(norm(p.Species), "zea mays")
}

// cultivo is one crop of the sequence: a single planting or a consortium.
type cultivo struct {
	year       zarc.AgriYear
	purpose    Purpose
	start, end time.Time
	members    []Planting
}

func (c cultivo) any(f func(Planting) bool) bool { return slices.ContainsFunc(c.members, f) }

func (c cultivo) all(f func(Planting) bool) bool {
	for _, p := range c.members {
		if !f(p) {
			return false
		}
	}
	return len(c.members) > 0
}

func (c cultivo) name() string {
	names := make([]string, len(c.members))
	for i, p := range c.members {
		names[i] = p.Crop
	}
	return strings.Join(names, "+")
}

// days is the length of the crop in days.
func (c cultivo) days() float64 { return c.end.Sub(c.start).Hours() / 24 }

// over45Days reports "por mais de 45 dias" (Tabela 1, D, levels 3 and 4).
func (c cultivo) over45Days() bool { return c.days() > 45 }

// over4Months reports "por mais de 4 meses": the end falls after the same
// day four calendar months after the start.
func (c cultivo) over4Months() bool { return c.end.After(c.start.AddDate(0, 4, 0)) }

// sequence groups the plantings of the given years into crops (consortia
// merged) sorted by start, then end, then name.
func sequence(history []Planting, years map[zarc.AgriYear]bool) []cultivo {
	type key struct {
		y          zarc.AgriYear
		p          Purpose
		start, end time.Time
	}
	idx := map[key]int{}
	var seq []cultivo
	for _, p := range history {
		if years != nil && !years[p.AgriYear] {
			continue
		}
		k := key{p.AgriYear, p.Purpose, p.Start, p.End}
		if i, ok := idx[k]; ok {
			seq[i].members = append(seq[i].members, p)
			continue
		}
		idx[k] = len(seq)
		seq = append(seq, cultivo{year: p.AgriYear, purpose: p.Purpose, start: p.Start, end: p.End, members: []Planting{p}})
	}
	slices.SortStableFunc(seq, func(a, b cultivo) int {
		if c := a.start.Compare(b.start); c != 0 {
			return c
		}
		if c := a.end.Compare(b.end); c != 0 {
			return c
		}
		return strings.Compare(a.name(), b.name())
	})
	return seq
}
