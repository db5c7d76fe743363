package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/manejo/manejo/grid"
	"github.com/manejo/manejo/pipeline"
	"github.com/manejo/manejo/slope"
)

func init() {
	register(&command{name: "slope", synopsis: "mean slope (%) of each talhão from a DEM, and the contour-planting requirement", run: runSlope})
}

// slopeRow is one talhão in the output of `manejo slope` (CSV columns and
// JSON members share these names).
type slopeRow struct {
	FieldID          string   `json:"field_id"`
	SlopeMeanPct     *float64 `json:"slope_mean_pct"`
	SlopeMedianPct   *float64 `json:"slope_median_pct"`
	SlopeP90Pct      *float64 `json:"slope_p90_pct"`
	ContourRequired  *bool    `json:"contour_required"`
	DeclividadeMedia *int     `json:"declividadeMedia"`
	RoundingCrosses3 bool     `json:"rounding_crosses_3"`
	NPixels          int      `json:"n_pixels"`
	NVoid            int      `json:"n_void"`
	VoidFraction     float64  `json:"void_fraction"`
	PixelXM          float64  `json:"pixel_x_m"`
	PixelYM          float64  `json:"pixel_y_m"`
	PlantioContorno  *int     `json:"plantioContorno"`
	Terraceamento    *int     `json:"terraceamento"`
	Warnings         []string `json:"warnings"`
	Error            string   `json:"error,omitempty"`
}

func runSlope(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("slope", "slope --fields F --dem D [--out slope.csv|slope.json] [--id-field id] [--workers N]\n\n--fields and --dem are required; --workers counts talhões computed at once", stderr)
	var fields, idField, dem string
	var workers int
	talhoesFlags(fs, &fields, &idField)
	demFlag(fs, &dem)
	out := fs.String("out", "", "write the results to this .csv or .json file instead of printing a table")
	workersFlag(fs, &workers)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := checkIDField(idField); err != nil {
		return err
	}
	if fields == "" || dem == "" {
		return usagef("--fields and --dem are required")
	}
	format := ""
	if *out != "" {
		switch strings.ToLower(filepath.Ext(*out)) {
		case ".csv":
			format = "csv"
		case ".json":
			format = "json"
		default:
			return usagef("--out %s: want a .csv or .json file", *out)
		}
		if err := localLoc("--out", *out); err != nil {
			return err
		}
	}
	if err := countFlags(map[string]int{"--workers": workers}); err != nil {
		return err
	}

	res, err := pipeline.Slopes(ctx, pipeline.SlopeConfig{Fields: fields, IDField: idField, DEM: dem, Workers: workers})
	if err != nil {
		return err
	}
	var rows []slopeRow
	failed := 0
	for _, e := range res.Unreadable {
		fmt.Fprintf(stderr, "manejo slope: %v\n", e)
		failed++
		var fe *grid.FieldError
		if errors.As(e, &fe) {
			rows = append(rows, slopeRow{FieldID: fe.ID, Error: e.Error()})
		}
	}
	if len(res.Results) == 0 && failed > 0 {
		return fmt.Errorf("read talhões %s: no talhão read", fields)
	}
	results := make([]slopeRow, len(res.Results))
	for i, r := range res.Results {
		results[i] = toSlopeRow(r, res.Errs[i])
		if results[i].Error != "" {
			fmt.Fprintf(stderr, "manejo slope: %s\n", results[i].Error)
			failed++
		}
	}
	rows = append(results, rows...)
	if format == "" {
		err = writeSlopeTable(stdout, rows)
	} else {
		err = writeSlopeFile(*out, format, rows)
	}
	if err != nil {
		return err
	}
	if failed > 0 {
		return partialError(failed, len(res.Results)+countReadFailures(res.Unreadable))
	}
	return nil
}

func countReadFailures(errs []error) int {
	n := 0
	for _, e := range errs {
		if errors.As(e, new(*grid.FieldError)) {
			n++
		}
	}
	return n
}

