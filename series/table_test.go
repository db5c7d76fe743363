package series

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/manejo/manejo/internal/testkit"
	"github.com/manejo/manejo/zarc"
	"github.com/parquet-go/parquet-go"
)

const goodHead = "field_id,point_id,lon,lat,date,collection,ndvi,ndti\n"

// goodRows are two readings of two points of talhão A.
const goodRows = "A,p1,-55.6,-11.8,2024-09-01,sentinel-2-l2a,0.21,0.15\n" +
	"A,p2,-55.61,-11.8,2024-09-01,sentinel-2-l2a,0.2,0.14\n" +
	"A,p1,-55.6,-11.8,2024-09-11,sentinel-2-l2a,0.3,0.12\n" +
	"A,p2,-55.61,-11.8,2024-09-11,sentinel-2-l2a,0.31,0.11\n"

func readCSV(t *testing.T, s string, o TableOptions) Table {
	t.Helper()
	tab, err := ReadTable([]byte(s), "obs.csv", o)
	if err != nil {
		t.Fatalf("ReadTable: %v", err)
	}
	return tab
}

// TestReadTableGood: a table of indices gives one grid per talhão whose
// cells are its points (sorted), and its observations with the values as
// written, in float32.
func TestReadTableGood(t *testing.T) {
	tab := readCSV(t, goodHead+goodRows, TableOptions{})
	if len(tab.Grids) != 1 || len(tab.Refused) != 0 || tab.Rows != 4 || !tab.NDTI {
		t.Fatalf("table %+v", tab)
	}
	g := tab.Grids[0]
	if g.Field.ID != "A" || g.Field.Crop != zarc.Soja || len(g.Cells) != 2 || g.Cells[0].ID != "p1" || g.Cells[1].Centre[0] != -55.61 {
		t.Fatalf("grid %+v", g)
	}
	if len(tab.Obs) != 4 {
		t.Fatalf("%d observations", len(tab.Obs))
	}
	o := tab.Obs[0]
	if o.CellID != "p1" || !o.Date.Equal(time.Date(2024, 9, 1, 0, 0, 0, 0, time.UTC)) || o.NDVI != float32(0.21) || o.NDTI != float32(0.15) || o.Mask != "" {
		t.Fatalf("first observation %+v", o)
	}
	gp := tab.Gaps()["A"]
	if gp.Scenes != 2 || gp.RevisitDays != 10 || gp.Coarse {
		t.Errorf("gap %+v, want 2 scene dates 10 days apart", gp)
	}
}

// TestReadTableReflectances: red, nir, swir16, swir22 give NDVI and NDTI;
// semicolons and decimal commas (a pt-BR spreadsheet) are read; clear=false
// and an absent collection (taken from the options) work; a per-talhão
// crop and slope, a border point and the IN 2.3 declarations are kept.
func TestReadTableReflectances(t *testing.T) {
	s := "field_id;point_id;lon;lat;date;red;nir;swir16;swir22;clear;crop;slope_pct;border;plantio_contorno\n" +
		"B;1;-55,6;-11,8;2024-09-01T13:45:00Z;0,1;0,3;0,3;0,2;;milho;4,5;true;1\n" +
		"B;1;-55,6;-11,8;2024-09-06;;;;;false;milho;4,5;;\n"
	tab := readCSV(t, s, TableOptions{Collection: "landsat-c2-l2"})
	if len(tab.Refused) > 0 {
		t.Fatalf("refused %v", tab.Refused)
	}
	o := tab.Obs[0]
	if math.Abs(float64(o.NDVI)-0.5) > 1e-6 || math.Abs(float64(o.NDTI)-0.2) > 1e-6 || o.Red != 0.1 || o.SWIR2 != float32(0.2) || o.Collection != "landsat-c2-l2" {
		t.Errorf("reading %+v: want NDVI (0.3−0.1)/(0.3+0.1) = 0.5, NDTI (0.3−0.2)/0.5 = 0.2", o)
	}
	if m := tab.Obs[1]; m.Mask != MaskedNotClear || !math.IsNaN(float64(m.NDVI)) {
		t.Errorf("clear=false reading %+v", m)
	}
	g := tab.Grids[0]
	if g.Field.Crop != zarc.Milho || tab.SlopePct["B"] != 4.5 || !g.Cells[0].Border || g.Field.PlantioContorno == nil || *g.Field.PlantioContorno != 1 || g.Field.Terraceamento != nil {
		t.Errorf("talhão %+v, slope %v", g, tab.SlopePct)
	}
}

