// Package tillage finds soil-revolving events (ploughing, harrowing,
// chiselling, subsoiling) in per-cell NDVI/NDTI series and computes
// indicator T of the ZARC Níveis de Manejo: full years since the last
// revolving (IN SPA/MAPA 2/2025 item 2.1 IV and Tabela 1; Portaria SPA/MAPA
// 349/2026 item 6.8).
//
// Portaria 349 item 6.8 asks for "quebras estruturais de tendência (métrica
// estatística de desvio-padrão superior ao limiar histórico), validadas pelo
// índice NDTI". DetectCell does this per cell: each clear observation is
// unmixed into green-canopy, straw and bare-soil fractions (linear mixing
// of the reference endmembers of package spectral, solved in NDVI–NDTI
// space); a break is a rise of the soil level larger than K standard errors
// computed from the cell's own robust σ (a reweighted MAD of each
// observation's departure from its neighbours' trend), landing on exposed
// soil with little canopy and confirmed by the next clear observation(s). Harvest
// and desiccation move green to straw (NDTI stays up) and green-up lowers
// the soil fraction, so neither fires; a single-date unflagged cloud is not
// confirmed. A second test reads the straw share of the non-green part of
// the pixel, r = straw/(straw+soil): tillage divides it by the share of the
// straw it buries while green-up leaves it unchanged, so a relative drop
// of r beyond K σ catches chisel passes that leave the soil half covered
// and tillage first seen under an emerging crop.
//
// Detect groups cell breaks into talhão events (at least half of the
// interior cells within one window; border cells alone never make one, IN
// 2.3), and Years turns the events into T with its Tabela 1 level, censored
// when the history holds no event. Breaks is the generic univariate detector
// (e.g. NDVI alone) used for comparison with bfast.
//
// Inputs: slices of Obs (date, NDVI, NDTI; NaN = no clear value). Outputs:
// Break, Event, T values. Break and Event dates are observation dates as
// given (the pipeline passes calendar days, zarc.Day); Years and FullYears
// compare dates as UTC days. The package is pure: besides the standard
// library it imports only spectral, zarc and internal/num (no files, GDAL or
// context).
package tillage