func toSlopeRow(r slope.Result, err error) slopeRow {
	row := slopeRow{FieldID: r.FieldID, PlantioContorno: r.PlantioContorno, Terraceamento: r.Terraceamento,
		NPixels: r.NPixels, NVoid: r.NVoid, VoidFraction: r.VoidFraction, PixelXM: r.PixelXM, PixelYM: r.PixelYM,
		Warnings: r.Warnings}
	if row.Warnings == nil {
		row.Warnings = []string{}
	}
	if err != nil {
		row.Error = err.Error()
		return row
	}
	mean, med, p90 := r.MeanPct, r.MedianPct, r.P90Pct
	contour, decl := r.ContourRequired, r.DeclividadeMedia
	row.SlopeMeanPct, row.SlopeMedianPct, row.SlopeP90Pct = &mean, &med, &p90
	row.ContourRequired, row.DeclividadeMedia = &contour, &decl
	row.RoundingCrosses3 = r.RoundingCrosses3
	return row
}

func writeSlopeTable(w io.Writer, rows []slopeRow) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "field_id\tmean %\tmedian %\tp90 %\tdeclividade\tcontour\tpixels\tvoid %\t")
	for _, r := range rows {
		if r.Error != "" {
			fmt.Fprintf(tw, "%s\t-\t-\t-\t-\t-\t%d\t-\t\n", r.FieldID, r.NPixels)
			continue
		}
		fmt.Fprintf(tw, "%s\t%.3f\t%.3f\t%.3f\t%d\t%s\t%d\t%.1f\t\n", r.FieldID, *r.SlopeMeanPct, *r.SlopeMedianPct,
			*r.SlopeP90Pct, *r.DeclividadeMedia, yesNo(*r.ContourRequired), r.NPixels, 100*r.VoidFraction)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write table: %w", err)
	}
	for _, r := range rows {
		for _, m := range r.Warnings {
			fmt.Fprintf(w, "warning: %s: %s\n", r.FieldID, m)
		}
	}
	return nil
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func writeSlopeFile(path, format string, rows []slopeRow) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	switch format {
	case "json":
		enc := json.NewEncoder(f)
		enc.SetIndent("", "  ")
		err = enc.Encode(rows)
	case "csv":
		err = writeSlopeCSV(f, rows)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

func writeSlopeCSV(w io.Writer, rows []slopeRow) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"field_id", "slope_mean_pct", "slope_median_pct", "slope_p90_pct", "contour_required",
		"declividadeMedia", "rounding_crosses_3", "n_pixels", "n_void", "void_fraction", "pixel_x_m", "pixel_y_m",
		"plantioContorno", "terraceamento", "warnings", "error"})
	f := func(p *float64) string {
		if p == nil || math.IsNaN(*p) {
			return ""
		}
		return strconv.FormatFloat(*p, 'f', 4, 64)
	}
	i := func(p *int) string {
		if p == nil {
			return ""
		}
		return strconv.Itoa(*p)
	}
	b := func(p *bool) string {
		if p == nil {
			return ""
		}
		return strconv.FormatBool(*p)
	}
	for _, r := range rows {
		cw.Write([]string{r.FieldID, f(r.SlopeMeanPct), f(r.SlopeMedianPct), f(r.SlopeP90Pct), b(r.ContourRequired),
			i(r.DeclividadeMedia), strconv.FormatBool(r.RoundingCrosses3), strconv.Itoa(r.NPixels), strconv.Itoa(r.NVoid),
			strconv.FormatFloat(r.VoidFraction, 'f', 4, 64), strconv.FormatFloat(r.PixelXM, 'f', 2, 64),
			strconv.FormatFloat(r.PixelYM, 'f', 2, 64), i(r.PlantioContorno), i(r.Terraceamento),
			strings.Join(r.Warnings, "; "), r.Error})
	}
	cw.Flush()
	return cw.Error()
}
