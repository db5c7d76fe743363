package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"slices"
	"strings"

	"github.com/manejo/manejo/classify"
	"github.com/manejo/manejo/sinm"
	"github.com/manejo/manejo/storage"
	"github.com/manejo/manejo/zarc"
)

func init() {
	register(&command{name: "classify", synopsis: "preview the management level NM1–NM4 of each talhão, with the rule that decides it (IN 2/2025 3.2, Portaria 349/2026)", run: runClassify})
}

type classifyFlags struct {
	soil, crops, rsDir, rsCSV, format, out, agriYear, ze string
}

func parseClassifyFlags(args []string, stderr io.Writer) (classifyFlags, error) {
	fs := newFlagSet("classify", "classify --soil soil.csv --crops crops.csv (--rs DIR | --rs-csv rs.csv) [--format table|json] [--out DIR]", stderr)
	var f classifyFlags
	fs.StringVar(&f.soil, "soil", "", "soil analyses CSV: "+strings.Join(classify.SoilColumns, ",")+" (required)")
	fs.StringVar(&f.crops, "crops", "", "crop history CSV: "+strings.Join(classify.CropsColumns, ",")+" (required)")
	fs.StringVar(&f.rsDir, "rs", "", "output folder of 'manejo run' (local or s3://): reads indicators.parquet (T, C, slope, crop)")
	fs.StringVar(&f.rsCSV, "rs-csv", "", "remote-sensing CSV: "+strings.Join(classify.RemoteSensingColumns, ",")+"; with --rs, its non-empty cells override the folder's values")
	fs.StringVar(&f.format, "format", "table", "stdout format: table or json")
	fs.StringVar(&f.out, "out", "", "folder (local or s3://) to write classification.parquet into")
	fs.StringVar(&f.agriYear, "agri-year", "", "last agricultural year of the three D looks at, e.g. 2025/2026 (default: the latest agri_year in --crops)")
	fs.StringVar(&f.ze, "ze", "", "effective root depth Ze in cm by crop, crop=cm,... (default soja=60, Portaria SPA/MAPA 206/2026 1.9.3; maize has no default)")
	if err := parseFlags(fs, args); err != nil {
		return f, err
	}
	switch {
	case f.soil == "":
		return f, usagef("--soil is required")
	case f.crops == "":
		return f, usagef("--crops is required")
	case f.rsDir == "" && f.rsCSV == "":
		return f, usagef("one of --rs or --rs-csv is required")
	case f.format != "table" && f.format != "json":
		return f, usagef("--format must be table or json, not %q", f.format)
	case f.out != "":
		return f, writableLoc("--out", f.out)
	}
	return f, nil
}

func runClassify(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	f, err := parseClassifyFlags(args, stderr)
	if err != nil {
		return err
	}
	src, err := classifySources(ctx, f)
	if err != nil {
		return err
	}
	b, err := classify.Preview(src)
	if err != nil {
		return err
	}
	if f.out != "" {
		loc := storage.Join(f.out, "classification.parquet")
		var buf bytes.Buffer
		if err := classify.WriteParquet(&buf, b.Results, version); err != nil {
			return err
		}
		if err := storage.WriteFile(ctx, loc, buf.Bytes()); err != nil {
			return fmt.Errorf("write %s: %w", loc, err)
		}
	}
	if f.format == "json" {
		err = classify.WriteJSON(stdout, b.Results)
	} else {
		err = classify.WriteTable(stdout, b.Results)
	}
	if err != nil {
		return err
	}
	if len(b.Rejected) > 0 {
		for _, id := range slices.Sorted(maps.Keys(b.Rejected)) {
			for _, msg := range b.Rejected[id] {
				fmt.Fprintf(stderr, "manejo classify: talhão %s: %s\n", id, msg)
			}
		}
		return partialError(len(b.Rejected), len(b.Rejected)+len(b.Results))
	}
	return nil
}

// classifySources reads the inputs named by the flags: the CSVs whole, the
// run folder through storage.FS (local or S3, by range).
func classifySources(ctx context.Context, f classifyFlags) (classify.Sources, error) {
	var src classify.Sources
	var err error
	if src.Ze, err = classify.ParseZe(f.ze); err != nil {
		return src, usagef("--ze: %v", err)
	}
	if f.agriYear != "" {
		if src.LastYear, err = zarc.ParseAgriYear(f.agriYear); err != nil {
			return src, usagef("--agri-year: %v", err)
		}
	}
	if src.Soil, err = readInput(ctx, f.soil); err != nil {
		return src, err
	}
	if src.Crops, err = readInput(ctx, f.crops); err != nil {
		return src, err
	}
	if f.rsDir != "" {
		if src.Run, err = openOutput(ctx, f.rsDir); err != nil {
			return src, err
		}
		src.RunName = f.rsDir
		src.Declared = declaredPractices(src.Run)
	}
	if f.rsCSV != "" {
		if src.RemoteSensing, err = readInput(ctx, f.rsCSV); err != nil {
			return src, err
		}
	}
	return src, nil
}

// declaredPractices reads a talhão's declared plantioContorno from its SINM
// payload in the run's output folder (sinm/<id>.json): the talhões file's
// declaration, carried into the preview (issue 28 point 3).
func declaredPractices(run fs.FS) func(string) (int, bool) {
	return func(id string) (int, bool) {
		b, err := fs.ReadFile(run, sinm.PayloadName(id))
		if err != nil {
			return 0, false
		}
		var p struct {
			PlantioContorno *int `json:"plantioContorno"`
		}
		if json.Unmarshal(b, &p) != nil || p.PlantioContorno == nil {
			return 0, false
		}
		return *p.PlantioContorno, true
	}
}

// readInput reads the CSV at loc (local, s3:// or http(s)://).
func readInput(ctx context.Context, loc string) (classify.File, error) {
	data, err := storage.ReadFile(ctx, loc)
	if err != nil {
		return classify.File{}, fmt.Errorf("read %s: %w", loc, err)
	}
	return classify.File{Name: loc, R: bytes.NewReader(data)}, nil
}
