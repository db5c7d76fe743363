package export_test

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/manejo/manejo/export"
)

var demoOut = flag.String("out", "", "a 'manejo run' output folder (e.g. build/demo/out after make demo) to check with arrow-go")

// TestRunOutput checks a real run's output folder: every Parquet file is read
// by arrow-go with the expected column types and row counts, and cells carry
// GeoParquet metadata (sinm's TestRunOutputPayloads checks the payloads).
//
//	make demo && go test ./export -run RunOutput -out build/demo/out -v
func TestRunOutput(t *testing.T) {
	if *demoOut == "" {
		t.Skip("no -out DIR given")
	}
	fsys := os.DirFS(*demoOut)
	for _, ds := range export.Datasets {
		files, err := export.DatasetFiles(fsys, ds.Name)
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
			if ds.Name == export.Cells.Name && !strings.Contains(af.kv["geo"], `"version":"1.1.0"`) {
				t.Errorf("%s: geo metadata %q", name, af.kv["geo"])
			}
			rows += len(af.rows)
		}
		t.Logf("%s: %d file(s), %d rows", ds.Name, len(files), rows)
	}
}
