// Package classify previews the ZARC Níveis de Manejo level (NM1–NM4) of a
// talhão from its six indicators, as SINM will compute it once the three data
// subsets are registered (IN SPA/MAPA 2/2025, annex, items 2, 2.2, 2.4, 3.2,
// as amended by Portaria SPA/MAPA 349/2026, items 3.1, 3.2.1, 3.2.2 and 3.4;
// where the two differ the Portaria, the later text, stands).
//
// Inputs (Input): the soil analysis (CTC and V% in 0–20 cm, Ca and m% in
// 20–40 cm, effective soil depth), the remote-sensing indicators (T, C, mean
// slope, share of the area planted on contour), the declared crop history of
// the last three agricultural years (from which D is computed with the
// criteria of IN 2.4) and the main crop assessed (soja or milho).
//
// Output (Result): the level (1–4, or 0 when the talhão cannot be
// classified), the mean of the indicator points Mi, every indicator with its
// value, unit, level and points, every exclusion/downgrade rule that fired
// with the level before and after it, the rule that decided the level, and
// the list of what is missing.
//
// Levels of the six indicators follow Tabela 1 (VLevel, CaLevel, MLevel,
// zarc.TLevel, zarc.CLevel, Diversity); Band maps Mi to NM1–NM4 (IN 3.2 I–IV). The rules
// of 3.2.1 are cumulative and the lowest level wins (Portaria 349, 3.2.2).
// When the effective depth is below the root depth Ze of the crop's ZARC
// portaria the result is "not classifiable" (Portaria 349, 3.4); see
// docs/classify.md for why this is not modelled as a cap.
//
// The package is pure: of this module it imports only zarc (the crop, the
// agricultural year, the T and C rows of Tabela 1), does no I/O and keeps no
// state.
package classify
