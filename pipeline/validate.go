package pipeline

import (
	"fmt"
	"time"

	"github.com/manejo/manejo/grid"
	"github.com/manejo/manejo/sinm"
)

// Validate checks c as Run and AnalyseTable do before any work, without
// I/O and without changing c: the required inputs (Fields, Catalog, Out,
// the contract Season — the first one missing, in that order), the counts
// (Workers, IOConcurrency, BatchSize: zero is the default, negative an
// error), ShardBy and ReadPass, the IDField (never a CPF or CNPJ), From not
// after the reference date (AsOfOrDefault), the satellite codes and the
// operator's CNPJ (ErrOperatorCNPJ, which never repeats the value). Every
// error wraps ErrConfig and names the flag of manejo run; the CLI reports
// it as a usage error (exit 2).
func (c Config) Validate() error {
	for _, in := range []struct{ flag, v string }{
		{"--fields", c.Fields}, {"--catalog", c.Catalog}, {"--out", c.Out}, {"--season", c.Season.Label},
	} {
		if in.v == "" {
			return fmt.Errorf("%w: %s is required", ErrConfig, in.flag)
		}
	}
	for _, n := range []struct {
		flag string
		v    int
	}{{"--workers", c.Workers}, {"--io-concurrency", c.IOConcurrency}, {"--batch-size", c.BatchSize}} {
		if n.v < 0 {
			return fmt.Errorf("%w: %s %d: want 0 (the default) or a positive number", ErrConfig, n.flag, n.v)
		}
	}
	if c.ShardBy != "" && c.ShardBy != ShardBySpace && c.ShardBy != ShardByHash {
		return fmt.Errorf("%w: --shard-by %q: want %s or %s", ErrConfig, c.ShardBy, ShardBySpace, ShardByHash)
	}
	if b := c.ShardBlockPx; b != 0 && b != -1 && (b < 64 || b > 8192) {
		return fmt.Errorf("%w: --shard-block-px %d: want 0 (the default, %d), -1 (the cut on grid lines) or a block side of 64–8192 px", ErrConfig, b, DefaultShardBlockPx)
	}
	if c.ReadPass != "" && c.ReadPass != ReadPassAuto && c.ReadPass != ReadPassOn && c.ReadPass != ReadPassOff {
		return fmt.Errorf("%w: --read-pass %q: want %s, %s or %s", ErrConfig, c.ReadPass, ReadPassAuto, ReadPassOn, ReadPassOff)
	}
	if err := c.validPhase(); err != nil {
		return err
	}
	if c.IDField != "" {
		if err := grid.CheckIDField(c.IDField); err != nil {
			return fmt.Errorf("%w: --id-field: %w", ErrConfig, err)
		}
	}
	if asOf := c.AsOfOrDefault(); !c.From.IsZero() && c.From.After(asOf) {
		return fmt.Errorf("%w: --from %s is after --as-of %s: no scene could be read", ErrConfig, c.From.Format(time.DateOnly), asOf.Format(time.DateOnly))
	}
	if len(c.Codes) == 0 {
		return fmt.Errorf("%w: satellite codes are required: SINM's catalogue is not public, so say which code each collection has (--satellite-codes 'sentinel-2-l2a=S01,dem=S09')", ErrConfig)
	}
	if c.OperatorCNPJ != "" {
		if _, ok := sinm.NormalizeCNPJ(c.OperatorCNPJ); !ok {
			return fmt.Errorf("%w: %w", ErrConfig, ErrOperatorCNPJ)
		}
	}
	return nil
}

// AsOfOrDefault is the reference date of T and the last scene date read:
// AsOf, or when zero the day before the contract year starts.
func (c Config) AsOfOrDefault() time.Time {
	if c.AsOf.IsZero() {
		return c.Season.Start.AddDate(0, 0, -1)
	}
	return c.AsOf
}
