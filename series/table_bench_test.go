package series

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
)

// benchTable is an observation table of 50 talhões × 20 points × 150 dates
// (150,000 rows, four years at a 10-day revisit), reflectances and indices,
// as CSV and as Parquet.
func benchTable(b *testing.B) (csvBytes, parquetBytes []byte, rows int) {
	b.Helper()
	type row struct {
		FieldID string  `parquet:"field_id,dict"`
		PointID string  `parquet:"point_id,dict"`
		Lon     float64 `parquet:"lon"`
		Lat     float64 `parquet:"lat"`
		Date    string  `parquet:"date"`
		Red     float32 `parquet:"red"`
		NIR     float32 `parquet:"nir"`
		SWIR16  float32 `parquet:"swir16"`
		SWIR22  float32 `parquet:"swir22"`
	}
	var rs []row
	var sb strings.Builder
	sb.WriteString("field_id,point_id,lon,lat,date,red,nir,swir16,swir22\n")
	d0 := time.Date(2022, 7, 1, 0, 0, 0, 0, time.UTC)
	for f := range 50 {
		for p := range 20 {
			for k := range 150 {
				r := row{fmt.Sprintf("T%03d", f), fmt.Sprintf("p%02d", p), -55 - float64(f)/100, -12 + float64(p)/1000, d0.AddDate(0, 0, 10*k).Format(time.DateOnly),
					0.05 + float32(k%7)/100, 0.3 + float32(k%11)/100, 0.25 + float32(k%5)/100, 0.15 + float32(k%3)/100}
				rs = append(rs, r)
				fmt.Fprintf(&sb, "%s,%s,%v,%v,%s,%v,%v,%v,%v\n", r.FieldID, r.PointID, r.Lon, r.Lat, r.Date, r.Red, r.NIR, r.SWIR16, r.SWIR22)
			}
		}
	}
	var pb bytes.Buffer
	if err := parquet.Write(&pb, rs); err != nil {
		b.Fatal(err)
	}
	return []byte(sb.String()), pb.Bytes(), len(rs)
}

// BenchmarkReadTable reads the table as CSV and as Parquet, against the
// bare CSV decoding of the same bytes (encoding/csv, no parsing of values)
// measured in the same run: readTable/csvDecode is the cost of checking
// every value and building the series model, as a ratio.
func BenchmarkReadTable(b *testing.B) {
	c, p, n := benchTable(b)
	var tCSV, tPar, tBare time.Duration
	for b.Loop() {
		t0 := time.Now()
		r := csv.NewReader(bytes.NewReader(c))
		if _, err := r.ReadAll(); err != nil {
			b.Fatal(err)
		}
		tBare += time.Since(t0)
		t0 = time.Now()
		tab, err := ReadTable(c, "bench.csv", TableOptions{Collection: "s2"})
		if err != nil || len(tab.Obs) != n {
			b.Fatalf("csv: %d observations, %v", len(tab.Obs), err)
		}
		tCSV += time.Since(t0)
		t0 = time.Now()
		tab, err = ReadTable(p, "bench.parquet", TableOptions{Collection: "s2"})
		if err != nil || len(tab.Obs) != n {
			b.Fatalf("parquet: %d observations, %v", len(tab.Obs), err)
		}
		tPar += time.Since(t0)
	}
	b.ReportMetric(float64(n)*float64(b.N)/tCSV.Seconds(), "csv-rows/s")
	b.ReportMetric(float64(n)*float64(b.N)/tPar.Seconds(), "parquet-rows/s")
	b.ReportMetric(tCSV.Seconds()/tBare.Seconds(), "readTable/csvDecode")
	b.ReportMetric(tPar.Seconds()/tBare.Seconds(), "readParquet/csvDecode")
}

// TestWriteBigTable writes the table of WriteBigTable to
// $MANEJO_BIG_TABLE (50,000 points × 45 dates, or $MANEJO_BIG_POINTS ×
// $MANEJO_BIG_DATES); skipped without it. docs/security.md ("Memory")
// measures `manejo analyse` on it with /usr/bin/time -v.
func TestWriteBigTable(t *testing.T) {
	path := os.Getenv("MANEJO_BIG_TABLE")
	if path == "" {
		t.Skip("MANEJO_BIG_TABLE not set")
	}
	points, dates := 50_000, 45
	if n, err := strconv.Atoi(os.Getenv("MANEJO_BIG_POINTS")); err == nil {
		points = n
	}
	if n, err := strconv.Atoi(os.Getenv("MANEJO_BIG_DATES")); err == nil {
		dates = n
	}
	var sb strings.Builder
	WriteBigTable(&sb, points, dates)
	if err := os.WriteFile(path, []byte(sb.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %d points × %d dates, %d bytes", path, points, dates, sb.Len())
}

// WriteBigTable writes the observation table of one talhão of points ×
// dates (NDVI and NDTI, a soybean–maize year every 32 days) to w, as an
// attacker's or a careless export's one-talhão table would be: the input
// of the memory measurement of issue 27 D15 (TestWriteBigTable).
func WriteBigTable(w *strings.Builder, points, dates int) {
	w.WriteString("field_id,point_id,lon,lat,date,ndvi,ndti\n")
	d0 := time.Date(2022, 7, 3, 0, 0, 0, 0, time.UTC)
	for p := range points {
		lon, lat := -55.6+float64(p%250)*1e-4, -11.8+float64(p/250)*1e-4
		for k := range dates {
			d := d0.AddDate(0, 0, 32*k)
			v := 0.2 + 0.6*float64((d.YearDay()+p%7)%180)/180
			fmt.Fprintf(w, "BIG,p%05d,%.5f,%.5f,%s,%.4f,%.4f\n", p, lon, lat, d.Format(time.DateOnly), v, 0.1+v/10)
		}
	}
}