// TestReadTableNDVIOnly: a table with NDVI only (MOD13Q1, sits) is read,
// NDTI NaN; its crop column names a cotton group.
func TestReadTableNDVIOnly(t *testing.T) {
	tab := readCSV(t, "field_id,point_id,lon,lat,date,ndvi,crop\nS,1,-55,-12,2014-09-14,0.2472,Algodão grupo III\n", TableOptions{Collection: "mod13q1"})
	if tab.NDTI || len(tab.Obs) != 1 || !math.IsNaN(float64(tab.Obs[0].NDTI)) || tab.Obs[0].NDVI != float32(0.2472) {
		t.Fatalf("table %+v", tab)
	}
	// The crop column selects a row of coverage's crop table.
	if c := tab.Grids[0].Field.Crop; c != zarc.AlgodaoGrupo3 {
		t.Errorf("crop %q, want %q", c, zarc.AlgodaoGrupo3)
	}
}

// TestReadTableBadTable: a table that cannot be read at all is an error
// naming what is missing.
func TestReadTableBadTable(t *testing.T) {
	for name, c := range map[string]struct{ in, want string }{
		"empty":           {"", "empty file"},
		"no point_id":     {"field_id,lon,lat,date,ndvi\n", "no column point_id"},
		"no date or lat":  {"field_id,point_id,lon,ndvi\n", "no column lat, date"},
		"no index":        {"field_id,point_id,lon,lat,date,red\n", "no NDVI"},
		"one swir":        {"field_id,point_id,lon,lat,date,ndvi,swir16\n", "NDTI needs both swir16 and swir22"},
		"twice":           {"field_id,point_id,lon,lat,date,ndvi,NDVI\n", "column ndvi appears twice"},
		"not parquet":     {"PAR1 not really", "Parquet"},
		"broken CSV head": {"field_id,\"point_id\n", "CSV header"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := ReadTable([]byte(c.in), "obs.csv", TableOptions{})
			if !errors.Is(err, ErrTable) || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "obs.csv") {
				t.Errorf("error %v, want ErrTable naming obs.csv and %q", err, c.want)
			}
		})
	}
}

