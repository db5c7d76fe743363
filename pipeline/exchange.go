package pipeline

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/manejo/manejo/export"
	"github.com/manejo/manejo/grid"
	"github.com/manejo/manejo/series"
	"github.com/manejo/manejo/storage"
)

// The block exchange between shards (issue 26). Sharded runs that each
// read the blocks of their own talhões read the blocks along their edges
// more than once: on one dense tile no partition of whole talhões reads
// less than 2.02× the minimum at 16 shards. With the exchange a sharded
// run has two phases. In the read phase (PhaseRead) every shard computes
// the same plan (exchangePlan: each scene of the catalog has one owner
// shard) and reads the scenes it owns for every talhão of the portfolio
// under them, handing the observations over to the shard of each talhão
// through the output folder (_exchange/, one object per pair of shards,
// and a marker per reading shard, written last). In the finish phase
// (PhaseFinish) a shard waits for every shard's marker, takes its talhões'
// observations as the read pass's (spill), and runs its batches exactly
// as a one-phase run does: same rows, same payloads. A scene is the unit
// of ownership, all its blocks with it: every file is then opened by one
// shard only, which the per-file cost of a read (header and read-ahead,
// ≈ 300 KB a file measured) makes the cheapest split (docs/performance.md).

// Run phases (Config.Phase).
const (
	PhaseAll    = ""       // one phase: the shard reads what its talhões need (the default)
	PhaseRead   = "read"   // read the scenes this shard owns for every talhão, hand them over
	PhaseFinish = "finish" // wait for every shard's hand-over, compute this shard's talhões
)

// DefaultExchangeWait is the default Config.ExchangeWait: how long the
// finish phase waits for the read phases of the other shards.
const DefaultExchangeWait = 30 * time.Minute

// exchangeDir is where a read phase leaves its hand-over and marker.
func exchangeDir(out string, sh Shard) string { return storage.Join(out, "_exchange", sh.Part()) }

// handoverName is the object of the observations shard from hands to
// shard to.
func handoverName(to Shard) string { return "to-" + to.Part() + ".obs" }

// exchangeMarker is the _SUCCESS of a read phase: what it read, for whom,
// and what it could not read. Written last, so its presence means every
// hand-over object it lists is complete.
type exchangeMarker struct {
	// Key identifies the inputs and parameters of the exchange (the
	// params hash of shard 0, the same for every shard); Plan the
	// digest of the plan (exchangePlan.digest).
	Key   string `json:"key"`
	Plan  string `json:"plan"`
	RunID string `json:"run_id"`
	Shard string `json:"shard"`
	// Handover is, by receiving shard part, the object written for it.
	Handover map[string]handoverObject `json:"handover"`
	// GivenUp are the scenes this phase owned and did not read in full
	// because their reads still failed transiently (item id → why): the
	// receiving shards' batches read them themselves.
	GivenUp map[string]string `json:"given_up,omitempty"`
	// IO is what the phase read, by collection, with its minimum.
	IO          map[string]export.IO `json:"io"`
	Scenes      int                  `json:"scenes"`
	Talhoes     int                  `json:"talhoes"`
	Seconds     float64              `json:"seconds"`
	CompletedAt time.Time            `json:"completed_at"`
}

// handoverObject is one hand-over object as its writer saw it.
type handoverObject struct {
	Path    string `json:"path"`
	Bytes   int64  `json:"bytes"`
	SHA256  string `json:"sha256"`
	Records int64  `json:"records"`
}

// exchangePlan is the owner shard of every scene (item id) a talhão of the
// portfolio selects. Every shard computes it from the same talhões file,
// catalog and shard assignment, so every shard gets the same plan.
type exchangePlan struct {
	owner map[string]int
	n     int
}

