package classify

import (
	"errors"
	"slices"
	"testing"

	"github.com/manejo/manejo/zarc"
)

func TestDiversity(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		item    string // regulation item checked
		history func(t *testing.T) []Planting
		want    DiversityDetail // checked fields: Level, Crops, Species, Families, LongCovers, Covers45, Substitutes, ILP, Forage
	}{
		{
			name: "rich rotation reaches level 4",
			item: "Tabela 1 row 6, level 4: ≥6 crops, ≥4 species, 2 families, 1 cover >4 months E 2 covers >45 days",
			history: func(t *testing.T) []Planting {
				return richHistory(t)
			},
			want: DiversityDetail{Level: 4, Crops: 8, Species: 6, Families: 3, LongCovers: 1, Covers45: 3, Substitutes: 1},
		},
		{
			name: "without the trigo substitute only 2 covers >45 days: level 3 (1 long cover)",
			item: "Tabela 1 row 6, level 3 OR branch: 1 cover >4 months; level 4 needs 2 more covers >45 days",
			history: func(t *testing.T) []Planting {
				h := richHistory(t)
				return h[:len(h)-1]
			},
			want: DiversityDetail{Level: 3, Crops: 7, Species: 5, Families: 3, LongCovers: 1, Covers45: 2},
		},
		{
			name: "trigo as second grain crop of the year is not a substitute",
			item: "IN 2.4 I (terceira safra: 'trigo ou aveia branca após milho 2ª safra')",
			history: func(t *testing.T) []Planting {
				h := richHistory(t)
				return slices.Delete(h, 7, 8) // drop milho 2ª safra: 2024/2025 is soja, trigo (2nd grain, sown 25 June, after autumn)
			},
			want: DiversityDetail{Level: 3, Crops: 7, Species: 6, Families: 3, LongCovers: 1, Covers45: 2},
		},
		{
			name: "three short covers >45 days without a long one: level 3",
			item: "Tabela 1 row 6, level 3: OR 3 covers (single or consortium) >45 days each",
			history: func(t *testing.T) []Planting {
				return []Planting{
					soja(t, 2022, "2022-10-10", "2023-02-15"),
					pl(t, 2022, "milheto", "Pennisetum glaucum", "Poaceae", Cover, "2023-02-20", "2023-04-10"), // 49 days
					soja(t, 2023, "2023-10-05", "2024-02-10"),
					pl(t, 2023, "crotalaria", "Crotalaria juncea", "Fabaceae", Cover, "2024-02-20", "2024-04-10"), // 50 days
					soja(t, 2024, "2024-10-01", "2025-02-05"),
					pl(t, 2024, "milheto", "Pennisetum glaucum", "Poaceae", Cover, "2025-02-10", "2025-03-28"), // 46 days
				}
			},
			want: DiversityDetail{Level: 3, Crops: 6, Species: 3, Families: 2, Covers45: 3},
		},
		{
			name: "a cover of exactly 45 days does not count",
			item: "Tabela 1 row 6: 'por mais de 45 dias'",
			history: func(t *testing.T) []Planting {
				return []Planting{
					soja(t, 2022, "2022-10-10", "2023-02-15"),
					pl(t, 2022, "milheto", "Pennisetum glaucum", "Poaceae", Cover, "2023-02-20", "2023-04-10"),
					soja(t, 2023, "2023-10-05", "2024-02-10"),
					pl(t, 2023, "crotalaria", "Crotalaria juncea", "Fabaceae", Cover, "2024-02-20", "2024-04-10"),
					soja(t, 2024, "2024-10-01", "2025-02-05"),
					pl(t, 2024, "milheto", "Pennisetum glaucum", "Poaceae", Cover, "2025-02-10", "2025-03-27"), // 45 days
				}
			},
			want: DiversityDetail{Level: 2, Crops: 6, Species: 3, Families: 2, Covers45: 2},
		},
		{
			name: "a long cover without a grass is not the '>4 months' cover",
			item: "IN 2.4 IV: covers over 4 months must include grasses",
			history: func(t *testing.T) []Planting {
				h := richHistory(t)
				// Replace the aveia+nabo consortium by nabo alone (Brassicaceae), still > 4 months.
				h = slices.Delete(h, 4, 5)
				return h[:len(h)-1] // and drop the trigo substitute
			},
			want: DiversityDetail{Level: 2, Crops: 7, Species: 4, Families: 3, LongCovers: 0, LongCoversNoGrass: 1, Covers45: 2},
		},
		{
			name: "4 months exactly is not 'more than 4 months'",
			item: "Tabela 1 row 6: 'por mais de 4 meses'",
			history: func(t *testing.T) []Planting {
				h := richHistory(t)
				h[4].End, h[5].End = day(t, "2024-06-20"), day(t, "2024-06-20")
				return h[:len(h)-1]
			},
			// aveia+nabo now 4 months exactly → short cover; covers >45 days: it and braquiária = 2 → level 2.
			want: DiversityDetail{Level: 2, Crops: 7, Species: 5, Families: 3, Covers45: 2},
		},
		{
			name: "4 crops, 2 species, 2 families: level 2",
			item: "Tabela 1 row 6, level 2: minimum 4 crops with at least 2 species and 2 families",
			history: func(t *testing.T) []Planting {
				return []Planting{
					soja(t, 2022, "2022-10-10", "2023-02-15"),
					milho(t, 2022, "2023-02-20", "2023-07-10"),
					soja(t, 2023, "2023-10-05", "2024-02-10"),
					soja(t, 2024, "2024-10-01", "2025-02-05"),
				}
			},
			want: DiversityDetail{Level: 2, Crops: 4, Species: 2, Families: 2},
		},
		{
			name: "3 crops: level 1",
			item: "Tabela 1 row 6, level 1: requirements of the other levels not met",
			history: func(t *testing.T) []Planting {
				return []Planting{
					soja(t, 2022, "2022-10-10", "2023-02-15"),
					milho(t, 2023, "2023-10-05", "2024-02-10"),
					soja(t, 2024, "2024-10-01", "2025-02-05"),
				}
			},
			want: DiversityDetail{Level: 1, Crops: 3, Species: 2, Families: 2},
		},
		{
			name: "4 crops of one family: level 1",
			item: "Tabela 1 row 6, level 2 needs 2 botanical families",
			history: func(t *testing.T) []Planting {
				return []Planting{
					soja(t, 2022, "2022-10-10", "2023-02-15"),
					feijao(t, 2022, "2023-02-20", "2023-05-10"),
					soja(t, 2023, "2023-10-05", "2024-02-10"),
					soja(t, 2024, "2024-10-01", "2025-02-05"),
				}
			},
			want: DiversityDetail{Level: 1, Crops: 4, Species: 2, Families: 1},
		},
		{
			name: "silage is not counted as a crop",
			item: "IN 2.4 III: conserved forage not counted for the minimum number of crops",
			history: func(t *testing.T) []Planting {
				return []Planting{
					soja(t, 2022, "2022-10-10", "2023-02-15"),
					pl(t, 2022, "milho-silagem", "Zea mays", "Poaceae", Forage, "2023-02-20", "2023-06-10"),
					soja(t, 2023, "2023-10-05", "2024-02-10"),
					soja(t, 2024, "2024-10-01", "2025-02-05"),
				}
			},
			want: DiversityDetail{Level: 1, Crops: 3, Forage: 1, Species: 2, Families: 2},
		},
		{
			name:    "ILP pasture of 12 months meets the count of crops",
			item:    "IN 2.4 V: ILP pasture ≥12 months replaces the NM4 minimum number of crops",
			history: func(t *testing.T) []Planting { return ilpHistory(t, "2023-10-01") },
			// 5 crops < 6, but ILP meets the count; 6 species, 3 families, 1 long cover with a grass + 2 more >45 days.
			want: DiversityDetail{Level: 4, Crops: 5, Species: 6, Families: 3, LongCovers: 1, Covers45: 3, ILP: true},
		},
		{
			name:    "pasture of 11 months is not ILP",
			item:    "IN 2.4 V: '12 meses ou mais'",
			history: func(t *testing.T) []Planting { return ilpHistory(t, "2023-09-30") },
			want:    DiversityDetail{Level: 2, Crops: 5, Species: 6, Families: 3, LongCovers: 1, Covers45: 3},
		},
		{
			name: "buckwheat in the autumn window after soybean stands in for a short cover",
			item: "IN 2.4 I: janela outonal (trigo mourisco between soybean harvest and wheat sowing)",
			history: func(t *testing.T) []Planting {
				return []Planting{
					soja(t, 2022, "2022-10-10", "2023-02-15"),
					pl(t, 2022, "aveia-preta", "Avena strigosa", "Poaceae", Cover, "2023-02-20", "2023-08-01"),
					soja(t, 2023, "2023-10-05", "2024-02-10"),
					pl(t, 2023, "milheto", "Pennisetum glaucum", "Poaceae", Cover, "2024-02-15", "2024-04-15"),
					soja(t, 2024, "2024-10-01", "2025-03-15"),
					pl(t, 2024, "trigo-mourisco", "Fagopyrum esculentum", "Polygonaceae", Grain, "2025-03-25", "2025-05-30"),
					trigo(t, 2024, "2025-06-05", "2025-10-10"),
				}
			},
			// Covers >45 d: aveia (long, grass), milheto, buckwheat (substitute); trigo is third of its year → substitute too.
			want: DiversityDetail{Level: 4, Crops: 7, Species: 5, Families: 3, LongCovers: 1, Covers45: 4, Substitutes: 2},
		},
		{
			name: "crops outside the three years are ignored",
			item: "Tabela 1 row 6: 'nos últimos três anos agrícolas'",
			history: func(t *testing.T) []Planting {
				return append([]Planting{
					milho(t, 2021, "2021-10-10", "2022-02-15"),
					trigo(t, 2021, "2022-05-20", "2022-09-20"),
				}, []Planting{
					soja(t, 2022, "2022-10-10", "2023-02-15"),
					soja(t, 2023, "2023-10-05", "2024-02-10"),
					soja(t, 2024, "2024-10-01", "2025-02-05"),
				}...)
			},
			want: DiversityDetail{Level: 1, Crops: 3, Species: 1, Families: 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Diversity(tt.history(t), nil)
			if err != nil {
				t.Fatal(err)
			}
			w := tt.want
			if got.Level != w.Level || got.Crops != w.Crops || got.Species != w.Species || got.Families != w.Families ||
				got.LongCovers != w.LongCovers || got.LongCoversNoGrass != w.LongCoversNoGrass || got.Covers45 != w.Covers45 ||
				got.Substitutes != w.Substitutes || got.ILP != w.ILP || got.Forage != w.Forage {
				t.Errorf("%s: Diversity = %+v\nwant %+v", tt.item, got, w)
			}
		})
	}
}

