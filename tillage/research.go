//go:build research

package tillage

// Research builds (go test -tags research: the accuracy harnesses and
// diagnostics, docs/tillage.md) turn plainUnmix into a variable that the
// harness's -plainunmix flag sets (research_test.go). The product is built
// without the tag (noresearch.go): a constant, no package-level state that
// a test could change.

// plainUnmix unmixes with spectral.New, the detector before the dry line,
// for before/after figures.
var plainUnmix bool
