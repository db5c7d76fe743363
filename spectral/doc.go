// Package spectral holds the one endmember set of manejo (green canopy, dry
// crop straw, bare soil) and the linear spectral unmixing that splits a
// reading into the fractions of those three surfaces.
//
// Unmixer works in index space: from a reading's NDVI and NDTI it returns
// the green, straw and soil fractions (tillage uses them to see soil exposed
// by revolving, coverage to read straw cover through young weeds). Both
// read with NewDry, which places straw and soil on one dry line so that
// NDVI variation among dry residues and soils is not read as green canopy.
// Coefficients and FitSoil work on the four reflectances (Spectrum): FitSoil
// fits one field's own soil from many of its readings, which coverage uses
// in place of the reference soil.
//
// Pure: it imports only the standard library.
package spectral
