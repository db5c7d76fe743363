package classify

import (
	"strings"
	"testing"
)

// TestReadTableFieldCount reproduces defect 9 of issue 19: an unquoted
// decimal comma in a ','-separated soil CSV split "9,1" into two cells and
// shifted every later column (V% 1, Ca 62, m% 1) without a word. A row with
// more or fewer fields than the header is now an error naming its line and
// column; the ';' dialect with decimal commas is read as numbers.
func TestReadTableFieldCount(t *testing.T) {
	t.Parallel()
	header := strings.Join(SoilColumns, ",") + "\n"
	for _, tc := range []struct {
		name, data string
		want       []string // substrings of the error
	}{
		{"decimal comma shifts columns", header + "T01,8,60,2,10,150\nT02,9,1,62,1,3,150\n",
			[]string{"soil.csv: line 3, column 16", "7 fields where the header has 6", "decimal comma"}},
		{"short row", header + "T01,8,60,2\n", []string{"line 2", "4 fields where the header has 6", `"m_pct_20_40"`}},
		{"stray quote (panicked before)", header + "\"T01,8,60,2,10,150\n", []string{"read soil.csv", "line 2", `extraneous or missing " in quoted-field`}},
		{"after a blank line", header + "\nT01,8,60,2,10,150,\n", []string{"line 3, column 19", "7 fields"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := readTable([]byte(tc.data), "soil.csv", SoilColumns)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}

	semi := strings.Join(SoilColumns, ";") + "\nT02;9,1;62;1,5;3;150\n"
	tb, err := readTable([]byte(semi), "soil-br.csv", SoilColumns)
	if err != nil {
		t.Fatal(err)
	}
	for c, want := range map[string]float64{"ctc_0_20": 9.1, "v_pct_0_20": 62, "ca_20_40": 1.5, "m_pct_20_40": 3} {
		if v, err := tb.float(0, c); err != nil || v == nil || *v != want {
			t.Errorf("%s = %v, %v; want %v", c, v, err, want)
		}
	}

	// Through Preview: the whole batch fails instead of a wrong NM level.
	_, err = Preview(Sources{
		Soil:  File{Name: "soil.csv", R: strings.NewReader(header + "T02,9,1,62,1,3,150\n")},
		Crops: File{Name: "crops.csv", R: strings.NewReader(strings.Join(CropsColumns, ",") + "\n")},
	})
	if err == nil || !strings.Contains(err.Error(), "line 2, column 16") {
		t.Fatalf("Preview: %v, want the line 2 column 16 error", err)
	}
}

// FuzzReadTable: whatever the bytes, readTable either fails or returns rows
// of exactly one field per header column, each with its line number.
func FuzzReadTable(f *testing.F) {
	f.Add([]byte(strings.Join(SoilColumns, ",") + "\nT01,8,60,2,10,150\nT02,9,1,62,1,3,150\n"))
	f.Add([]byte("\xef\xbb\xbf" + strings.Join(SoilColumns, ";") + "\r\nT01;9,1;62;1,5;3;150\r\n\r\n"))
	f.Add([]byte(strings.Join(SoilColumns, ",") + "\n\"T01,8,60\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		tb, err := readTable(data, "fuzz.csv", SoilColumns)
		if err != nil {
			return
		}
		width := 0
		for _, j := range tb.col {
			width = max(width, j+1)
		}
		for i, r := range tb.rows {
			if len(r) < width || tb.lines[i] < 2 {
				t.Fatalf("row %d %q (line %d) against a header of %d columns", i, r, tb.lines[i], width)
			}
		}
	})
}