// TestReadTableBadRows: each bad value refuses its talhão with an error
// naming the file, the row (CSV line) and the column; the good talhão A
// goes on.
func TestReadTableBadRows(t *testing.T) {
	head := "field_id,point_id,lon,lat,date,collection,ndvi,ndti,red,nir,clear,crop\n"
	for name, c := range map[string]struct{ row, want string }{
		"ndvi not a number": {"X,1,-55,-12,2024-09-01,s2,abc,0.1,,,,", "obs.csv row 10 column ndvi (talhão X): \"abc\" is not a number"},
		"ndvi over 1":       {"X,1,-55,-12,2024-09-01,s2,1.08,0.1,,,,", "row 10 column ndvi (talhão X): 1.08 outside −1..1"},
		"ndti NaN":          {"X,1,-55,-12,2024-09-01,s2,0.5,NaN,,,,", "row 10 column ndti (talhão X): \"NaN\" is not a finite number"},
		"a DN":              {"X,1,-55,-12,2024-09-01,s2,,,2543,3100,,", "row 10 column red (talhão X): 2543 outside -0.1..1.5: want a surface reflectance"},
		"index vs bands":    {"X,1,-55,-12,2024-09-01,s2,0.9,,0.1,0.3,,", "row 10 column ndvi (talhão X): 0.9, but its bands give 0.5000"},
		"no ndvi clear":     {"X,1,-55,-12,2024-09-01,s2,,0.1,,,true,", "row 10 column ndvi (talhão X): empty in a clear row"},
		"bad date":          {"X,1,-55,-12,01/09/2024,s2,0.5,0.1,,,,", "row 10 column date (talhão X): \"01/09/2024\": want a date YYYY-MM-DD"},
		"lon":               {"X,1,-255,-12,2024-09-01,s2,0.5,0.1,,,,", "row 10 column lon (talhão X): longitude -255 outside −180..180"},
		"lat":               {"X,1,-55,x,2024-09-01,s2,0.5,0.1,,,,", "row 10 column lat (talhão X): \"x\" is not a number"},
		"no point":          {"X,,-55,-12,2024-09-01,s2,0.5,0.1,,,,", "row 10 column point_id (talhão X): empty"},
		"clear":             {"X,1,-55,-12,2024-09-01,s2,0.5,0.1,,,maybe,", "row 10 column clear (talhão X): \"maybe\": want true or false"},
		"no collection":     {"X,1,-55,-12,2024-09-01,,0.5,0.1,,,,", "row 10 column collection (talhão X): no collection"},
		"field count":       {"X,1,-55,-12,2024-09-01,s2,0.5", "row 10 (talhão X): 7 fields, the header has 12"},
	} {
		t.Run(name, func(t *testing.T) {
			s := head + strings.ReplaceAll(strings.ReplaceAll(goodRows, ",sentinel-2-l2a,", ",s2,"), "\n", ",,,,\n")
			s += "X,0,-55,-12,2024-08-01,s2,0.3,0.1,,,,\n" + "X,0,-55,-12,2024-08-11,s2,0.3,0.1,,,,\n" +
				"X,0,-55,-12,2024-08-21,s2,0.3,0.1,,,,\n" + "X,0,-55,-12,2024-08-31,s2,0.3,0.1,,,,\n" + c.row + "\n"
			tab := readCSV(t, s, TableOptions{})
			errs := tab.Refused["X"]
			if len(tab.Grids) != 1 || tab.Grids[0].Field.ID != "A" || len(errs) != 1 {
				t.Fatalf("grids %d, refused %v: want A kept and X refused with one error", len(tab.Grids), tab.Refused)
			}
			var te *TableError
			if !errors.As(errs[0], &te) || !strings.Contains(errs[0].Error(), c.want) || !errors.Is(errs[0], ErrTable) {
				t.Errorf("error %q, want a TableError containing %q", errs[0], c.want)
			}
			for _, o := range tab.Obs {
				if o.FieldID == "X" {
					t.Fatalf("an observation of the refused talhão was kept: %+v", o)
				}
			}
		})
	}
}

// TestReadTableCropNames: the crop column reads the main crops' English and
// botanical names, in any case, as the canonical codes; a crop no one knows
// keeps its talhão (crop empty, the value and the names wanted in
// UnknownCrop); a talhão naming two crops, known or not, is refused.
func TestReadTableCropNames(t *testing.T) {
	head := "field_id,point_id,lon,lat,date,ndvi,crop\n"
	for in, want := range map[string]zarc.Crop{"corn": zarc.Milho, "Maize": zarc.Milho, "Zea mays": zarc.Milho, "MILHO": zarc.Milho,
		"soybean": zarc.Soja, "Soybeans": zarc.Soja, "soy": zarc.Soja, "glycine_max": zarc.Soja, "Soja": zarc.Soja} {
		tab := readCSV(t, head+"X,1,-55,-12,2024-09-01,0.5,"+in+"\nX,2,-55.1,-12,2024-09-01,0.5,"+in+"\n", TableOptions{Collection: "s2"})
		if len(tab.Grids) != 1 || tab.Grids[0].Field.Crop != want || len(tab.UnknownCrop) != 0 {
			t.Errorf("crop %q: grids %+v, unknown %v; want one talhão of crop %s", in, tab.Grids, tab.UnknownCrop, want)
		}
	}
	tab := readCSV(t, head+"X,1,-55,-12,2024-09-01,0.5,arroz\nX,2,-55.1,-12,2024-09-01,0.5,Arroz\n", TableOptions{Collection: "s2"})
	if len(tab.Grids) != 1 || tab.Grids[0].Field.Crop != "" || len(tab.Refused) != 0 || len(tab.Obs) != 2 {
		t.Fatalf("unknown crop: grids %+v, refused %v, %d obs; want the talhão kept with its crop empty", tab.Grids, tab.Refused, len(tab.Obs))
	}
	if err := tab.UnknownCrop["X"]; err == nil || !strings.Contains(err.Error(), `crop "arroz": want one of soja, milho`) {
		t.Errorf("UnknownCrop[X] = %v, want the value and the crops wanted", err)
	}
	tab = readCSV(t, head+"X,1,-55,-12,2024-09-01,0.5,arroz\nX,2,-55.1,-12,2024-09-01,0.5,corn\n", TableOptions{Collection: "s2"})
	if errs := tab.Refused["X"]; len(tab.Grids) != 0 || len(errs) != 1 || !strings.Contains(errs[0].Error(), "row 3 column crop (talhão X): crop milho, but arroz on row 2") {
		t.Errorf("two crops: grids %d, refused %v; want X refused naming both", len(tab.Grids), tab.Refused)
	}
}

