package coverage

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/manejo/manejo/zarc"
)

// Portaria SPA/MAPA 305/2025 (ZARC algodão herbáceo), annex, item 1.I:
//
//	"As cultivares foram classificadas em três grupos de características
//	homogêneas, conforme a região geográfica, sendo: Grupo I (n < 131 dias);
//	Grupo II (131 dias ≤ n ≤ 150 dias); e Grupo III (n >150 dias); onde n
//	expressa o número de dias da emergência à maturação fisiológica."
//
// and item 3: "O risco do ciclo de cultivo estimado para cada decêndio de
// semeadura considera um intervalo médio entre 5 e 10 dias para ocorrência
// da emergência."
func TestCottonGroupsPortaria305(t *testing.T) {
	want := map[zarc.Crop][2]int{zarc.AlgodaoGrupo1: {0, 130}, zarc.AlgodaoGrupo2: {131, 150}, zarc.AlgodaoGrupo3: {151, 0}, zarc.Algodao: {}}
	for crop, cycle := range want {
		cp, ok := cropOf(crop)
		if !ok || cp.CycleDays != cycle || cp.EmergenceDays != [2]int{5, 10} || cp.Kind != KindSummer {
			t.Errorf("%s: %+v, want cycle %v days from emergence, emergence 5–10 days", crop, cp, cycle)
		}
		if !strings.Contains(cp.Source, "305/2025") {
			t.Errorf("%s: source %q does not cite the portaria", crop, cp.Source)
		}
	}
	for in, crop := range map[string]zarc.Crop{"Algodão grupo II": zarc.AlgodaoGrupo2, "algodao_grupo_3": zarc.AlgodaoGrupo3,
		"ALGODAO-GRUPO-I": zarc.AlgodaoGrupo1, "algodão": zarc.Algodao, " Feijão ": zarc.Feijao, "trigo": zarc.Trigo, "Soja": zarc.Soja} {
		if got, err := zarc.ParseCrop(in); err != nil || got != crop {
			t.Errorf("ParseCrop(%q) = %q, %v; want %q", in, got, err, crop)
		}
	}
	if _, err := zarc.ParseCrop("algodao-grupo-4"); err == nil {
		t.Error("ParseCrop accepted a fourth cotton group")
	}
}

// TestCropTableKeepsSoyMaize: soybean and maize keep their calibrated lags
// and windows and no cycle range (their detection was calibrated without
// one); every crop of zarc.Crops has a row, and the crops without a
// portaria in hand say so.
func TestCropTableKeepsSoyMaize(t *testing.T) {
	p := Params{}.Effective()
	if p.LagDays[zarc.Soja] != 25.7 || p.LagDays[zarc.Milho] != 29.6 {
		t.Errorf("lags %v, want soja 25.7 and milho 29.6", p.LagDays)
	}
	if p.Windows[zarc.Soja] != [2]MonthDay{{time.September, 15}, {time.December, 31}} || p.Windows[zarc.Milho] != [2]MonthDay{{time.September, 1}, {time.December, 31}} {
		t.Errorf("windows %v", p.Windows)
	}
	rows := CropTable()
	if len(rows) != len(zarc.Crops()) {
		t.Fatalf("%d rows for %d crops", len(rows), len(zarc.Crops()))
	}
	for i, c := range zarc.Crops() {
		r := rows[i]
		if r.Crop != c || r.LagDays <= 0 || r.Window[0].Month == 0 {
			t.Errorf("row %d: %+v, want crop %s with a lag and a window", i, r, c)
		}
		if (c == zarc.Soja || c == zarc.Milho) && r.CycleDays != [2]int{} {
			t.Errorf("%s: cycle range %v, want none", c, r.CycleDays)
		}
		if (c == zarc.Trigo || c == zarc.Feijao) && !strings.HasPrefix(r.Source, "unsourced") {
			t.Errorf("%s: source %q, want it marked unsourced", c, r.Source)
		}
	}
}

// cottonSeries is a talhão NDVI series every 5 days over one agricultural
// year: bare ground at 0.2, a crop sown on sow emerging 7 days later,
// closing its canopy (NDVI 0.85) in 45 days, senescing over its last 25
// days to physiological maturity n days after emergence.
func cottonSeries(sow time.Time, n int) []Obs {
	em := sow.AddDate(0, 0, 7)
	mat := em.AddDate(0, 0, n)
	var obs []Obs
	for d := day("2024-07-01"); d.Before(day("2025-09-30")); d = d.AddDate(0, 0, 5) {
		v := 0.2
		up := d.Sub(em).Hours() / 24 / 45
		down := mat.Sub(d).Hours() / 24 / 25
		if d.After(em) && d.Before(mat) {
			v = 0.2 + 0.65*math.Min(1, math.Min(up, down))
		}
		obs = append(obs, Obs{Date: d, NDVI: v, NDTI: math.NaN()})
	}
	return obs
}

// TestCottonGroupSelectsMainCycle: a cotton talhão's main cycle must have
// the length of its group: a 115-day cycle (Grupo I) is the main crop of a
// Grupo I talhão, sown within a week of the truth, and no Grupo III
// talhão's main crop (it needs more than 150 days, ± 20); a 175-day cycle
// the reverse. Cotton of unknown group takes either.
func TestCottonGroupSelectsMainCycle(t *testing.T) {
	season, _ := ParseSeason("2024/2025", MonthDay{})
	sow := day("2024-10-20")
	for _, c := range []struct {
		n          int
		fits, nots []zarc.Crop
	}{
		{115, []zarc.Crop{zarc.AlgodaoGrupo1, zarc.AlgodaoGrupo2, zarc.Algodao}, []zarc.Crop{zarc.AlgodaoGrupo3}},
		{175, []zarc.Crop{zarc.AlgodaoGrupo3, zarc.Algodao}, []zarc.Crop{zarc.AlgodaoGrupo1, zarc.AlgodaoGrupo2}},
	} {
		obs := cottonSeries(sow, c.n)
		for _, crop := range c.fits {
			sw, err := DetectSowing(obs, season, crop, Params{})
			if err != nil {
				t.Errorf("%d-day cycle as %s: %v", c.n, crop, err)
				continue
			}
			if d := math.Abs(sw.Date.Sub(sow).Hours() / 24); d > 7 {
				t.Errorf("%d-day cycle as %s: sowing %s, truth %s (%.0f days off)", c.n, crop, sw.Date.Format(time.DateOnly), sow.Format(time.DateOnly), d)
			}
		}
		for _, crop := range c.nots {
			_, err := DetectSowing(obs, season, crop, Params{})
			if !errors.Is(err, ErrNoMainCrop) || !strings.Contains(err.Error(), "days from emergence") {
				t.Errorf("%d-day cycle as %s: %v, want ErrNoMainCrop naming the cycle range", c.n, crop, err)
			}
		}
	}
}
