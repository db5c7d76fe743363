package export

import "testing"

// TestReasonText: a reason's text is its subject and detail, and reads
// back to the same subject and detail; a text without a known subject is a
// reason of its own.
func TestReasonText(t *testing.T) {
	for _, c := range []struct {
		r    Reason
		text string
	}{
		{Reason{Subject: SubjectT, Code: CodeUndecided, Detail: "insufficient history: T ≥ 4"}, "T: insufficient history: T ≥ 4"},
		{Reason{Subject: SubjectC, Code: CodeMissing, Detail: "C missing: 2023/2024: no sowing date"}, "C: C missing: 2023/2024: no sowing date"},
		{Reason{Subject: SubjectSlope, Code: CodeNoDEM, Detail: "no usable DEM (--dem)"}, "slope: no usable DEM (--dem)"},
		{Reason{Subject: SubjectSeries, Code: CodeCoarseRevisit, Detail: "revisit 20 days"}, "series: revisit 20 days"},
		{Reason{Subject: SubjectSINM, Code: CodePayloadFailed, Detail: "sinm: x"}, "sinm: sinm: x"},
		{Reason{Subject: SubjectArea, Code: CodeUnknownArea, Detail: "no area_ha"}, "area: no area_ha"},
		{Reason{Subject: SubjectCrop, Code: CodeUnknownCrop, Detail: "talhão A: trigo"}, "crop: talhão A: trigo"},
		{Reason{Code: CodeInvalidID, Detail: "talhão A: cpfProdutor is not a valid CPF"}, "talhão A: cpfProdutor is not a valid CPF"},
	} {
		if got := c.r.String(); got != c.text {
			t.Errorf("%+v: text %q, want %q", c.r, got, c.text)
		}
		back := ParseReason(c.text)
		if back.Subject != c.r.Subject || back.Detail != c.r.Detail || back.Code != "" {
			t.Errorf("%q read back as %+v, want subject %q and detail %q", c.text, back, c.r.Subject, c.r.Detail)
		}
	}
	if got := ParseReason("Tillage: x"); got.Subject != "" || got.Detail != "Tillage: x" {
		t.Errorf("unknown subject read as %+v", got)
	}
	if ReasonTexts(nil) != nil {
		t.Error("ReasonTexts(nil) is not nil: a talhão without reasons would get an empty list")
	}
}

// TestLevelReason: classify's reasons say "not classifiable" themselves;
// any other gets it in front.
func TestLevelReason(t *testing.T) {
	for reason, want := range map[string]string{
		NotClassifiable(" (Portaria 349 3.4): effective depth below Ze"): "not classifiable (Portaria 349 3.4): effective depth below Ze",
		"an indicator is missing (IN 2.2)":                               "not classifiable — an indicator is missing (IN 2.2)",
	} {
		if got := (ClassificationRow{Reason: reason}).LevelReason(); got != want {
			t.Errorf("LevelReason of %q = %q, want %q", reason, got, want)
		}
	}
}