// TestReadTableInconsistent: a point that moves, a talhão with two crops,
// a reading given twice are errors naming both rows; rows without a
// talhão refuse the table whole (any series could be cut), each named by
// row and column, a CPF-shaped id without being echoed.
func TestReadTableInconsistent(t *testing.T) {
	for name, c := range map[string]struct{ rows, refused, want string }{
		"point moves": {"Y,1,-55,-12,2024-09-01,0.5,soja\nY,1,-55.1,-12,2024-09-11,0.5,soja\n", "Y",
			"obs.csv row 3 column lon (talhão Y): point 1 at (-55.1, -12), but at (-55, -12) on row 2"},
		"two crops": {"Y,1,-55,-12,2024-09-01,0.5,soja\nY,2,-55.1,-12,2024-09-11,0.5,milho\n", "Y",
			"row 3 column crop (talhão Y): crop milho, but soja on row 2"},
		"twice": {"Y,1,-55,-12,2024-09-01,0.5,soja\nY,1,-55,-12,2024-09-01,0.6,soja\n", "Y",
			"row 3 (talhão Y): point 1, 2024-09-01, collection s2: already on row 2"},
	} {
		t.Run(name, func(t *testing.T) {
			tab := readCSV(t, "field_id,point_id,lon,lat,date,ndvi,crop\n"+c.rows, TableOptions{Collection: "s2"})
			errs := tab.Refused[c.refused]
			if len(errs) != 1 || !strings.Contains(errs[0].Error(), c.want) {
				t.Errorf("refused %v, want %q", tab.Refused, c.want)
			}
		})
	}
	_, err := ReadTable([]byte("field_id,point_id,lon,lat,date,ndvi\nA,1,-55,-12,2024-09-01,0.5\n529.982.247-25,1,-55,-12,2024-09-01,0.5\n,1,-55,-12,2024-09-01,0.5\n"), "obs.csv", TableOptions{Collection: "s2"})
	if !errors.Is(err, ErrTable) || !strings.Contains(err.Error(), "obs.csv: 2 row(s) name no talhão") {
		t.Fatalf("rows without a talhão: %v; want the table refused", err)
	}
	if msg := err.Error(); strings.Contains(msg, "529") || !strings.Contains(msg, "row 3 column field_id: written as a CPF or CNPJ") {
		t.Errorf("CPF id error %q: want it named by row and column, never echoed", msg)
	}
	if msg := err.Error(); !strings.Contains(msg, "row 4 column field_id: empty") {
		t.Errorf("empty id error %q", msg)
	}
}

