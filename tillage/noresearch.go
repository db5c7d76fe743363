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

// soilKnobs is empty in the product: the step test's gate measures to
// p's soil (research.go holds the research runs' knobs).
type soilKnobs struct{}

// soil is false in the product: stepSoil is p's soil.
func (soilKnobs) soil(Params) (float64, bool) { return 0, false }

// stepTrendKnobs are off in the product: the step test judges two flat
// levels (trend.go holds the research runs' trend-judged step).
func stepTrendKnobs() trendKnobs { return trendKnobs{} }
