package classify_test

import (
	"fmt"
	"time"

	"github.com/manejo/manejo/classify"
	"github.com/manejo/manejo/zarc"
)

func ExampleClassify() {
	d := func(s string) time.Time { t, _ := time.Parse(time.DateOnly, s); return t }
	crop := func(y int, name, species, fam string, p classify.Purpose, start, end string) classify.Planting {
		return classify.Planting{AgriYear: zarc.AgriYear(y), Crop: name, Species: species, Family: fam,
			Purpose: p, Start: d(start), End: d(end)}
	}
	in := classify.Input{
		FieldID: "talhao-7", Crop: zarc.Soja,
		CTC: new(8.2), VPct: new(58.0), // 5 ≤ CTC < 10, V ≥ 55: level 4
		Ca: new(1.2), MPct: new(12.0), // levels 3 and 2
		TYears: new(6.0), CPct: new(72.0), // levels 3 and 3
		SlopePct: new(4.5), ContourPct: new(90.0),
		EffectiveDepthCm: new(120.0), // ≥ Ze 60 cm of soybean
		History: []classify.Planting{
			crop(2022, "soja", "Glycine max", "Fabaceae", classify.Grain, "2022-10-10", "2023-02-15"),
			crop(2022, "milho", "Zea mays", "Poaceae", classify.Grain, "2023-02-20", "2023-07-10"),
			crop(2023, "soja", "Glycine max", "Fabaceae", classify.Grain, "2023-10-05", "2024-02-10"),
			crop(2023, "braquiaria", "Urochloa ruziziensis", "Poaceae", classify.Cover, "2024-02-20", "2024-08-30"),
			crop(2024, "soja", "Glycine max", "Fabaceae", classify.Grain, "2024-10-01", "2025-02-05"),
			crop(2024, "trigo", "Triticum aestivum", "Poaceae", classify.Grain, "2025-05-20", "2025-09-20"),
		},
	}
	r, err := classify.Classify(in)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, ind := range r.Indicators {
		fmt.Printf("%-3s %5g %-11s level %d\n", ind.Name, ind.Value, ind.Unit, ind.Level)
	}
	fmt.Printf("Mi %.2f → NM%d\n", r.Mi, r.MeanLevel)
	for _, rule := range r.Rules {
		fmt.Printf("%s: %s (NM%d → NM%d)\n", rule.ID, rule.Text, rule.Before, rule.After)
	}
	fmt.Printf("level NM%d decided by %s\n", r.Level, r.DecidingRule)
	// Output:
	// V%     58 %           level 4
	// Ca    1.2 cmolc dm⁻³  level 3
	// m%     12 %           level 2
	// T       6 years       level 3
	// C      72 %           level 3
	// D       6 crops       level 3
	// Mi 3.00 → NM3
	// Portaria 349 3.2.1 VI b: Mi 3.00 gives NM3 and m% 12 % is at level 2 (NM3 → NM3)
	// level NM3 decided by IN 3.2
}
