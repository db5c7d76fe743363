package sinm

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/manejo/manejo/export"
)

var demoOut = flag.String("out", "", "a 'manejo run' output folder (e.g. build/demo/out after make demo) whose payloads to check with the JSON Schema")

// TestRunOutputPayloads checks the payloads of a real run's output folder:
// every payload validates, and each talhão of indicators.parquet with a
// usable status has one.
//
//	make demo && go test ./sinm -run RunOutput -out build/demo/out -v
func TestRunOutputPayloads(t *testing.T) {
	if *demoOut == "" {
		t.Skip("no -out DIR given")
	}
	inds, err := export.ReadDataset[export.IndicatorRow](os.DirFS(*demoOut))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range inds {
		p := filepath.Join(*demoOut, PayloadName(r.FieldID))
		b, err := os.ReadFile(p)
		if err != nil {
			if r.Status != export.StatusFailed {
				t.Errorf("talhão %s (%s): no payload: %v", r.FieldID, r.Status, err)
			}
			continue
		}
		if v := ValidatePayload(bytes.NewReader(b)); v != nil {
			t.Errorf("%s: %v", p, v)
		}
	}
	t.Logf("%d talhões, payloads checked", len(inds))
}
