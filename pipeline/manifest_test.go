package pipeline

import (
	"strings"
	"testing"
	"time"
)

// TestManifestCoverageEffective: run.json's parameters.coverage showed
// Params{} as zeros, not the values used (issue 19 defect 12).
func TestManifestCoverageEffective(t *testing.T) {
	m := newManifest(Config{}, time.Now(), "test")
	if c := m.Parameters["coverage"]; !strings.Contains(c, "Lambda:50") || !strings.Contains(c, "WindowDays:30") || !strings.Contains(c, "soja:25.7") {
		t.Errorf("parameters.coverage = %s", c)
	}
}
