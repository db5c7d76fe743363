package coverage

import (
	"fmt"
	"time"

	"github.com/manejo/manejo/zarc"
)

// CropParams is what the cycle and sowing reading assume of a main crop
// (one row of the crop table, docs/coverage.md "Crops"). Source says where
// each value comes from; a value no document in hand gives is marked
// "unsourced" there.
type CropParams struct {
	Crop zarc.Crop
	// Kind: KindSummer (the 1ª safra, sown from the end of winter) or
	// KindWinter (sown in autumn, harvested before the next summer crop).
	Kind string
	// EmergenceDays is the range of days from sowing to emergence.
	EmergenceDays [2]int
	// CycleDays is the range of days from emergence to physiological
	// maturity; 0 leaves a side open. When set, the main cycle's length read
	// from NDVI must lie in it (CycleSlackDays of slack on each side).
	CycleDays [2]int
	// LagDays is the default Params.LagDays: sowing to the green-up
	// crossing at GreenUp 0.3.
	LagDays float64
	// Window is the default Params.Windows entry: the sowing window.
	Window [2]MonthDay
	Source string
}

// Kinds of crop in the crop table.
const (
	KindSummer = "verão (1ª safra)"
	KindWinter = "inverno"
)

// CycleSlackDays is how far the main cycle's emergence-to-senescence
// length read from NDVI (the green-up crossing minus the lag after
// emergence, to the senescence crossing) may lie outside its crop's
// CycleDays. Unsourced: NDVI crosses 30 % of its amplitude on the way down
// near, not at, physiological maturity, and a 10- to 16-day revisit dates
// both crossings to a few days.
const CycleSlackDays = 20

// soyCanopyLag is the days from emergence to the green-up crossing in
// soybean's calibrated lag (25.7 days from sowing, docs/coverage.md) less
// its mean emergence (7.5 days, ZARC's 5–10): the lag the crops without a
// calibration of their own take.
const soyCanopyLag = 25.7 - 7.5

// zarcEmergence is ZARC's sowing-to-emergence interval of annual crops:
// "um intervalo médio entre 5 e 10 dias para ocorrência da emergência"
// (Portaria SPA/MAPA 206/2026 item 3.1, soy; Portaria SPA/MAPA 305/2025,
// annex, item 3, cotton).
var zarcEmergence = [2]int{5, 10}

const (
	srcCotton = "cycle groups and emergence: Portaria SPA/MAPA 305/2025 (ZARC algodão herbáceo), annex items 1.I and 3; " +
		"window: its decêndios 1–12 (September–December) of the state it covers, not every state's; lag: soybean's, unsourced for cotton"
	srcUnsourced = "unsourced: no ZARC portaria of this crop in hand; window, cycle range and lag are agronomic rules of thumb " +
		"(lag: soybean's calibration), to be replaced when the crop's portaria is added"
)

