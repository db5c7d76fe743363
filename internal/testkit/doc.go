// Package testkit holds the helpers shared by the module's tests: float
// tolerances, hashes of an output tree, CSV fixtures, the process's CPU time
// for benchmarks, the plain baseline's largest firing drop and its threshold
// at a false-positive count (threshold.go). It is imported by _test.go files
// only (internal/archtest forbids production imports), and it imports
// nothing of this module, so the internal tests of any package, including
// the ones it would otherwise depend on, can use it.
//
// A helper belongs here once two packages' tests need it; a helper that
// needs a package's types (the export row fixture, for example) lives beside
// that package instead (export/exporttest).
package testkit