func TestDiversityWindow(t *testing.T) {
	t.Parallel()
	h := richHistory(t)
	// An explicit window with a year without crops: D is not informed (IN 2.2).
	d, err := Diversity(h, WindowYears(2025))
	if err != nil {
		t.Fatal(err)
	}
	if d.Level != 0 || !slices.Equal(d.EmptyYears, []zarc.AgriYear{2025}) {
		t.Errorf("window ending 2025/2026: Level %d EmptyYears %v, want 0 [2025]", d.Level, d.EmptyYears)
	}
	if got := d.String(); got != "no crop declared in 2025/2026" {
		t.Errorf("String() = %q", got)
	}
	if got := WindowYears(2024); !slices.Equal(got, []zarc.AgriYear{2022, 2023, 2024}) {
		t.Errorf("WindowYears(2024) = %v", got)
	}
	// Empty history: level 0, no error.
	if d, err := Diversity(nil, nil); err != nil || d.Level != 0 {
		t.Errorf("Diversity(nil) = %+v, %v", d, err)
	}
}

func TestDiversityErrors(t *testing.T) {
	t.Parallel()
	base := soja(t, 2024, "2024-10-01", "2025-02-05")
	tests := []struct {
		name string
		mod  func(p *Planting)
	}{
		{"end before start", func(p *Planting) { p.End = day(t, "2024-09-01") }},
		{"empty species", func(p *Planting) { p.Species = " " }},
		{"empty family", func(p *Planting) { p.Family = "" }},
		{"empty crop", func(p *Planting) { p.Crop = "" }},
		{"unknown purpose", func(p *Planting) { p.Purpose = "silage" }},
		{"zero start", func(p *Planting) { p.Start = day(t, "0001-01-01") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := base
			tt.mod(&p)
			if _, err := Diversity([]Planting{p}, nil); !errors.Is(err, ErrPlanting) {
				t.Errorf("Diversity(%s) error = %v, want ErrPlanting", tt.name, err)
			}
		})
	}
}

// ilpHistory is an ILP rotation with a pasture from 2022-10-01 to pastureEnd.
func ilpHistory(t *testing.T, pastureEnd string) []Planting {
	return []Planting{
		pl(t, 2022, "braquiaria", "Urochloa brizantha", "Poaceae", Pasture, "2022-10-01", pastureEnd),
		soja(t, 2023, "2023-10-05", "2024-02-10"),
		pl(t, 2023, "aveia-preta", "Avena strigosa", "Poaceae", Cover, "2024-02-20", "2024-08-30"),
		pl(t, 2023, "nabo-forrageiro", "Raphanus sativus", "Brassicaceae", Cover, "2024-02-20", "2024-08-30"),
		pl(t, 2024, "milheto", "Pennisetum glaucum", "Poaceae", Cover, "2024-09-01", "2024-10-30"),
		pl(t, 2024, "crotalaria", "Crotalaria juncea", "Fabaceae", Cover, "2025-03-01", "2025-05-01"),
	}
}