// TestReadTableStrayQuote (issue 27 D14): a stray quote used to join every
// line after it into one cell, and the talhões were analysed on the series
// cut there, with a warning at most. Now any CSV syntax error, or a cell
// holding a line break, refuses the table whole, naming the file and the
// row; a field count error on a line of its own still refuses only its
// talhão, and rows of empty cells are skipped.
func TestReadTableStrayQuote(t *testing.T) {
	var b strings.Builder
	b.WriteString("field_id,point_id,lon,lat,date,ndvi\n")
	d0 := time.Date(2024, 7, 1, 0, 0, 0, 0, time.UTC)
	for i := range 1200 {
		fmt.Fprintf(&b, "%s,p1,-55,-12,%s,0.5\n", []string{"A", "B"}[i%2], d0.AddDate(0, 0, i/2).Format(time.DateOnly))
	}
	good := b.String()
	lines := strings.SplitAfter(good, "\n")
	at := func(row int, edit func(string) string) string { // row = CSV line, header = 1
		l := append([]string(nil), lines...)
		l[row-1] = edit(l[row-1])
		return strings.Join(l, "")
	}
	if tab := readCSV(t, good, TableOptions{Collection: "s2"}); len(tab.Obs) != 1200 {
		t.Fatalf("clean table: %d observations", len(tab.Obs))
	}
	for _, c := range []struct{ name, csv, want string }{
		{"opening quote at row 1001", at(1001, func(s string) string { return strings.Replace(s, "p1", `"p1`, 1) }),
			"obs.csv row 1001: CSV syntax error on line 1201"},
		{"opening quote at row 2", at(2, func(s string) string { return `"` + s }), "obs.csv row 2: CSV syntax error"},
		{"bare quote at row 500", at(500, func(s string) string { return strings.Replace(s, "p1", `p"1`, 1) }),
			`obs.csv row 500: CSV syntax error on line 500, column 4: bare " in non-quoted-field`},
	} {
		t.Run(c.name, func(t *testing.T) {
			tab, err := ReadTable([]byte(c.csv), "obs.csv", TableOptions{Collection: "s2"})
			if !errors.Is(err, ErrTable) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "refused whole") {
				t.Errorf("err %v, %d observations; want the table refused: %q", err, len(tab.Obs), c.want)
			}
		})
	}
	// A quote opened on row 700 and closed on row 703: the three lines
	// between would be one cell of a row with the wrong field count.
	joined := at(700, func(s string) string { return strings.Replace(s, ",p1,", `,"p1,`, 1) })
	joined = strings.Replace(joined, lines[702], strings.Replace(lines[702], ",p1,", `,p1",`, 1), 1)
	if _, err := ReadTable([]byte(joined), "obs.csv", TableOptions{Collection: "s2"}); !errors.Is(err, ErrTable) ||
		!strings.Contains(err.Error(), "obs.csv row 700: cell 2 holds a line break: lines 700 to 703 read as one row") {
		t.Errorf("quote closed 3 lines later: %v", err)
	}
	// A row with a missing cell on its own line refuses only its talhão;
	// a row of empty cells is skipped.
	short := at(9, func(string) string { return "A,p1,-55,-12,2024-07-04\n" }) + ",,,,,\n"
	tab := readCSV(t, short, TableOptions{Collection: "s2"})
	if len(tab.Refused["A"]) != 1 || !strings.Contains(tab.Refused["A"][0].Error(), "obs.csv row 9 (talhão A): 5 fields, the header has 6") || len(tab.Grids) != 1 || tab.Rows != 1200 {
		t.Errorf("short row: refused %v, %d grids, %d rows", tab.Refused, len(tab.Grids), tab.Rows)
	}
}

// TestReadTableManyErrors: a talhão keeps its first MaxTableErrors errors
// and the count of the others.
func TestReadTableManyErrors(t *testing.T) {
	s := "field_id,point_id,lon,lat,date,ndvi\n" + strings.Repeat("Z,1,-55,-12,bad,0.5\n", 12)
	errs := readCSV(t, s, TableOptions{Collection: "s2"}).Refused["Z"]
	if len(errs) != MaxTableErrors+1 || !strings.Contains(errs[MaxTableErrors].Error(), "7 more bad row(s) of talhão Z") {
		t.Errorf("errors %v", errs)
	}
}

// parquetObs is an observation table as an analyst's Parquet file: a DATE
// column and FLOAT indices, nullable.
type parquetObs struct {
	FieldID string    `parquet:"field_id"`
	PointID int64     `parquet:"point_id"`
	Lon     float64   `parquet:"lon"`
	Lat     float64   `parquet:"lat"`
	Date    zarc.Date `parquet:"date,date"`
	Taken   time.Time `parquet:"taken,timestamp(millisecond)"` // not an observation column: ignored
	NDVI    *float32  `parquet:"ndvi,optional"`
	NDTI    *float32  `parquet:"ndti,optional"`
	Clear   bool      `parquet:"clear"`
}

