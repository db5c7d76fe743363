package slope

import (
	"fmt"
	"math"

	"github.com/manejo/manejo/internal/num"
)

// ContourThresholdPct is the mean slope, in percent, from which contour
// planting is mandatory (IN SPA/MAPA 2/2025, item 3.2.1 I: "para áreas com
// declividade ≥ 3%, é obrigatória a semeadura em contorno").
const ContourThresholdPct = 3.0

// Stats summarizes the slope, in percent, of the DEM pixels whose centre lies
// inside a talhão.
type Stats struct {
	MeanPct   float64 // mean slope of the valid pixels, percent (unrounded)
	MedianPct float64 // median, percent (linear interpolation between order statistics)
	P90Pct    float64 // 90th percentile, percent (same interpolation)
	NPixels   int     // pixels whose centre is inside the talhão, void or not
	NVoid     int     // of those, pixels with no slope (nodata, edge, outside the DEM)
	// VoidFraction is NVoid/NPixels, 0..1.
	VoidFraction float64
}

// Summarize returns the Stats of the slope values slopePct (percent) where
// mask is true; NaN values are voids. Percentiles use linear interpolation
// between order statistics (numpy's default, Hyndman–Fan type 7). It returns
// an error wrapping ErrAllVoid when no masked value is valid, and one
// wrapping ErrBadInput when the lengths differ or the mask is empty.
func Summarize(slopePct []float32, mask []bool) (Stats, error) {
	if len(slopePct) != len(mask) {
		return Stats{}, fmt.Errorf("summarize: %d values, %d mask cells: %w", len(slopePct), len(mask), ErrBadInput)
	}
	var st Stats
	vals := make([]float64, 0, 256)
	for i, in := range mask {
		if !in {
			continue
		}
		st.NPixels++
		v := float64(slopePct[i])
		if math.IsNaN(v) || math.IsInf(v, 0) {
			st.NVoid++
			continue
		}
		vals = append(vals, v)
	}
	if st.NPixels == 0 {
		return st, fmt.Errorf("summarize: no pixel in mask: %w", ErrBadInput)
	}
	st.VoidFraction = float64(st.NVoid) / float64(st.NPixels)
	if len(vals) == 0 {
		return st, fmt.Errorf("summarize: %d of %d pixels void: %w", st.NVoid, st.NPixels, ErrAllVoid)
	}
	sum := 0.0
	for _, v := range vals {
		sum += v
	}
	st.MeanPct = sum / float64(len(vals))
	st.MedianPct = num.Quantile(vals, 0.5)
	st.P90Pct = num.Quantile(vals, 0.9)
	return st, nil
}

// Result is the slope outcome of one talhão, as the pipeline and SINM need it.
type Result struct {
	FieldID string
	Stats
	// ContourRequired is MeanPct ≥ 3.0 on the unrounded mean (IN 3.2.1 I).
	ContourRequired bool
	// DeclividadeMedia is MeanPct rounded to the nearest integer percent
	// (halves away from zero), the integer SINM receives.
	DeclividadeMedia int
	// RoundingCrosses3 is true when DeclividadeMedia and the unrounded mean
	// fall on different sides of the 3 % line (mean in [2.5, 3.0)): SINM
	// would read 3 % while contour planting is not required.
	RoundingCrosses3 bool
	// PixelXM and PixelYM are the DEM pixel sizes in metres at the talhão.
	PixelXM, PixelYM float64
	// Warnings are human-readable notes (rounding across 3 %, voids,
	// fallback pixel); empty when there is nothing to say.
	Warnings []string
	// PlantioContorno and Terraceamento are the talhão's declared values
	// (0 or 1, nil when absent), passed through to the SINM payload.
	PlantioContorno *int
	Terraceamento   *int
}

// NewResult derives the contour-planting decision, the rounded
// declividadeMedia and the warnings from the Stats of talhão id.
func NewResult(id string, st Stats) Result {
	r := Result{FieldID: id, Stats: st}
	r.ContourRequired = st.MeanPct >= ContourThresholdPct
	r.DeclividadeMedia = int(math.Round(st.MeanPct))
	r.RoundingCrosses3 = (float64(r.DeclividadeMedia) >= ContourThresholdPct) != r.ContourRequired
	if r.RoundingCrosses3 {
		r.Warnings = append(r.Warnings, fmt.Sprintf(
			"mean slope %.3f%% rounds to declividadeMedia %d%%, across the 3%% line; contour_required uses the unrounded value (%t)",
			st.MeanPct, r.DeclividadeMedia, r.ContourRequired))
	}
	if st.NVoid > 0 {
		r.Warnings = append(r.Warnings, fmt.Sprintf("%d of %d DEM pixels void (%.1f%%), left out of the mean",
			st.NVoid, st.NPixels, 100*st.VoidFraction))
	}
	return r
}
