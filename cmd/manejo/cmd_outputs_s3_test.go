package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/manejo/manejo/export"
	"github.com/manejo/manejo/storage"
	"github.com/manejo/manejo/storage/s3test"
)

// TestInspectAndValidateS3 runs inspect, sinm validate and report on an
// output folder in S3 (gofakes3): indicators split in parts, payloads under
// sinm/; the report is written back to S3.
func TestInspectAndValidateS3(t *testing.T) {
	example, err := os.ReadFile(filepath.Join("..", "..", "sinm", "testdata", "example-complete.json"))
	if err != nil {
		t.Fatal(err)
	}
	s3test.StartS3(t, "bucket")
	ctx := context.Background()
	base := "s3://bucket/runs/2026/out"
	rows := []export.IndicatorRow{
		{FieldID: "A", Crop: "soja", AreaHa: 12.5, NCells: 9, CPct: new(64.0), Status: export.StatusOK},
		{FieldID: "B", Crop: "milho", AreaHa: 150, NCells: 30, Status: export.StatusPartial, Reasons: []string{"C: no sowing detected"}},
	}
	for i, r := range rows {
		var b bytes.Buffer
		if err := export.Write(&b, []export.IndicatorRow{r}, export.Options{}); err != nil {
			t.Fatal(err)
		}
		if err := storage.WriteFile(ctx, storage.Join(base, export.PartName("indicators", i, 2)), b.Bytes()); err != nil {
			t.Fatal(err)
		}
	}
	storage.WriteFile(ctx, storage.Join(base, "run.json"), []byte(`{"tool":"manejo","version":"v9"}`))
	storage.WriteFile(ctx, storage.Join(base, "sinm", "A.json"), example)
	storage.WriteFile(ctx, storage.Join(base, "sinm", "B.json"), []byte(strings.Replace(string(example), `"porcentualPalhada": 35`, `"porcentualPalhada": 135`, 1)))

	var out, errb bytes.Buffer
	if code := runMain(ctx, []string{"inspect", base}, &out, &errb); code != exitOK {
		t.Fatalf("inspect s3: exit %d: %s", code, errb.String())
	}
	for _, want := range []string{"manejo v9 run", "A       soja   12.5", "B       milho  150.0", "2 talhões: 1 ok, 1 partial, 0 failed", "  B (partial)\n    C: no sowing detected\n"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("inspect output lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	if code := runMain(ctx, []string{"sinm", "validate", base}, &out, &errb); code != exitPartial {
		t.Errorf("sinm validate s3: exit %d, want %d\n%s%s", code, exitPartial, out.String(), errb.String())
	}
	for _, want := range []string{base + "/sinm/A.json: ok", base + "/sinm/B.json: $.interpretacoesCoberturaSolo[2].porcentualPalhada: ", "2 payload(s): 1 valid, 1 invalid"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("validate output lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	if code := runMain(ctx, []string{"report", "--in", base, "--out", base + "/report.html"}, &out, &errb); code != exitOK {
		t.Fatalf("report s3: exit %d: %s", code, errb.String())
	}
	if b, err := storage.ReadFile(ctx, base+"/report.html"); err != nil || !strings.Contains(string(b), "<html") || !strings.Contains(string(b), "milho") {
		t.Errorf("report.html in S3: %d bytes, %v", len(b), err)
	}
}
