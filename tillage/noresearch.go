//go:build !research

package tillage

// plainUnmix is false in the product: tillage unmixes on the dry line
// (newUnmixer). research.go, built with -tags research, makes it a
// variable for the harness's before/after figures.
const plainUnmix = false

// mdOff and stepOff are false in the product: Detect runs every test.
const mdOff, stepOff = false, false

// lowResOff is false in the product: Detect reads short pieces' residue level.
const lowResOff = false

// wetOff is false in the product: the low-residue test reads the ground's
// wetting response.
const wetOff = false

// pooledShare is the share of the interior cells that must be clear on a
// date for the pooled series (pooled) to read it: half.
const pooledShare = 0.5

// dateScale is the noise scale of a date of the step series read from
// share of the interior cells: 1 in the product (research.go weighs the
// dates read from fewer than half for the -pooledweight runs).
func dateScale(float64) float64 { return 1 }

// stepPooled is the pooled series the step test reads: pl, Detect's own
// (research.go may read the step test's dates at another share).
func stepPooled(_ [][]Obs, pl []pooledObs) []pooledObs { return pl }

// soilKnobs is empty in the product: the step test's gate measures to
// p's soil (research.go holds the research runs' knobs).
type soilKnobs struct{}

// soil is false in the product: stepSoil is p's soil.
func (soilKnobs) soil(Params) (float64, bool) { return 0, false }

// stepTrendKnobs are off in the product: the step test judges two flat
// levels (trend.go holds the research runs' trend-judged step).
func stepTrendKnobs() trendKnobs { return trendKnobs{} }
