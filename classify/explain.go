package classify

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/manejo/manejo/export"
)

// Explanation is the machine-readable explanation of one Result: the
// objects `manejo classify --format json` prints and the `explanation`
// column of classification.parquet holds (docs/classify.md). Its JSON is part
// of the data schema: field names, order and null conventions must not change.
type Explanation struct {
	FieldID      string                        `json:"field_id"`
	Crop         string                        `json:"crop"`
	Level        *int                          `json:"level"` // null: not classifiable
	Mi           *float64                      `json:"mi"`    // rounded to 4 decimals; null when missing
	MeanLevel    *int                          `json:"mean_level"`
	Indicators   map[string]ExplainedIndicator `json:"indicators"` // by Indicator.Key
	Rules        []ExplainedRule               `json:"rules"`
	DecidingRule string                        `json:"deciding_rule"`
	Missing      []string                      `json:"missing"`
	Reason       string                        `json:"reason,omitempty"`
	DYears       []string                      `json:"d_years"` // agricultural years D looked at, "2024/2025"
}

// ExplainedIndicator is one indicator of an Explanation.
type ExplainedIndicator struct {
	Value  *float64 `json:"value"` // null: not measured
	Unit   string   `json:"unit"`
	Level  *int     `json:"level"` // null: not measured
	Points int      `json:"points"`
	Item   string   `json:"item"`
	Detail string   `json:"detail,omitempty"`
}

// ExplainedRule is one fired rule of an Explanation.
type ExplainedRule struct {
	Rule   string `json:"rule"`
	Text   string `json:"text"`
	Before *int   `json:"before"`
	After  *int   `json:"after"` // null: not classifiable
}

// optLevel returns nil for level 0 (none), else a pointer to n.
func optLevel(n int) *int {
	if n == 0 {
		return nil
	}
	return &n
}

// Explain returns the explanation of r.
func Explain(r Result) Explanation {
	e := Explanation{
		FieldID: r.FieldID, Crop: string(r.Crop), Level: optLevel(r.Level), MeanLevel: optLevel(r.MeanLevel),
		Indicators: map[string]ExplainedIndicator{}, Rules: []ExplainedRule{}, DecidingRule: r.DecidingRule,
		Missing: append([]string{}, r.Missing...), Reason: r.Reason, DYears: []string{},
	}
	if !math.IsNaN(r.Mi) {
		e.Mi = new(math.Round(r.Mi*1e4) / 1e4)
	}
	for _, ind := range r.Indicators {
		ei := ExplainedIndicator{Unit: ind.Unit, Level: optLevel(ind.Level), Points: ind.Points, Item: ind.Item, Detail: ind.Detail}
		if !math.IsNaN(ind.Value) {
			ei.Value = new(ind.Value)
		}
		e.Indicators[ind.Key] = ei
	}
	for _, x := range r.Rules {
		e.Rules = append(e.Rules, ExplainedRule{Rule: x.ID, Text: x.Text, Before: optLevel(x.Before), After: optLevel(x.After)})
	}
	for _, y := range r.Diversity.Years {
		e.DYears = append(e.DYears, y.String())
	}
	return e
}

// WriteJSON writes the explanations of results as one indented JSON array
// (`manejo classify --format json`).
func WriteJSON(w io.Writer, results []Result) error {
	out := make([]Explanation, len(results))
	for i, r := range results {
		out[i] = Explain(r)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		return fmt.Errorf("write json: %w", err)
	}
	return nil
}

// LevelName returns "NM1".."NM4", or "—" for 0 (not classifiable).
func LevelName(n int) string {
	if n == 0 {
		return "—"
	}
	return "NM" + strconv.Itoa(n)
}

// WriteTable prints one line per talhão (each indicator as value(level)),
// then the explanation: fired rules with the level before and after, and
// what is missing (`manejo classify --format table`).
func WriteTable(w io.Writer, results []Result) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "field_id\tcrop\tlevel\tMi\tV%\tCa\tm%\tT\tC\tD\tdeciding rule")
	for _, r := range results {
		fmt.Fprintln(tw, strings.Join(tableCells(r), "\t"))
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write table: %w", err)
	}
	fmt.Fprintln(w, "\nvalue(level) per indicator; levels from Tabela 1 (IN SPA/MAPA 2/2025); — = not measured / not classifiable")
	for _, r := range results {
		writeExplanationText(w, r)
	}
	return nil
}

