package zarc

import (
	"fmt"
	"strings"
)

// Crop names the main crop assessed for a talhão, as in the talhão property
// `crop`, the declared sowing CSV, an observation table's crop column and
// the classify inputs.
type Crop string

// Main crops covered: soybean (IN SPA/MAPA 2/2025) and maize (Portaria
// SPA/MAPA 349/2026, item 2.1).
const (
	Soja  Crop = "soja"
	Milho Crop = "milho"
)

// Crops whose cycles and sowing are read (coverage's crop table) beyond the
// two of the Níveis de Manejo. Cotton carries its ZARC group (Portaria
// SPA/MAPA 305/2025, annex, item 1.I: Grupo I n < 131 days, Grupo II
// 131 ≤ n ≤ 150, Grupo III n > 150, n the days from emergence to
// physiological maturity); Algodao is cotton of unknown group.
const (
	Algodao       Crop = "algodao"
	AlgodaoGrupo1 Crop = "algodao-grupo-1"
	AlgodaoGrupo2 Crop = "algodao-grupo-2"
	AlgodaoGrupo3 Crop = "algodao-grupo-3"
	Trigo         Crop = "trigo"
	Feijao        Crop = "feijao"
)

// Crops lists every crop ParseCrop accepts, in a fixed order.
func Crops() []Crop {
	return []Crop{Soja, Milho, Algodao, AlgodaoGrupo1, AlgodaoGrupo2, AlgodaoGrupo3, Trigo, Feijao}
}

// cropAliases are the other names of the main crops: English and
// botanical, as tables from outside Brazil write them (normalised as
// ParseCrop normalises).
var cropAliases = map[string]Crop{
	"corn": Milho, "maize": Milho, "zea-mays": Milho,
	"soy": Soja, "soya": Soja, "soybean": Soja, "soybeans": Soja, "glycine-max": Soja,
}

// ParseCrop reads a crop name: case, accents, spaces and underscores are
// forgiven ("Algodão grupo II", "algodao_grupo_2" and "algodao-grupo-2" are
// one crop; the group may be 1–3 or I–III), and the main crops' English and
// botanical names are read as them (corn, maize, Zea mays → milho; soy,
// soybean(s), Glycine max → soja).
func ParseCrop(s string) (Crop, error) {
	n := strings.ToLower(strings.TrimSpace(s))
	n = strings.NewReplacer("ã", "a", "á", "a", "â", "a", "é", "e", "ê", "e", "í", "i", "ó", "o", "ç", "c", "_", "-", " ", "-").Replace(n)
	for old, new := range map[string]string{"-iii": "-3", "-ii": "-2", "-i": "-1"} {
		if strings.HasSuffix(n, "grupo"+old) {
			n = strings.TrimSuffix(n, old) + new
		}
	}
	if c, ok := cropAliases[n]; ok {
		return c, nil
	}
	for _, c := range Crops() {
		if Crop(n) == c {
			return c, nil
		}
	}
	names := make([]string, 0, len(Crops()))
	for _, c := range Crops() {
		names = append(names, string(c))
	}
	return "", fmt.Errorf("crop %q: want one of %s (or corn, maize, soybean, Zea mays, Glycine max)", s, strings.Join(names, ", "))
}
