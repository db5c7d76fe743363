package coverage

import (
	"fmt"
	"math"
	"time"

	"github.com/manejo/manejo/zarc"
)

// Sources of a sowing date (seasons.parquet sowing_source).
const (
	SourceDeclared = "declared" // from the operator's --sowing file
	SourceDetected = "detected" // from the NDVI series
)

// Sowing is the sowing of the main crop in one agricultural year.
type Sowing struct {
	Date   time.Time // sowing day, UTC midnight
	Source string    // SourceDeclared or SourceDetected
	Crop   zarc.Crop // main crop
	// Confidence is 1 for declared dates; for detected ones the product of
	// the cycle's amplitude (full at 0.4 NDVI), the clear observations
	// around its green-up (full at 3 within ±25 days) and 0.6 when the
	// date had to be moved into the sowing window.
	Confidence Ratio
	// Decendio is the ZARC sowing period of Date, 1..36 (Portaria
	// 206/2026 item 3.3), to compare with the municipality's window.
	Decendio int
	// Reason says how the date was found, or why confidence is low.
	Reason string
}

// DetectSowing finds the sowing of the main crop of season from a talhão
// NDVI series: the first cycle of the season (see Cycles) whose green-up,
// minus the crop's LagDays, falls within WindowSlackDays of the crop's sowing
// window; the result is clamped into the window. When the series shows no
// cycle it returns ErrNoCropCycle; when no cycle fits the window,
// ErrNoMainCrop. It never guesses a date (IN 2/2025 item 2.2).
func DetectSowing(obs []Obs, season Season, crop zarc.Crop, p Params) (Sowing, error) {
	p = p.withDefaults()
	s := smoothNDVI(obs, p.Lambda, p.RobustIter)
	if s == nil {
		return Sowing{}, fmt.Errorf("detect sowing %s: %w: fewer than 4 clear NDVI readings", season.Label, ErrNoCropCycle)
	}
	sw, _, err := detect(s, season, crop, p)
	return sw, err
}

func detect(s *daily, season Season, crop zarc.Crop, p Params) (Sowing, []Cycle, error) {
	cs, main := seasonCycles(s, season, crop, p)
	if len(cs) == 0 {
		return Sowing{}, cs, fmt.Errorf("detect sowing %s: %w (no NDVI peak ≥ %.2f rising %.2f above its surroundings)",
			season.Label, ErrNoCropCycle, p.MinPeak, p.MinAmplitude)
	}
	ws, we := p.window(crop, season)
	if main < 0 {
		return Sowing{}, cs, fmt.Errorf("detect sowing %s: %w: %d cycle(s), none sown within %d days of %s..%s%s for %s",
			season.Label, ErrNoMainCrop, len(cs), p.WindowSlackDays, ws.Format(time.DateOnly), we.Format(time.DateOnly), cycleRange(crop), crop)
	}
	c := cs[main]
	d := sowingOf(s, c, p.lag(crop))
	conf := math.Min(1, c.amL/0.4)
	n := 0
	for i := max(0, int(c.sos)-25); i <= min(len(s.nObs)-1, int(c.sos)+25); i++ {
		if s.nObs[i] > 0 && s.w[i] > 0.5 {
			n++
		}
	}
	conf *= math.Min(1, float64(n)/3)
	reason := fmt.Sprintf("green-up %s (NDVI %.2f→%.2f) minus %.0f days", c.Start.Format(time.DateOnly), c.baseL, c.PeakNDVI, p.lag(crop))
	if d.Before(ws) || d.After(we) {
		raw := d
		if d.Before(ws) {
			d = ws
		} else {
			d = we
		}
		conf *= 0.6
		reason += fmt.Sprintf("; %s moved into the sowing window %s..%s", raw.Format(time.DateOnly), ws.Format(time.DateOnly), we.Format(time.DateOnly))
	}
	if n < 3 {
		reason += fmt.Sprintf("; only %d clear reading(s) within 25 days of green-up", n)
	}
	return Sowing{
		Date:       d,
		Source:     SourceDetected,
		Crop:       crop,
		Confidence: Ratio(math.Round(conf*100) / 100),
		Decendio:   zarc.Decendio(d),
		Reason:     reason,
	}, cs, nil
}
