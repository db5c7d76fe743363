package client

import (
	"fmt"
	"math"
	"strings"

	"github.com/manejo/manejo/export"
)

// indicatorOf maps a SINM indicator name to the preview's indicator (V, Ca,
// m, T, C, D; "" when unknown), by accent-free, lower-case substrings.
func indicatorOf(nome string) string {
	n := fold(nome)
	switch {
	case n == "m" || n == "m%" || strings.Contains(n, "aluminio"):
		return "m"
	case n == "v" || n == "v%" || strings.Contains(n, "saturacaoporbase") || strings.Contains(n, "saturacaodebase"):
		return "V"
	case n == "ca" || strings.Contains(n, "calcio"):
		return "Ca"
	case n == "t" || strings.Contains(n, "revolvimento") || strings.Contains(n, "tempo"):
		return "T"
	case n == "c" || strings.Contains(n, "cobertura") || strings.Contains(n, "palha"):
		return "C"
	case n == "d" || strings.Contains(n, "diversidade") || strings.Contains(n, "rotacao"):
		return "D"
	}
	return ""
}

// fold lower-cases s, drops Portuguese accents and everything but letters,
// digits and '%'.
func fold(s string) string {
	r := strings.NewReplacer("á", "a", "à", "a", "â", "a", "ã", "a", "é", "e", "ê", "e", "í", "i", "ó", "o", "ô", "o", "õ", "o", "ú", "u", "ç", "c")
	s = r.Replace(strings.ToLower(s))
	return strings.Map(func(c rune) rune {
		if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '%' {
			return c
		}
		return -1
	}, s)
}

// previewLevels are the preview's indicator levels by indicator.
func previewLevels(p export.ClassificationRow) map[string]*int32 {
	return map[string]*int32{"V": p.VLevel, "Ca": p.CaLevel, "m": p.MLevel, "T": p.TLevel, "C": p.CLevel, "D": p.DLevel}
}

// compare lists where SINM's answer (row) differs from the preview p, like
// with like and saying which is which (issue 28 point 7): the management
// level (NM1–NM4), Mi (scoreMedio, to 0.01) and each indicator's Tabela 1
// level (scoreParcial, 1–4), naming the indicator.
func compare(row export.SINMResultRow, scores map[string]float64, p export.ClassificationRow) []string {
	var out []string
	if lv := optInt(row.Level); lv != optInt(p.Level) {
		out = append(out, fmt.Sprintf("management level: SINM %s, preview %s", nm(row.Level), nm(p.Level)))
	}
	if row.ScoreMedio != nil && p.Mi != nil && math.Abs(*row.ScoreMedio-*p.Mi) > 0.005 {
		out = append(out, fmt.Sprintf("Mi: SINM %.2f, preview %.2f", *row.ScoreMedio, *p.Mi))
	}
	levels := previewLevels(p)
	for _, code := range []string{"V", "Ca", "m", "T", "C", "D"} {
		score, ok := scores[code]
		if pl := levels[code]; ok && (pl == nil || float64(*pl) != score) {
			out = append(out, fmt.Sprintf("%s indicator level (Tabela 1, 1–4): SINM %v, preview %s", code, score, indicatorLevel(pl)))
		}
	}
	return out
}

// indicatorLevel writes a preview's indicator level, "not measured" when
// it has none.
func indicatorLevel(p *int32) string {
	if p == nil {
		return "not measured"
	}
	return fmt.Sprint(*p)
}

func optInt(p *int32) int32 {
	if p == nil {
		return 0
	}
	return *p
}

func nm(p *int32) string {
	if p == nil {
		return "none"
	}
	return fmt.Sprintf("NM%d", *p)
}
