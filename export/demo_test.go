package export

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var demoOut = flag.String("out", "", "a 'manejo run' output folder (e.g. build/demo/out after make demo) to check with arrow-go and the JSON Schema")

// TestRunOutput checks a real run's output folder: every Parquet file is read
// by arrow-go with the expected column types and row counts, cells carry
// GeoParquet metadata, every payload validates, and each talhão of
// indicators.parquet with a usable status has a payload.
//
//	make demo && go test ./export -run RunOutput -out build/demo/out -v
func TestRunOutput(t *testing.T) {
	if *demoOut == "" {
		t.Skip("no -out DIR given")
	}
	fsys := os.DirFS(*demoOut)
	for _, ds := range Datasets {
		files, err := DatasetFiles(fsys, ds.Name)
		if err != nil {
			t.Errorf("%s: %v", ds.Name, err)
			continue
		}
		rows := 0
		for _, name := range files {
			b, err := os.ReadFile(filepath.Join(*demoOut, name))
			if err != nil {
				t.Fatal(err)
			}
			af := readArrow(t, b)
			got := columnTypes(af)
			for col, want := range wantTypes[ds.Name] {
				if got[col] != want {
					t.Errorf("%s column %s: %q, want %q", name, col, got[col], want)
				}
			}
			if ds.Name == Cells.Name && !strings.Contains(af.kv["geo"], `"version":"1.1.0"`) {
				t.Errorf("%s: geo metadata %q", name, af.kv["geo"])
			}
			rows += len(af.rows)
		}
		t.Logf("%s: %d file(s), %d rows", ds.Name, len(files), rows)
	}
	inds, err := ReadDataset[IndicatorRow](fsys)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range inds {
		p := filepath.Join(*demoOut, PayloadName(r.FieldID))
		b, err := os.ReadFile(p)
		if err != nil {
			if r.Status != StatusFailed {
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