// cropTable is the crop table. Soja and milho keep the calibrated lags
// and the windows of the Níveis de Manejo (docs/coverage.md); their
// cycle ranges are left open, as the calibration was made without one.
var cropTable = []CropParams{
	{Crop: zarc.Soja, Kind: KindSummer, EmergenceDays: zarcEmergence, LagDays: 25.7,
		Window: [2]MonthDay{{time.September, 15}, {time.December, 31}},
		Source: "emergence: Portaria SPA/MAPA 206/2026 item 3.1; lag: calibrated (docs/coverage.md); window: end of the sanitary break to December; " +
			"cycle open (ZARC simulates cultivars of 100, 115 and 130 days, item 1.9.2, not bounds)"},
	{Crop: zarc.Milho, Kind: KindSummer, EmergenceDays: zarcEmergence, LagDays: 29.6,
		Window: [2]MonthDay{{time.September, 1}, {time.December, 31}},
		Source: "lag: calibrated (docs/coverage.md); window: summer maize from September; emergence: ZARC's 5–10 days of annual crops; cycle open"},
	{Crop: zarc.Algodao, Kind: KindSummer, EmergenceDays: zarcEmergence, LagDays: 7.5 + soyCanopyLag,
		Window: [2]MonthDay{{time.September, 1}, {time.December, 31}}, Source: srcCotton + "; group unknown: cycle open"},
	{Crop: zarc.AlgodaoGrupo1, Kind: KindSummer, EmergenceDays: zarcEmergence, CycleDays: [2]int{0, 130}, LagDays: 7.5 + soyCanopyLag,
		Window: [2]MonthDay{{time.September, 1}, {time.December, 31}}, Source: srcCotton + "; Grupo I: n < 131 days"},
	{Crop: zarc.AlgodaoGrupo2, Kind: KindSummer, EmergenceDays: zarcEmergence, CycleDays: [2]int{131, 150}, LagDays: 7.5 + soyCanopyLag,
		Window: [2]MonthDay{{time.September, 1}, {time.December, 31}}, Source: srcCotton + "; Grupo II: 131 ≤ n ≤ 150 days"},
	{Crop: zarc.AlgodaoGrupo3, Kind: KindSummer, EmergenceDays: zarcEmergence, CycleDays: [2]int{151, 0}, LagDays: 7.5 + soyCanopyLag,
		Window: [2]MonthDay{{time.September, 1}, {time.December, 31}}, Source: srcCotton + "; Grupo III: n > 150 days"},
	{Crop: zarc.Trigo, Kind: KindWinter, EmergenceDays: zarcEmergence, CycleDays: [2]int{100, 140}, LagDays: 7.5 + soyCanopyLag,
		Window: [2]MonthDay{{time.March, 15}, {time.June, 30}}, Source: srcUnsourced},
	{Crop: zarc.Feijao, Kind: KindSummer, EmergenceDays: zarcEmergence, CycleDays: [2]int{60, 100}, LagDays: 7.5 + soyCanopyLag,
		Window: [2]MonthDay{{time.August, 15}, {time.November, 30}}, Source: srcUnsourced + " (feijão das águas, the 1ª safra)"},
}

// CropTable returns a copy of the crop table, one row per crop of
// zarc.Crops, in that order.
func CropTable() []CropParams { return append([]CropParams(nil), cropTable...) }

// cropOf returns the table row of crop.
func cropOf(crop zarc.Crop) (CropParams, bool) {
	for _, c := range cropTable {
		if c.Crop == crop {
			return c, true
		}
	}
	return CropParams{}, false
}

// cropLags and cropWindows are the table's default LagDays and Windows.
func cropLags() map[zarc.Crop]float64 {
	m := make(map[zarc.Crop]float64, len(cropTable))
	for _, c := range cropTable {
		m[c.Crop] = c.LagDays
	}
	return m
}

func cropWindows() map[zarc.Crop][2]MonthDay {
	m := make(map[zarc.Crop][2]MonthDay, len(cropTable))
	for _, c := range cropTable {
		m[c.Crop] = c.Window
	}
	return m
}

// emergenceLength is the days from emergence to the senescence crossing of
// cycle c as NDVI reads it: the green-up crossing less the crop's lag after
// emergence, to the senescence crossing.
func (p Params) emergenceLength(crop zarc.Crop, c Cycle, cp CropParams) float64 {
	afterEmergence := p.lag(crop) - float64(cp.EmergenceDays[0]+cp.EmergenceDays[1])/2
	return c.eos - c.sos + afterEmergence
}

// fitsCycle reports whether cycle c can be the main cycle of crop: its
// length from emergence lies in the crop's CycleDays, give or take
// CycleSlackDays (a censored side is not checked).
func (p Params) fitsCycle(crop zarc.Crop, c Cycle) bool {
	cp, ok := cropOf(crop)
	if !ok || cp.CycleDays == [2]int{} || c.StartCensored || c.EndCensored {
		return true
	}
	n := p.emergenceLength(crop, c, cp)
	lo, hi := cp.CycleDays[0], cp.CycleDays[1]
	return (lo == 0 || n >= float64(lo-CycleSlackDays)) && (hi == 0 || n <= float64(hi+CycleSlackDays))
}

// cycleRange describes crop's cycle range for messages ("" when open).
func cycleRange(crop zarc.Crop) string {
	cp, ok := cropOf(crop)
	if !ok || cp.CycleDays == [2]int{} {
		return ""
	}
	lo, hi := cp.CycleDays[0], cp.CycleDays[1]
	switch {
	case lo == 0:
		return fmt.Sprintf(" and lasting at most %d days from emergence (± %d)", hi, CycleSlackDays)
	case hi == 0:
		return fmt.Sprintf(" and lasting at least %d days from emergence (± %d)", lo, CycleSlackDays)
	}
	return fmt.Sprintf(" and lasting %d–%d days from emergence (± %d)", lo, hi, CycleSlackDays)
}
