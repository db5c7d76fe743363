package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/manejo/manejo/coverage"
	"github.com/manejo/manejo/grid"
	"github.com/manejo/manejo/series"
	"github.com/manejo/manejo/storage"
	"github.com/manejo/manejo/tillage"
)

// hashFile is sha of the object at loc, read as a stream.
func hashFile(ctx context.Context, loc string) (string, error) {
	rc, err := storage.Open(ctx, loc)
	if err != nil {
		return "", err
	}
	defer rc.Close()
	h := sha256.New()
	if _, err := io.Copy(h, rc); err != nil {
		return "", err
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

func sha(b []byte) string {
	h := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(h[:])
}

// paramsHash identifies everything that shapes the results of a shard, so
// a rerun resumes only from batches computed the same way.
func paramsHash(cfg Config, finger map[string]string) string {
	keys := make([]string, 0, len(finger))
	for k := range finger {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s=%s\n", k, finger[k])
	}
	if cfg.OperatorCNPJ != "" { // only when set: hashes of runs without it stay the same
		fmt.Fprintf(&b, "operator-cnpj=%s\n", cfg.OperatorCNPJ)
	}
	if cfg.UndeclaredPracticesAsZero { // likewise
		b.WriteString("undeclared-practices-as-zero\n")
	}
	if cfg.Shard.Count > 1 && cfg.ShardBy != ShardByHash { // likewise: hash-sharded folders keep their hash
		// shard-grid: cut on the tiling grid's block lines (issue 26), not
		// the portfolio's bounding square, so a folder started with the
		// earlier spatial cut is computed again, not resumed with other
		// talhões; with the block search (blockShards) the grid's block size
		// too. --shard-block-px -1 is the cut of 2026-12-01 and keeps its hash.
		grid := "s2-blocks"
		if cfg.ShardBlockPx >= 0 {
			grid = fmt.Sprintf("s2-block-search-%d", cfg.shardBlockPx())
		}
		fmt.Fprintf(&b, "shard-by=%s\nshard-grid=%s\n", cfg.ShardBy, grid)
	}
	if cfg.MaxCellScenes != 0 { // likewise: it decides which talhões are refused
		fmt.Fprintf(&b, "max-cell-scenes=%d\n", cfg.MaxCellScenes)
	}
	if cfg.BatchCellScenes != 0 { // likewise: it cuts the batches, as BatchSize
		fmt.Fprintf(&b, "batch-cell-scenes=%d\n", cfg.BatchCellScenes)
	}
	if len(cfg.AllowMissingQA) > 0 {
		fmt.Fprintf(&b, "allow-missing-qa=%s\n", strings.Join(cfg.AllowMissingQA, ","))
	}
	p, _ := json.Marshal(struct {
		Version, Season, AgriYearStart, From, AsOf, Codes, Shard string
		BatchSize                                                int
		Grid                                                     grid.Options
		Tillage                                                  tillage.Params
		Coverage                                                 coverage.Params
		IDField                                                  string
	}{cfg.Version, cfg.Season.Label, cfg.AgriYearStart.String(), cfg.From.Format(time.DateOnly), cfg.AsOf.Format(time.DateOnly),
		cfg.Codes.String(), cfg.Shard.String(), cfg.BatchSize, cfg.Grid, cfg.Tillage, cfg.Coverage, cfg.IDField})
	b.Write(p)
	return sha([]byte(b.String()))
}

// catalogFingerprint hashes what the run uses of the catalog: item ids,
// dates, collections and asset hrefs, in a stable order.
func catalogFingerprint(cat *series.Catalog) string {
	lines := make([]string, 0, len(cat.Items))
	for _, it := range cat.Items {
		keys := make([]string, 0, len(it.Assets))
		for k, a := range it.Assets {
			keys = append(keys, k+"="+a.Href)
		}
		sort.Strings(keys)
		lines = append(lines, it.Collection+"|"+it.ID+"|"+it.Datetime.UTC().Format(time.RFC3339)+"|"+strings.Join(keys, ","))
	}
	sort.Strings(lines)
	return sha([]byte(strings.Join(lines, "\n")))
}
