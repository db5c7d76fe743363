package classify

import (
	"testing"
	"time"

	"github.com/manejo/manejo/zarc"
)

const eps = 1e-9

func day(tb testing.TB, s string) time.Time {
	tb.Helper()
	d, err := time.Parse(time.DateOnly, s)
	if err != nil {
		tb.Fatal(err)
	}
	return d
}

// pl builds a planting; year is the first calendar year of the agricultural year.
func pl(tb testing.TB, year int, crop, species, fam string, p Purpose, start, end string) Planting {
	tb.Helper()
	return Planting{AgriYear: zarc.AgriYear(year), Crop: crop, Species: species, Family: fam, Purpose: p,
		Start: day(tb, start), End: day(tb, end)}
}

// Named crops used across tests.
func soja(tb testing.TB, y int, s, e string) Planting {
	return pl(tb, y, "soja", "Glycine max", "Fabaceae", Grain, s, e)
}
func milho(tb testing.TB, y int, s, e string) Planting {
	return pl(tb, y, "milho", "Zea mays", "Poaceae", Grain, s, e)
}
func trigo(tb testing.TB, y int, s, e string) Planting {
	return pl(tb, y, "trigo", "Triticum aestivum", "Poaceae", Grain, s, e)
}
func feijao(tb testing.TB, y int, s, e string) Planting {
	return pl(tb, y, "feijao", "Phaseolus vulgaris", "Fabaceae", Grain, s, e)
}

// richHistory is a three-year soybean rotation that reaches D level 4:
// 8 crops, 6 species, 3 families, 1 cover > 4 months with a grass
// (aveia-preta + nabo), 3 covers > 45 days (that one, braquiária 67 days,
// and trigo as third grain crop after milho 2ª safra standing in for a short
// cover, IN 2.4 I).
func richHistory(tb testing.TB) []Planting {
	return []Planting{
		soja(tb, 2022, "2022-10-10", "2023-02-15"),
		milho(tb, 2022, "2023-02-20", "2023-07-10"),
		pl(tb, 2022, "braquiaria", "Urochloa ruziziensis", "Poaceae", Cover, "2023-07-15", "2023-09-20"),
		soja(tb, 2023, "2023-10-05", "2024-02-10"),
		pl(tb, 2023, "aveia-preta", "Avena strigosa", "Poaceae", Cover, "2024-02-20", "2024-08-30"),
		pl(tb, 2023, "nabo-forrageiro", "Raphanus sativus", "Brassicaceae", Cover, "2024-02-20", "2024-08-30"),
		soja(tb, 2024, "2024-10-01", "2025-02-05"),
		milho(tb, 2024, "2025-02-10", "2025-06-20"),
		trigo(tb, 2024, "2025-06-25", "2025-09-30"),
	}
}
