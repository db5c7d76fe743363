package classify

import (
	"testing"

	"github.com/manejo/manejo/zarc"
)

// FuzzClassify checks two invariants over arbitrary inputs:
//   - the level is always 1–4, or 0 ("not classifiable") with a reason;
//   - adding a downgrade rule never raises the level: making the talhão
//     violate contour planting (IN 3.2.1 I), adding soja on soja in one
//     agricultural year (Portaria 349 3.2.1 II) or cutting the effective depth
//     below Ze (Portaria 349 3.4) gives a level ≤ the original one.
func FuzzClassify(f *testing.F) {
	f.Add(8.0, 60.0, 2.0, 2.0, 10.0, 95.0, 1.0, 100.0, 100.0, uint8(0), false, uint16(0xffff))
	f.Add(4.0, 34.9, 0.49, 20.0, 2.9, 29.9, 3.0, 74.9, 59.9, uint8(1), true, uint16(0xffff))
	f.Add(12.0, 55.0, 1.0, 10.0, 5.0, 60.0, 12.0, 80.0, 40.0, uint8(2), false, uint16(0x00ff))
	f.Add(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, uint8(3), true, uint16(0))
	f.Fuzz(func(t *testing.T, ctc, v, ca, m, tYears, c, slope, contour, depth float64, hist uint8, milho bool, present uint16) {
		in := Input{FieldID: "fuzz", Crop: zarc.Soja}
		if milho {
			in.Crop, in.ZeCm = zarc.Milho, new(50.0)
		}
		// Each bit of present keeps one value; a cleared bit leaves it missing.
		vals := []struct {
			dst **float64
			v   float64
		}{
			{&in.CTC, ctc}, {&in.VPct, v}, {&in.Ca, ca}, {&in.MPct, m}, {&in.TYears, tYears},
			{&in.CPct, c}, {&in.SlopePct, slope}, {&in.ContourPct, contour}, {&in.EffectiveDepthCm, depth},
		}
		for i, x := range vals {
			if present&(1<<i) != 0 {
				*x.dst = new(x.v)
			}
		}
		histories := []func(testing.TB) []Planting{
			func(tb testing.TB) []Planting { return richHistory(tb) },
			func(tb testing.TB) []Planting { return legumeHistory(tb.(*testing.T), false) },
			func(tb testing.TB) []Planting { return grassHistory(tb.(*testing.T)) },
			func(tb testing.TB) []Planting { return nil },
		}
		in.History = histories[int(hist)%len(histories)](t)

		r, err := Classify(in)
		if err != nil {
			return // out-of-range values are rejected, not classified
		}
		check := func(what string, r Result) {
			if r.Level < 0 || r.Level > 4 {
				t.Fatalf("%s: level %d outside 0–4", what, r.Level)
			}
			if (r.Level == 0) != (r.Reason != "") {
				t.Fatalf("%s: level %d with reason %q", what, r.Level, r.Reason)
			}
			if r.Level > 0 && (r.Level > r.MeanLevel || len(r.Missing) > 0) {
				t.Fatalf("%s: level %d above the Mi level %d or with missing %v", what, r.Level, r.MeanLevel, r.Missing)
			}
		}
		check("original", r)

		downgrades := map[string]func(in *Input){
			"contour": func(in *Input) { in.SlopePct, in.ContourPct = new(10.0), new(0.0) },
			"depth":   func(in *Input) { in.EffectiveDepthCm, in.ZeCm = new(10.0), new(60.0) },
		}
		if len(in.History) > 0 {
			downgrades["soja on soja"] = func(in *Input) {
				in.History = append(in.History, soja(t, 2024, "2024-10-01", "2025-02-05"))
			}
		}
		for name, mod := range downgrades {
			in2 := in
			in2.History = append([]Planting(nil), in.History...)
			mod(&in2)
			r2, err := Classify(in2)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			check(name, r2)
			if r.Level > 0 && r2.Level > r.Level {
				t.Fatalf("adding %s raised the level from %d to %d", name, r.Level, r2.Level)
			}
			if r.Level > 0 && r2.Level == r.Level && r.Level > 1 && name != "soja on soja" {
				t.Fatalf("adding %s left level %d unchanged", name, r.Level)
			}
		}
	})
}

// FuzzSettle checks the rule engine alone: any set of caps applied to any Mi
// level gives a level within 0–4 equal to the minimum, and one more cap
// never raises it (Portaria 349 3.2.2: cumulative, the lowest wins).
func FuzzSettle(f *testing.F) {
	f.Add(uint8(4), []byte{1, 2, 3}, uint8(2))
	f.Add(uint8(3), []byte{}, uint8(0))
	f.Fuzz(func(t *testing.T, mean uint8, caps []byte, extra uint8) {
		m := int(mean%4) + 1
		var fired []Rule
		want := m
		for _, c := range caps {
			fired = append(fired, Rule{ID: "r", Cap: int(c % 5)})
			want = min(want, int(c%5))
		}
		level, rules, deciding := settle(m, append([]Rule(nil), fired...))
		if level != want || level < 0 || level > 4 {
			t.Fatalf("settle(%d, %v) = %d, want %d", m, caps, level, want)
		}
		if (level == m) != (deciding == DecidedByMean) {
			t.Fatalf("settle(%d, %v): level %d deciding %q", m, caps, level, deciding)
		}
		for i, r := range rules {
			if r.After > r.Before || (i > 0 && r.Before != rules[i-1].After) {
				t.Fatalf("rule %d: before %d after %d", i, r.Before, r.After)
			}
		}
		more, _, _ := settle(m, append(fired, Rule{ID: "x", Cap: int(extra % 5)}))
		if more > level {
			t.Fatalf("one more cap raised the level from %d to %d", level, more)
		}
	})
}
