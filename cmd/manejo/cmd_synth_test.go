package main

import (
	"strings"
	"testing"

	"github.com/manejo/manejo/sim/synth"
)

// TestSynthHelpSize (issue 28 point 10): synth --help said "(even, ≥ 512)
// (default 384)", a default its own rule refused; the rule it states is the
// one synth.Generate checks (384), and the default meets it.
func TestSynthHelpSize(t *testing.T) {
	_, _, stderr := runCLI(t, "synth", "--help")
	if !strings.Contains(stderr, "(even, ≥ 384) (default 384)") {
		t.Errorf("synth --help: %s", stderr)
	}
	if _, err := synth.Generate(t.Context(), synth.Options{Out: t.TempDir(), SceneSizePx: 382}); err == nil || !strings.Contains(err.Error(), "≥ 384") {
		t.Errorf("SceneSizePx 382: %v, want refused with ≥ 384", err)
	}
}
