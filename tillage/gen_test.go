package tillage

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/manejo/manejo/sim/pheno"
)

// onScenario, when set, sees each scenario drawn (for diagnostics).
var onScenario func(*pheno.Scenario)

func testGenerator() generator { return &phenoGen{revisit: 5} }

// phenoGen draws talhões from sim/pheno: one field history (Random)
// seen by every cell, a 5-day revisit, clouds shared by the whole talhão
// (one scene covers it), and per-cell noise and unflagged residue.
type phenoGen struct {
	revisit int
	spectra pheno.Spectra   // the world (zero: the reference world)
	last    *pheno.Scenario // last scenario drawn
	truth   []time.Time
	border  time.Time // date of the last border-only tillage
}

var (
	genStart = time.Date(2019, 7, 1, 0, 0, 0, 0, time.UTC)
	genEnd   = time.Date(2023, 6, 30, 0, 0, 0, 0, time.UTC)
)

func (g *phenoGen) name() string {
	w := "reference"
	if g.spectra == pheno.SpectraVaried {
		w = "varied"
	}
	return fmt.Sprintf("sim/pheno Random (%s world) + Observe, %d-day revisit, %s..%s", w, g.revisit,
		genStart.Format(time.DateOnly), genEnd.Format(time.DateOnly))
}

func toObs(o []pheno.Obs) []Obs {
	out := make([]Obs, len(o))
	for i, x := range o {
		out[i] = Obs{Date: x.Date, NDVI: math.NaN(), NDTI: math.NaN()}
		if !x.Cloud {
			out[i].NDVI, out[i].NDTI = x.R.NDVI(), x.R.NDTI()
			out[i].Red, out[i].NIR, out[i].SWIR1, out[i].SWIR2 = x.R.Red, x.R.NIR, x.R.SWIR1, x.R.SWIR2
		}
	}
	return out
}

// scenario draws a field history, with at least one tillage inside the
// observed period when till, none at all otherwise.
func (g *phenoGen) scenario(rng *rand.Rand, till bool) *pheno.Scenario {
	for {
		o := pheno.Options{TillageProb: -1, Spectra: g.spectra}
		if till {
			o.TillageProb = 0.4
		}
		s := pheno.Random(rng, genStart, genEnd, o)
		if !till || len(g.truthDates(s)) > 0 {
			return s
		}
	}
}

// truthDates returns the tillage dates a detector can be held to: inside the
// observed period and at least 30 days before its end (a later one cannot
// be confirmed yet).
func (g *phenoGen) truthDates(s *pheno.Scenario) []time.Time {
	var out []time.Time
	for _, t := range s.Tillage {
		if t.Date.After(genStart) && t.Date.Before(genEnd.AddDate(0, 0, -30)) {
			out = append(out, t.Date)
		}
	}
	return out
}

func (g *phenoGen) borderDate() time.Time { return g.border }

func (g *phenoGen) strawDrop(i int) float64 {
	t := g.truth[i]
	_, before, _ := g.last.Fractions(t.AddDate(0, 0, -1))
	_, after, _ := g.last.Fractions(t)
	return before - after
}

func (g *phenoGen) talhao(rng *rand.Rand, till, borderOnly bool, nInt, nBorder int) ([]Cell, []time.Time) {
	s := g.scenario(rng, till)
	if onScenario != nil {
		onScenario(s)
	}
	var truth []time.Time
	if till {
		truth = g.truthDates(s)
	}
	g.last, g.truth = s, truth
	border := s
	if borderOnly {
		// Headland revolving only (IN 2.3 III), some weeks before a sowing.
		mains := s.MainCycles()
		c := mains[1+rng.IntN(len(mains)-2)]
		g.border = c.Sowing.AddDate(0, 0, -5-rng.IntN(20))
		border = s.WithTillage(pheno.Tillage{Date: g.border, Kind: "GRADAGEM", Retention: 0.15})
	}
	dates := pheno.Revisit(genStart, genEnd, g.revisit)
	// Cell 0 carries the scene's clouds; the other cells share them.
	sky := s.Observe(rng, dates, pheno.ObsOptions{})
	var cells []Cell
	for i := 0; i < nInt+nBorder; i++ {
		sc, b := s, false
		if i >= nInt {
			sc, b = border, true
		}
		var obs []pheno.Obs
		if i == 0 && sc == s {
			obs = sky
		} else {
			obs = sc.Observe(rng, dates, pheno.ObsOptions{CloudScale: 1e-9})
			for k := range obs {
				obs[k].Cloud = sky[k].Cloud
				if sky[k].Residue && !obs[k].Residue && rng.Float64() < 0.5 {
					obs[k].Residue = true
					obs[k].R = pheno.Cloudy(rng, obs[k].R)
				}
			}
		}
		cells = append(cells, Cell{ID: fmt.Sprint(i), Border: b, Obs: toObs(obs)})
	}
	return cells, truth
}
