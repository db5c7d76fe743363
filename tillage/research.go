//go:build research

package tillage

// Research builds (go test -tags research: the accuracy harnesses and
// diagnostics, docs/tillage.md) turn plainUnmix, mdOff and stepOff into variables that the
// harness's flags set (research_test.go). The product is built
// without the tag (noresearch.go): a constant, no package-level state that
// a test could change.

// plainUnmix unmixes with spectral.New, the detector before the dry line,
// for before/after figures.
var plainUnmix bool

// mdOff and stepOff turn the median-NDTI drop test and the NDTI step test
// off (-nomediandrop, -nostep): the detector before each.
var mdOff, stepOff bool

// lowResOff turns the low-residue test off (-nolowresidue).
var lowResOff bool

// wetOff stops the low-residue test reading the ground's wetting response
// (-nowetresponse): the level judged against lowResidueCover alone, the
// detector before session 9.
var wetOff bool

// pooledShare is the share of the interior cells that must be clear on a
// date for the pooled series to read it (-pooledshare; 0.5 in the
// product).
var pooledShare = 0.5
