package pipeline

import (
	"fmt"

	"github.com/manejo/manejo/grid"
	"hash/fnv"
	"os"
	"slices"
	"strconv"
	"strings"
)

// Shard is one slice of a portfolio: talhões whose id hashes to Index
// modulo Count. The zero value means "everything" (0 of 1).
type Shard struct {
	Index, Count int
}

// All is the single shard of an unsharded run.
var All = Shard{0, 1}

// String formats the shard as "i/n".
func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.Index, s.Count) }

// Part is the shard's tag in file names, "part-<i>-of-<n>" (0-based i, five
// digits each), as export.PartName writes the datasets.
func (s Shard) Part() string { return fmt.Sprintf("part-%05d-of-%05d", s.Index, max(s.Count, 1)) }

// Owns reports whether the talhão with the given id belongs to this shard.
// The assignment is a stable hash (FNV-1a 64) of the id, so it does not
// depend on the order of the input or on the machine.
func (s Shard) Owns(id string) bool {
	if s.Count <= 1 {
		return true
	}
	h := fnv.New64a()
	h.Write([]byte(id))
	return h.Sum64()%uint64(s.Count) == uint64(s.Index)
}

// The ways of assigning talhões to shards (Config.ShardBy).
const (
	// ShardBySpace cuts the talhões, in the order of their image tiles and
	// of a Hilbert curve through each tile's block grid, into runs of about
	// equal cells cut along tile or block lines (spatialShards): a shard
	// holds neighbours and reads the image blocks of its own area.
	ShardBySpace = "space"
	// ShardByHash assigns a talhão by FNV-1a 64 of its id modulo the
	// count (Shard.Owns): the assignment of runs before issue 26.
	ShardByHash = "hash"
)

// assignment returns the shard of every talhão id: by space (over the
// readable talhões, fields, on the imagery's tiles: nil for every tile)
// unless the run shards by hash. A talhão without a place in the spatial
// assignment (unreadable, no geometry) is assigned by hash.
func (c *Config) assignment(fields []grid.Field, tiles map[tileID]bool) func(id string) int {
	n := max(c.Shard.Count, 1)
	byHash := func(id string) int {
		h := fnv.New64a()
		h.Write([]byte(id))
		return int(h.Sum64() % uint64(n))
	}
	if n <= 1 || c.ShardBy == ShardByHash {
		return byHash
	}
	at := c.spatialAssignment(fields, tiles)
	return func(id string) int {
		if i, ok := at[id]; ok {
			return i
		}
		return byHash(id)
	}
}

// sortedFields returns a copy of fields sorted by id.
func sortedFields(fields []grid.Field) []grid.Field {
	out := slices.Clone(fields)
	slices.SortFunc(out, func(a, b grid.Field) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// spatialAssignment is the shard of each talhão under ShardBySpace:
// blockShards on the Sentinel-2 block grid of ShardBlockPx-pixel COGs of
// tiles (nil: every tile), or spatialShards' cut alone when ShardBlockPx
// is negative.
func (c *Config) spatialAssignment(fields []grid.Field, tiles map[tileID]bool) map[string]int {
	if c.ShardBlockPx < 0 {
		return spatialShards(fields, c.Shard.Count, c.Grid)
	}
	return blockShards(fields, c.Shard.Count, c.Grid, s2Layouts(c.shardBlockPx()), tiles)
}

// shardBlockPx is ShardBlockPx, DefaultShardBlockPx for 0.
func (c *Config) shardBlockPx() int {
	if c.ShardBlockPx == 0 {
		return DefaultShardBlockPx
	}
	return c.ShardBlockPx
}

// ParseShard parses "i/n" with 0 ≤ i < n.
func ParseShard(v string) (Shard, error) {
	a, b, ok := strings.Cut(v, "/")
	if !ok {
		return Shard{}, fmt.Errorf("shard %q: want i/n, e.g. 3/16", v)
	}
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n {
		return Shard{}, fmt.Errorf("shard %q: want i/n with 0 ≤ i < n", v)
	}
	return Shard{i, n}, nil
}

// ShardFromEnv resolves the shard of this process: an explicit "i/n" flag
// wins; otherwise AWS Batch array jobs (AWS_BATCH_JOB_ARRAY_INDEX, with the
// count from shards) or Kubernetes Indexed Jobs (JOB_COMPLETION_INDEX, with
// the count from shards or from the job's completions passed the same way).
// With neither, the run is unsharded.
func ShardFromEnv(flag string, shards int, getenv func(string) string) (Shard, string, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	if flag != "" {
		s, err := ParseShard(flag)
		return s, "--shard", err
	}
	for _, v := range []string{"AWS_BATCH_JOB_ARRAY_INDEX", "JOB_COMPLETION_INDEX"} {
		raw := getenv(v)
		if raw == "" {
			continue
		}
		i, err := strconv.Atoi(raw)
		if err != nil || i < 0 {
			return Shard{}, v, fmt.Errorf("%s=%q: not a shard index", v, raw)
		}
		if shards < 1 {
			return Shard{}, v, fmt.Errorf("%s=%s is set: give the number of shards with --shards (the array size / completions)", v, raw)
		}
		if i >= shards {
			return Shard{}, v, fmt.Errorf("%s=%d is not below --shards %d", v, i, shards)
		}
		return Shard{i, shards}, v, nil
	}
	if shards > 1 {
		return Shard{}, "", fmt.Errorf("--shards %d without --shard i/n, AWS_BATCH_JOB_ARRAY_INDEX or JOB_COMPLETION_INDEX", shards)
	}
	return All, "", nil
}