// TestReadTableParquet: the same readings as Parquet give the same table as
// the CSV (DATE, int64 ids, float32 values, nulls, booleans); a timestamp
// column is read as its UTC day.
func TestReadTableParquet(t *testing.T) {
	v := func(f float32) *float32 { return &f }
	rows := []parquetObs{
		{"A", 1, -55.6, -11.8, zarc.DateOf(time.Date(2024, 9, 1, 0, 0, 0, 0, time.UTC)), time.Date(2024, 9, 1, 13, 40, 0, 0, time.UTC), v(0.21), v(0.15), true},
		{"A", 1, -55.6, -11.8, zarc.DateOf(time.Date(2024, 9, 11, 0, 0, 0, 0, time.UTC)), time.Date(2024, 9, 11, 13, 40, 0, 0, time.UTC), nil, nil, false},
	}
	var buf bytes.Buffer
	if err := parquet.Write(&buf, rows); err != nil {
		t.Fatal(err)
	}
	tab, err := ReadTable(buf.Bytes(), "obs.parquet", TableOptions{Collection: "s2"})
	if err != nil {
		t.Fatal(err)
	}
	csvTab := readCSV(t, "field_id,point_id,lon,lat,date,ndvi,ndti,clear\nA,1,-55.6,-11.8,2024-09-01,0.21,0.15,true\nA,1,-55.6,-11.8,2024-09-11,,,false\n", TableOptions{Collection: "s2"})
	if len(tab.Obs) != 2 || len(tab.Refused) != 0 {
		t.Fatalf("parquet table %+v", tab)
	}
	for i := range tab.Obs {
		a, b := tab.Obs[i], csvTab.Obs[i]
		if a.CellID != b.CellID || !a.Date.Equal(b.Date) || a.Mask != b.Mask || !sameF32(a.NDVI, b.NDVI) || !sameF32(a.NDTI, b.NDTI) {
			t.Errorf("reading %d: parquet %+v, csv %+v", i, a, b)
		}
	}
	// A timestamp date column (an Earth Engine export) is read as its UTC day.
	type stamped struct {
		FieldID string    `parquet:"field_id"`
		PointID string    `parquet:"point_id"`
		Lon     float64   `parquet:"lon"`
		Lat     float64   `parquet:"lat"`
		Date    time.Time `parquet:"date,timestamp(millisecond)"`
		NDVI    float64   `parquet:"ndvi"`
	}
	buf.Reset()
	if err := parquet.Write(&buf, []stamped{{"A", "1", -55, -12, rows[0].Taken, 0.5}}); err != nil {
		t.Fatal(err)
	}
	tab, err = ReadTable(buf.Bytes(), "obs.parquet", TableOptions{Collection: "s2"})
	if err != nil || len(tab.Obs) != 1 || tab.Obs[0].Date.Format(time.DateOnly) != "2024-09-01" || tab.Obs[0].NDVI != 0.5 {
		t.Errorf("timestamp table %+v, %v: want one reading dated 2024-09-01", tab, err)
	}
}

// dataLines counts the lines after the header of a CSV table that hold
// anything but separators, quotes and spaces; ok is false for Parquet and
// for a header with a quote (it could span lines).
func dataLines(b []byte) (int, bool) {
	b = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf"))
	if bytes.HasPrefix(b, []byte("PAR1")) {
		return 0, false
	}
	lines := strings.Split(string(b), "\n")
	if strings.Contains(lines[0], `"`) {
		return 0, false
	}
	sep := ","
	if strings.Count(lines[0], ";") > strings.Count(lines[0], ",") {
		sep = ";"
	}
	n := 0
	for _, l := range lines[1:] {
		if strings.TrimSpace(strings.NewReplacer(sep, "", `"`, "").Replace(l)) != "" {
			n++
		}
	}
	return n, true
}

func sameF32(a, b float32) bool { return a == b || (a != a && b != b) }