// planExchange deals the scenes to shards: each scene, in date order, to
// the shard with the most of its planned load left among the shards with
// talhões under it. A shard's planned load is its talhões' estimated
// cells × their scenes, so shards read about as many cell × scene pairs
// as they own, and a scene stays with the shards of its talhões (a tile
// one shard holds alone is read by that shard, and nothing is handed
// over). Ties go to the shard with more cells under the scene, then the
// lower index.
func planExchange(cat *series.Catalog, fields []grid.Field, shardOf func(string) int, n int, cfg Config) *exchangePlan {
	share := map[*series.Item][]float64{}
	target := make([]float64, n)
	for _, f := range sortedFields(fields) { // sums in one order: the same plan on every shard
		w, k := estimatedCells(f, cfg.Grid), shardOf(f.ID)
		for _, it := range cat.Select(f, cfg.From, cfg.AsOf) {
			s := share[it]
			if s == nil {
				s = make([]float64, n)
				share[it] = s
			}
			s[k] += w
			target[k] += w
		}
	}
	items := make([]*series.Item, 0, len(share))
	for it := range share {
		items = append(items, it)
	}
	sort.Slice(items, func(i, j int) bool { return itemLess(items[i], items[j]) })
	p := &exchangePlan{owner: make(map[string]int, len(items)), n: n}
	for _, it := range items {
		s, best, total := share[it], -1, 0.0
		for k, v := range s {
			total += v
			if v > 0 && (best < 0 || target[k] > target[best] || target[k] == target[best] && v > s[best]) {
				best = k
			}
		}
		p.owner[it.ID] = best
		target[best] -= total
	}
	return p
}

// itemLess orders items by date, collection and id.
func itemLess(a, b *series.Item) bool {
	if !a.Datetime.Equal(b.Datetime) {
		return a.Datetime.Before(b.Datetime)
	}
	if a.Collection != b.Collection {
		return a.Collection < b.Collection
	}
	return a.ID < b.ID
}

// owns says whether shard k owns scene it.
func (p *exchangePlan) owns(k int, it *series.Item) bool {
	o, ok := p.owner[it.ID]
	return ok && o == k
}

// digest identifies the plan: equal digests, equal owners.
func (p *exchangePlan) digest() string {
	ids := make([]string, 0, len(p.owner))
	for id := range p.owner {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	h := sha256.New()
	fmt.Fprintf(h, "shards=%d\n", p.n)
	for _, id := range ids {
		fmt.Fprintf(h, "%s=%d\n", id, p.owner[id])
	}
	return hex.EncodeToString(h.Sum(nil))[:32]
}

// exchangeKey is the params hash every shard of the exchange shares: the
// run's, as shard 0 of the same count would compute it.
func exchangeKey(cfg Config, finger map[string]string) string {
	c := cfg
	c.Shard = Shard{0, cfg.Shard.Count}
	return paramsHash(c, finger)
}

// validPhase checks Config.Phase and ExchangeWait (Validate).
func (c Config) validPhase() error {
	switch c.Phase {
	case PhaseAll:
		return nil
	case PhaseRead, PhaseFinish:
	default:
		return fmt.Errorf("%w: --phase %q: want %s or %s (or none: one phase)", ErrConfig, c.Phase, PhaseRead, PhaseFinish)
	}
	if c.ExchangeWait < 0 {
		return fmt.Errorf("%w: --exchange-wait %s: want a positive duration", ErrConfig, c.ExchangeWait)
	}
	if strings.HasPrefix(c.DEM, "stac:") {
		// A stac: DEM is searched in the --catalog STAC API, and the
		// exchange plans on a static catalog (run.plan): never both.
		return fmt.Errorf("%w: --phase %s with --dem %s: a stac: DEM needs a STAC API --catalog, the exchange a static one; give the DEM as a file or a VRT of its tiles", ErrConfig, c.Phase, c.DEM)
	}
	return nil
}

// plan is the run's exchange plan. The exchange plans on the whole
// catalog, so it needs a static one: a STAC API is searched with each
// shard's own talhões, and the shards would plan on different items.
func (r *run) plan() (*exchangePlan, error) {
	if r.frozen != nil {
		return nil, fmt.Errorf("%w: --phase %s needs a static catalog (every shard plans the exchange on the same items), not the STAC API %s: freeze one first (manejo catalog search, or the catalog/items.json of an earlier run)", ErrConfig, r.cfg.Phase, r.cfg.Catalog)
	}
	return planExchange(r.in.cat, r.all, r.shardOf, r.cfg.Shard.Count, r.cfg), nil
}