// tableCells returns the cells of r's line in the table.
func tableCells(r Result) []string {
	mi := "—"
	if !math.IsNaN(r.Mi) {
		mi = strconv.FormatFloat(r.Mi, 'f', 2, 64)
	}
	cells := []string{r.FieldID, string(r.Crop), LevelName(r.Level), mi}
	for _, ind := range r.Indicators {
		if ind.Measured {
			// One decimal for reading; the level comes from the unrounded value.
			v := strconv.FormatFloat(math.Round(ind.Value*10)/10, 'f', -1, 64)
			cells = append(cells, fmt.Sprintf("%s(%d)", v, ind.Level))
		} else {
			cells = append(cells, "—")
		}
	}
	return append(cells, r.DecidingRule)
}

// writeExplanationText writes the explanation of r under the table.
func writeExplanationText(w io.Writer, r Result) {
	fmt.Fprintf(w, "\n%s (%s): %s", r.FieldID, r.Crop, LevelName(r.Level))
	if r.Level == 0 {
		fmt.Fprintf(w, " — %s", r.Reason)
	}
	fmt.Fprintln(w)
	if !math.IsNaN(r.Mi) {
		fmt.Fprintf(w, "  Mi = %.2f → %s (IN 3.2)\n", r.Mi, LevelName(r.MeanLevel))
	}
	for _, x := range r.Rules {
		fmt.Fprintf(w, "  %s: %s → %s: %s\n", x.ID, LevelName(x.Before), LevelName(x.After), x.Text)
	}
	for _, ind := range r.Indicators {
		if !ind.Measured || ind.Key == "d" {
			fmt.Fprintf(w, "  %s: %s\n", ind.Name, ind.Detail)
		}
	}
	if len(r.Missing) > 0 {
		fmt.Fprintf(w, "  missing: %s\n", strings.Join(r.Missing, ", "))
	}
	fmt.Fprintf(w, "  decided by %s\n", r.DecidingRule)
}

func opt32(n int) *int32 {
	if n == 0 {
		return nil
	}
	return new(int32(n))
}

func optValue(ind Indicator) *float64 {
	if math.IsNaN(ind.Value) {
		return nil
	}
	return new(ind.Value)
}

// Row returns the classification.parquet row of r, its explanation in the
// `explanation` column.
func Row(r Result) export.ClassificationRow {
	in := map[string]Indicator{}
	for _, ind := range r.Indicators {
		in[ind.Key] = ind
	}
	e := Explain(r)
	expl, _ := json.Marshal(e)
	row := export.ClassificationRow{
		FieldID: r.FieldID, Crop: string(r.Crop), Level: opt32(r.Level), Mi: e.Mi, MeanLevel: opt32(r.MeanLevel),
		DecidingRule: r.DecidingRule, Reason: r.Reason, Missing: slices.Clone(r.Missing),
		DYears: e.DYears, DDetail: in["d"].Detail, Explanation: string(expl),
		VPct: optValue(in["v_pct"]), VLevel: opt32(in["v_pct"].Level),
		Ca: optValue(in["ca"]), CaLevel: opt32(in["ca"].Level),
		MPct: optValue(in["m_pct"]), MLevel: opt32(in["m_pct"].Level),
		TYears: optValue(in["t"]), TLevel: opt32(in["t"].Level),
		CPct: optValue(in["c"]), CLevel: opt32(in["c"].Level),
		DLevel: opt32(in["d"].Level),
	}
	if d := in["d"]; d.Measured {
		row.DCrops = opt32(int(d.Value))
	}
	for _, x := range r.Rules {
		row.Rules = append(row.Rules, fmt.Sprintf("%s: %s → %s: %s", x.ID, LevelName(x.Before), LevelName(x.After), x.Text))
	}
	return row
}

// WriteParquet writes results as classification.parquet, stamped with the
// writing program's version.
func WriteParquet(w io.Writer, results []Result, version string) error {
	rows := make([]export.ClassificationRow, len(results))
	for i, r := range results {
		rows[i] = Row(r)
	}
	if err := export.Write(w, rows, export.Options{Version: version}); err != nil {
		return fmt.Errorf("write classification.parquet: %w", err)
	}
	return nil
}
