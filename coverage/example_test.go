package coverage_test

import (
	"fmt"
	"math"
	"time"

	"github.com/manejo/manejo/coverage"
	"github.com/manejo/manejo/zarc"
)

// A talhão of two cells in no-till: a soybean crop sown each mid-October
// on 70 % straw. Assess finds each sowing from NDVI (here a day or two late)
// and reads the straw cover in the 30 days before it, unmixing each
// reading into green, straw and soil.
func ExampleAssess() {
	contract, _ := coverage.ParseSeason("2026/2027", coverage.MonthDay{})
	var p coverage.Params
	base, straw := p.Mix(0, 0.7, 0.3) // NDVI and NDTI of 70 % straw over soil
	var cell []coverage.Obs
	for d := time.Date(2023, 5, 1, 0, 0, 0, 0, time.UTC); d.Before(time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC)); d = d.AddDate(0, 0, 5) {
		sow := time.Date(d.Year(), 10, 15, 0, 0, 0, 0, time.UTC)
		if d.Month() < time.July {
			sow = sow.AddDate(-1, 0, 0)
		}
		x := d.Sub(sow).Hours() / 24
		ndvi := base + 0.7/(1+math.Exp(-(x-32)/5))*(1-1/(1+math.Exp(-(x-110)/4)))
		cell = append(cell, coverage.Obs{Date: d, NDVI: ndvi, NDTI: straw})
	}
	c := coverage.Assess([][]coverage.Obs{cell, cell}, contract, nil, zarc.Soja, p)
	for _, s := range c.Seasons {
		fmt.Printf("%s sowing %s (%s, decêndio %d) cover %.0f %% from %d cells\n", s.Season.Label,
			s.Sowing.Date.Format(time.DateOnly), s.Sowing.Source, s.Sowing.Decendio, s.CoverPct, s.NCells)
	}
	fmt.Printf("C = %.0f %%, level %d\n", c.Pct, c.Level)
	// Output:
	// 2023/2024 sowing 2023-10-17 (detected, decêndio 29) cover 70 % from 2 cells
	// 2024/2025 sowing 2024-10-16 (detected, decêndio 29) cover 70 % from 2 cells
	// 2025/2026 sowing 2025-10-16 (detected, decêndio 29) cover 70 % from 2 cells
	// C = 70 %, level 3
}

// A reading of 25 % green weeds over 37.5 % straw and 37.5 % soil: the
// NDTI alone, mapped between bare soil and full straw, reads far more
// straw than there is, because green canopy has the highest NDTI. The
// unmixing takes some of that out. One reading says nothing of the
// field's dry surfaces, so Fractions reads only NDVI above 0.35 (the top
// of dry residues' NDVI) as green: below it, a few percent of weeds cannot
// be told from a bright residue, and the straw is read from NDTI alone. A
// talhão's series (UnmixReadings, Assess) lowers that line to just above
// its straw's and soil's NDVI (docs/coverage.md, "The dry line").
func ExampleParams_Fractions() {
	var p coverage.Params
	ndvi, ndti := p.Mix(0.25, 0.375, 0.375)
	g, s, b := p.Fractions(ndvi, ndti)
	fmt.Printf("NDVI %.3f NDTI %.3f → green %.2f straw %.2f soil %.2f\n", ndvi, ndti, g, s, b)
	bare, straw := 0.055, 0.246 // the NDTI estimators' BareNDTI and StrawNDTI
	fmt.Printf("NDTI mapped linearly: %.0f %% straw\n", 100*(ndti-bare)/(straw-bare))
	// Output:
	// NDVI 0.386 NDTI 0.183 → green 0.06 straw 0.62 soil 0.33
	// NDTI mapped linearly: 67 % straw
}
