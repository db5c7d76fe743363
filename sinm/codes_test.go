package sinm

import (
	"errors"
	"maps"
	"strings"
	"testing"
)

func TestParseSatelliteCodes(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want SatelliteCodes
		err  string
	}{
		{"issue example", "sentinel-2-l2a=S01,landsat-c2-l2=S02,dem=S09", SatelliteCodes{"sentinel-2-l2a": "S01", "landsat-c2-l2": "S02", "dem": "S09"}, ""},
		{"spaces and trailing comma", " HLSS30 = S03 , ", SatelliteCodes{"HLSS30": "S03"}, ""},
		{"empty", "", SatelliteCodes{}, ""},
		{"S10", "dem=S10", nil, "does not match"},
		{"S00", "dem=S00", nil, "does not match"},
		{"lowercase", "dem=s09", nil, "does not match"},
		{"no equals", "dem", nil, "want collection=code"},
		{"duplicate", "dem=S09,dem=S08", nil, "given twice"},
		{"empty key", "=S01", nil, "empty collection"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseSatelliteCodes(tc.in)
			if tc.err != "" {
				if !errors.Is(err, ErrBadSatelliteCode) || !strings.Contains(err.Error(), tc.err) {
					t.Errorf("ParseSatelliteCodes(%q) error = %v, want %q", tc.in, err, tc.err)
				}
				return
			}
			if err != nil || !maps.Equal(got, tc.want) {
				t.Errorf("ParseSatelliteCodes(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
			}
		})
	}
}

func TestLoadSatelliteCodes(t *testing.T) {
	want := SatelliteCodes{"sentinel-2-l2a": "S01", "dem": "S09"}
	for name, src := range map[string]string{
		"json":      `{"sentinel-2-l2a": "S01", "dem": "S09"}`,
		"key=value": "# SINM satellite catalogue, 2026-11\nsentinel-2-l2a=S01\n\ndem = S09  # NASADEM\n",
	} {
		t.Run(name, func(t *testing.T) {
			got, err := LoadSatelliteCodes(strings.NewReader(src))
			if err != nil || !maps.Equal(got, want) {
				t.Errorf("LoadSatelliteCodes = %v, %v; want %v", got, err, want)
			}
		})
	}
	if _, err := LoadSatelliteCodes(strings.NewReader("dem=S09\nbroken line\n")); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("bad line error = %v, want line 2", err)
	}
	if _, err := LoadSatelliteCodes(strings.NewReader(`{"dem": 9}`)); !errors.Is(err, ErrBadSatelliteCode) {
		t.Errorf("JSON number error = %v", err)
	}
}

func TestSatelliteCodeLookup(t *testing.T) {
	c := SatelliteCodes{"sentinel-2-l2a": "S01"}.Merge(SatelliteCodes{"dem": "S09", "sentinel-2-l2a": "S04"})
	if code, err := c.Code("sentinel-2-l2a"); err != nil || code != "S04" {
		t.Errorf("Code after Merge = %q, %v; want S04 (flag wins)", code, err)
	}
	_, err := c.Code("HLSL30")
	if !errors.Is(err, ErrNoSatelliteCode) || !strings.Contains(err.Error(), `"HLSL30"`) || !strings.Contains(err.Error(), "dem, sentinel-2-l2a") {
		t.Errorf("Code(HLSL30) = %v", err)
	}
	if s := c.String(); s != "dem=S09,sentinel-2-l2a=S04" {
		t.Errorf("String() = %q", s)
	}
}

func FuzzParseSatelliteCodes(f *testing.F) {
	for _, s := range []string{"sentinel-2-l2a=S01,landsat-c2-l2=S02,dem=S09", "dem=S09", "", "a=S1", "=,=", "x=S01,x=S01"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseSatelliteCodes(s)
		if err != nil {
			return
		}
		for k, v := range c {
			if !codePattern.MatchString(v) || strings.TrimSpace(k) != k || k == "" {
				t.Fatalf("accepted %q → %q", k, v)
			}
		}
		// Round trip through String, unless a key holds a separator.
		for k := range c {
			if strings.ContainsAny(k, ",=") {
				return
			}
		}
		back, err := ParseSatelliteCodes(c.String())
		if err != nil || !maps.Equal(back, c) {
			t.Fatalf("round trip of %q: %v, %v", c.String(), back, err)
		}
	})
}

func FuzzLoadSatelliteCodes(f *testing.F) {
	for _, s := range []string{`{"sentinel-2-l2a": "S01", "dem": "S09"}`, "dem=S09\n# c\nx = S02 # y\n", "{", "=\n", `{"a":"S01","a":"S02"}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := LoadSatelliteCodes(strings.NewReader(s))
		if err != nil {
			return
		}
		for k, v := range c {
			if !codePattern.MatchString(v) || k == "" {
				t.Fatalf("accepted %q → %q from %q", k, v, s)
			}
		}
	})
}