// FuzzReadTable: whatever the bytes, ReadTable does not panic, its errors
// are ErrTable, and every observation it keeps has finite indices in
// −1..1 or none (NaN), a talhão and a point. A CSV table it accepts lost
// no row (issue 27 D14): every line after the header that holds anything
// but separators, quotes and spaces is counted in Rows.
func FuzzReadTable(f *testing.F) {
	f.Add([]byte(goodHead + goodRows))
	f.Add([]byte("field_id;point_id;lon;lat;date;red;nir;swir16;swir22;clear;crop\nB;1;-55,6;-11,8;2024-09-01T13:45:00Z;0,1;0,3;0,3;0,2;;milho\n"))
	f.Add([]byte("field_id,point_id,lon,lat,date,ndvi,mask_reason\nA,1,-55,-12,2024-09-01,0.5,ndti:nodata\nA,1,-55,-12,2024-09-02,,cloud\n"))
	f.Add([]byte("PAR1"))
	f.Add([]byte(goodHead + strings.Replace(goodRows, ",p", `,"p`, 1)))
	f.Add([]byte("field_id,point_id,lon,lat,date,ndvi\nA,1,-55,-12,2024-09-01,0.5\n,,,,,\n  \nA,2,-55,-12,2024-09-01,0.5\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		tab, err := ReadTable(b, "fuzz.csv", TableOptions{Collection: "s2"})
		if err != nil {
			if !errors.Is(err, ErrTable) {
				t.Fatalf("error %v is not ErrTable", err)
			}
			return
		}
		if n, ok := dataLines(b); ok && tab.Rows != n {
			t.Fatalf("%d rows read, the file has %d lines of data after its header", tab.Rows, n)
		}
		for _, o := range tab.Obs {
			for _, v := range []float32{o.NDVI, o.NDTI} {
				if !(v != v || (v >= -1 && v <= 1)) {
					t.Fatalf("index %v outside −1..1: %+v", v, o)
				}
			}
			if o.FieldID == "" || o.CellID == "" {
				t.Fatalf("observation without talhão or point: %+v", o)
			}
		}
		for _, errs := range tab.Refused {
			for _, e := range errs {
				if !errors.Is(e, ErrTable) {
					t.Fatalf("row error %v is not ErrTable", e)
				}
			}
		}
	})
}

// TestReadTableBudget (issue 27 D15): a talhão whose points × scenes pass
// TableOptions.MaxCellScenes is refused with the reason, in the words of
// Sample's refusal, and the other talhões are read; its rows are dropped
// as soon as it passes the budget, so reading a 5,000 points × 45 dates
// talhão under a budget of 10,000 peaks at a fraction of the heap the
// same read takes without a cap (both measured here, testkit.HeapDuring).
func TestReadTableBudget(t *testing.T) {
	var sb strings.Builder
	WriteBigTable(&sb, 100, 10)
	sb.WriteString("SMALL,q1,-55,-12,2024-09-01,0.5,0.1\nSMALL,q2,-55,-12,2024-09-01,0.5,0.1\n")
	b := []byte(sb.String())
	tab, err := ReadTable(b, "obs.csv", TableOptions{Collection: "s2", MaxCellScenes: 500})
	if err != nil {
		t.Fatal(err)
	}
	want := "obs.csv (talhão BIG): talhão too large for the memory budget: 100 points × 10 scenes = 1000 point-scene pairs, over the cap of 500 (--max-cell-scenes)"
	if errs := tab.Refused["BIG"]; len(errs) != 1 || !strings.Contains(errs[0].Error(), want) || !errors.Is(errs[0], ErrTable) {
		t.Errorf("refused %v; want %q", tab.Refused, want)
	}
	if len(tab.Grids) != 1 || tab.Grids[0].Field.ID != "SMALL" || len(tab.Obs) != 2 || tab.Rows != 1002 {
		t.Errorf("grids %d, %d observations, %d rows; want SMALL alone with 2, of 1002 rows", len(tab.Grids), len(tab.Obs), tab.Rows)
	}
	for _, limit := range []int{0, -1, 1002} {
		if tab := readCSV(t, string(b), TableOptions{Collection: "s2", MaxCellScenes: limit}); len(tab.Refused) != 0 || len(tab.Obs) != 1002 {
			t.Errorf("MaxCellScenes %d: refused %v, %d observations; want all read", limit, tab.Refused, len(tab.Obs))
		}
	}

	sb.Reset()
	WriteBigTable(&sb, 5000, 45)
	b = []byte(sb.String())
	peak := func(limit int) uint64 {
		_, p := testkit.HeapDuring(func() any {
			tab, err := ReadTable(b, "big.csv", TableOptions{Collection: "s2", MaxCellScenes: limit})
			if err != nil || len(tab.Refused)+len(tab.Grids) != 1 {
				t.Fatalf("%d refused, %d grids, %v", len(tab.Refused), len(tab.Grids), err)
			}
			return nil // peak of the read itself, nothing kept
		})
		return p
	}
	capped, full := peak(10_000), peak(-1)
	t.Logf("5,000 points × 45 dates (%d MB of CSV): peak heap %.1f MB under a budget of 10,000, %.1f MB without a cap (%.2f×)",
		len(b)>>20, float64(capped)/1e6, float64(full)/1e6, float64(capped)/float64(full))
	if capped*3 > full {
		t.Errorf("peak heap %d B under the budget, %d B without: want under a third", capped, full)
	}
}
