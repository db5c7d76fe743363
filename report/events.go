package report

import (
	"fmt"
	"html"
	"io"
	"strings"

	"github.com/manejo/manejo/export"
)

// writeEvents adds one facts row per tillage event with its evidence
// (issue 30): the interval it happened in, the test that found it and its
// size in standard errors, the drop of the talhão's median NDTI against
// its noise with the dates of both levels, the points that agree and the
// sensors that saw it.
func writeEvents(w io.Writer, events []export.EventRow, nCells int32) {
	for _, e := range events {
		drop := "NDTI drop not readable"
		if e.NDTIDrop != nil && e.NDTINoise != nil {
			drop = fmt.Sprintf("NDTI −%.3f ± %.3f", *e.NDTIDrop, *e.NDTINoise)
		}
		test := e.Test
		if test == "" {
			test = "test not recorded"
		}
		sensors := "sensors not recorded"
		if len(e.Sensors) > 0 {
			sensors = strings.Join(e.Sensors, ", ")
		}
		fmt.Fprintf(w, `<tr><td>revolving</td><td>%s, in (%s, %s] · %s %.1f σ · %s (%d + %d dates) · %d of %d points agree · %s</td></tr>`,
			e.Date, e.Before, e.After, html.EscapeString(test), e.MagnitudeSigma, drop, e.DatesBefore, e.DatesAfter,
			e.NInterior, nCells, html.EscapeString(sensors))
	}
}
