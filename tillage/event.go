package tillage

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"time"
)

// ErrParams is wrapped by Params.Validate for any unusable parameter.
var ErrParams = errors.New("tillage: invalid parameter")

func paramError(name, msg string) error { return fmt.Errorf("%w: %s %s", ErrParams, name, msg) }

// Cell is one quadrícula's series as the talhão detector needs it.
type Cell struct {
	ID string
	// Border marks headland / edge cells (grid.Cell.Border): IN 2.3 allows
	// localized revolving there, so they never make an event on their own.
	Border bool
	Obs    []Obs
}

// Event is a talhão-level soil-revolving event (SINM interpretacoesManejo,
// operacao "Revolvimento do solo").
type Event struct {
	// Date is the event date reported to SINM: the median (lower median) of
	// the member interior cells' first post-break clear observation dates.
	// Before is the matching median of their last pre-break dates, After
	// equals Date; the operation happened in (Before, After].
	Date, Before, After time.Time
	// CellFraction is the share (0..1) of all the talhão's cells (interior
	// and border) with a break in the event's window.
	CellFraction float64
	// NCells counts the cells (interior and border) with a break in the
	// window; NInterior the interior ones among them.
	NCells, NInterior int
	// MagnitudeSigma is the median over member interior cells of their
	// break magnitude, in σ of each cell's own history.
	MagnitudeSigma float64
	// Operation is the SINM tipoOperacao guess. It is always "": ploughing,
	// harrowing, chiselling and subsoiling all bury straw and expose soil,
	// and NDVI/NDTI cannot tell them apart, so no guess is justified.
	Operation string
}

type cellBreak struct {
	cell   int
	border bool
	b      Break
}

// Detect runs DetectCell on every cell and groups the breaks into talhão
// events: interior-cell breaks whose dates chain within WindowDays of each
// other form one candidate, and it becomes an event when at least
// MinCellFraction of the interior cells (at least one cell) are in it. Border
// cells are counted in CellFraction and NCells but never make an event on
// their own (IN 2.3 III); a talhão without interior cells has no events.
// Events are in date order; nil when none or the parameters are invalid.
func Detect(cells []Cell, p Params) []Event {
	if p.Validate() != nil {
		return nil
	}
	nInt := 0
	var all []cellBreak
	for i, c := range cells {
		if !c.Border {
			nInt++
		}
		for _, b := range DetectCell(c.Obs, p) {
			all = append(all, cellBreak{cell: i, border: c.Border, b: b})
		}
	}
	if nInt == 0 || len(all) == 0 {
		return nil
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].b.Date.Before(all[j].b.Date) })
	need := int(math.Ceil(p.MinCellFraction*float64(nInt) - 1e-9))
	if need < 1 {
		need = 1
	}
	window := time.Duration(p.WindowDays) * 24 * time.Hour

	var out []Event
	for start := 0; start < len(all); {
		// Chain: each next break within window of the previous member.
		end := start + 1
		for end < len(all) && all[end].b.Date.Sub(all[end-1].b.Date) <= window {
			end++
		}
		if ev, ok := makeEvent(all[start:end], len(cells), need); ok {
			out = append(out, ev)
		}
		start = end
	}
	return out
}

// makeEvent turns a chain of breaks into an event when enough distinct
// interior cells take part. A cell breaking twice in one chain counts once,
// with its first break.
func makeEvent(chain []cellBreak, nCells, need int) (Event, bool) {
	seen := map[int]bool{}
	var interior []Break
	nc := 0
	for _, cb := range chain {
		if seen[cb.cell] {
			continue
		}
		seen[cb.cell] = true
		nc++
		if !cb.border {
			interior = append(interior, cb.b)
		}
	}
	if len(interior) < need {
		return Event{}, false
	}
	k := (len(interior) - 1) / 2 // lower median
	after := make([]time.Time, len(interior))
	before := make([]time.Time, len(interior))
	mags := make([]float64, len(interior))
	for i, b := range interior {
		after[i], before[i], mags[i] = b.After, b.Before, b.MagnitudeSigma
	}
	sort.Slice(after, func(i, j int) bool { return after[i].Before(after[j]) })
	sort.Slice(before, func(i, j int) bool { return before[i].Before(before[j]) })
	return Event{
		Date:           after[k],
		Before:         before[k],
		After:          after[k],
		CellFraction:   float64(nc) / float64(nCells),
		NCells:         nc,
		NInterior:      len(interior),
		MagnitudeSigma: median(mags),
	}, true
}
