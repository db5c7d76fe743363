package pipeline

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/manejo/manejo/coverage"
	"github.com/manejo/manejo/sinm"
)

// TestValidate: every error wraps ErrConfig and names the flag; the first
// missing input is named in a fixed order (--fields, --catalog, --out,
// --season), the same on every call (it used to come from a map).
func TestValidate(t *testing.T) {
	t.Parallel()
	season, err := coverage.ParseSeason("2026/2027", coverage.MonthDay{})
	if err != nil {
		t.Fatal(err)
	}
	ok := Config{Fields: "f.geojson", Catalog: "c.json", Out: "out", Season: season,
		Codes: sinm.SatelliteCodes{"sentinel-2-l2a": "S01"}}
	if err := ok.Validate(); err != nil {
		t.Fatalf("a complete configuration: %v", err)
	}
	for _, px := range []int{-1, 0, 64, 512, 1024, 8192} {
		c := ok
		c.ShardBlockPx = px
		if err := c.Validate(); err != nil {
			t.Errorf("--shard-block-px %d: %v", px, err)
		}
	}
	for _, tc := range []struct {
		change func(*Config)
		want   string
	}{
		{func(c *Config) { *c = Config{} }, "--fields is required"},
		{func(c *Config) { *c = Config{Fields: "f"} }, "--catalog is required"},
		{func(c *Config) { *c = Config{Fields: "f", Catalog: "c"} }, "--out is required"},
		{func(c *Config) { c.Season = coverage.Season{} }, "--season is required"},
		{func(c *Config) { c.Workers = -3 }, "--workers -3: want 0 (the default) or a positive number"},
		{func(c *Config) { c.IOConcurrency = -1 }, "--io-concurrency -1"},
		{func(c *Config) { c.BatchSize = -1 }, "--batch-size -1"},
		{func(c *Config) { c.ShardBy = "random" }, `--shard-by "random": want space or hash`},
		{func(c *Config) { c.ShardBlockPx = 1 }, "--shard-block-px 1: want 0 (the default, 1024), -1"},
		{func(c *Config) { c.ShardBlockPx = -7 }, "--shard-block-px -7"},
		{func(c *Config) { c.ShardBlockPx = 16384 }, "--shard-block-px 16384"},
		{func(c *Config) { c.ReadPass = "maybe" }, `--read-pass "maybe": want auto, on or off`},
		{func(c *Config) { c.IDField = "cpfProdutor" }, "--id-field: "},
		{func(c *Config) { c.From = time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC) }, "--from 2026-07-01 is after --as-of 2026-06-30"},
		{func(c *Config) { c.Codes = sinm.SatelliteCodes{} }, "satellite codes are required"},
		{func(c *Config) { c.OperatorCNPJ = "11.444.777/0001-62" }, "not a valid CNPJ"},
		{func(c *Config) { c.Phase = "both" }, `--phase "both"`},
		{func(c *Config) { c.Phase, c.DEM = PhaseRead, "stac:nasadem" }, "--phase read with --dem stac:nasadem: a stac: DEM needs a STAC API --catalog"},
		{func(c *Config) { c.Phase, c.DEM = PhaseFinish, "stac:nasadem" }, "--phase finish with --dem stac:nasadem"},
	} {
		c := ok
		tc.change(&c)
		for range 10 {
			err := c.Validate()
			if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate() = %v, want ErrConfig and %q", err, tc.want)
			}
		}
	}
	c := ok
	c.OperatorCNPJ = "11.444.777/0001-62"
	if err := c.Validate(); !errors.Is(err, ErrOperatorCNPJ) || strings.Contains(err.Error(), "11.444") || strings.Contains(err.Error(), "11444") {
		t.Errorf("invalid CNPJ: %v; want ErrOperatorCNPJ without the value", err)
	}
	if got := ok.AsOfOrDefault(); !got.Equal(time.Date(2026, 6, 30, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("AsOfOrDefault() = %s, want the day before the contract year, 2026-06-30", got)
	}
}
