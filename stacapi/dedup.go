package stacapi

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"
)

// Dropped is an item left out by Dedupe, and the item kept in its place.
type Dropped struct {
	Collection, ID         string
	KeptCollection, KeptID string
	Reason                 string // "duplicate" or "same-acquisition"
}

// The duplicate rules (docs/stac-api.md):
//
//  1. A second copy of a (collection, id) — pgstac pages sorted without a
//     unique tiebreaker repeat items across pages — is dropped.
//  2. One Sentinel-2 acquisition published under several ids (sequence
//     numbers _0_/_1_, reprocessed baselines, sentinel-2-l2a and
//     sentinel-2-c1-l2a of one product) keeps one item. Items are the same
//     acquisition when they have the same acquisition key: from
//     s2:product_uri, mission + product level + sensing start + relative
//     orbit + tile (the baseline and generation time dropped); without it,
//     platform + product level + MGRS tile + datetime to the second. The
//     product level (L1C, L2A: the URI's MSIL1C/MSIL2A, else
//     s2:product_type, else the collection's name) keeps an L1C item apart
//     from the L2A item of its acquisition: they are different products
//     the operator asked for, not copies (issue 28 point 11). The item kept has the latest
//     processing baseline, then the latest s2:generation_time (else
//     updated), then the highest s2:sequence, then the greatest
//     collection and id (so the choice never depends on page order).
//
// Items of other sensors are only deduplicated by rule 1.

// acq is what rule 2 reads of an item.
type acq struct {
	key      string
	baseline float64
	gen      time.Time
	seq      int
}

func acquisition(doc json.RawMessage) acq {
	var f struct {
		Collection string `json:"collection"`
		Properties struct {
			ProductType string `json:"s2:product_type"`
			ProductURI  string `json:"s2:product_uri"`
			Baseline    string `json:"s2:processing_baseline"`
			Generation  string `json:"s2:generation_time"`
			Updated     string `json:"updated"`
			Sequence    string `json:"s2:sequence"`
			Platform    string `json:"platform"`
			Tile        string `json:"s2:mgrs_tile"`
			GridCode    string `json:"grid:code"`
			Datetime    string `json:"datetime"`
		} `json:"properties"`
	}
	if json.Unmarshal(doc, &f) != nil {
		return acq{}
	}
	p := f.Properties
	var a acq
	level := productLevel(p.ProductType, f.Collection)
	if parts := strings.Split(strings.TrimSuffix(p.ProductURI, ".SAFE"), "_"); len(parts) == 7 && strings.HasPrefix(parts[0], "S2") {
		// S2A_MSIL2A_20231008T175231_N0509_R141_T13TDE_20231008T233154
		if l := strings.TrimPrefix(parts[1], "MSI"); l != parts[1] {
			level = l
		}
		a.key = strings.Join([]string{parts[0], level, parts[2], parts[4], parts[5]}, "_")
		if p.Baseline == "" && len(parts[3]) == 5 {
			p.Baseline = parts[3][1:3] + "." + parts[3][3:]
		}
		if p.Generation == "" {
			p.Generation = parts[6]
		}
	} else if tile := firstNonEmpty(p.Tile, strings.TrimPrefix(p.GridCode, "MGRS-")); tile != "" && strings.HasPrefix(strings.ToLower(p.Platform), "sentinel-2") {
		if t, err := time.Parse(time.RFC3339Nano, p.Datetime); err == nil {
			a.key = strings.ToLower(p.Platform) + "_" + level + "_" + tile + "_" + t.UTC().Truncate(time.Second).Format("20060102T150405")
		}
	}
	a.baseline, _ = strconv.ParseFloat(strings.TrimPrefix(p.Baseline, "N"), 64)
	for _, s := range []string{p.Generation, p.Updated} {
		if t, err := parseLoose(s); err == nil {
			a.gen = t
			break
		}
	}
	a.seq, _ = strconv.Atoi(p.Sequence)
	return a
}

// productLevel is a Sentinel-2 item's product level, "L1C" or "L2A", from
// s2:product_type (S2MSI1C, S2MSI2A), else the collection's name
// (sentinel-2-l1c, sentinel-2-c1-l2a); "" when neither says.
func productLevel(productType, collection string) string {
	t, c := strings.ToUpper(productType), strings.ToUpper(collection)
	switch {
	case strings.HasSuffix(t, "1C"), strings.Contains(c, "L1C"):
		return "L1C"
	case strings.HasSuffix(t, "2A"), strings.Contains(c, "L2A"):
		return "L2A"
	}
	return ""
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

func parseLoose(s string) (time.Time, error) {
	for _, l := range []string{time.RFC3339Nano, "20060102T150405"} {
		if t, err := time.Parse(l, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, strconv.ErrSyntax
}

// better reports whether candidate a (collection ca, id ia) wins over b.
func better(a, b acq, ca, ia, cb, ib string) bool {
	switch {
	case a.baseline != b.baseline:
		return a.baseline > b.baseline
	case !a.gen.Equal(b.gen):
		return a.gen.After(b.gen)
	case a.seq != b.seq:
		return a.seq > b.seq
	case ca != cb:
		return ca > cb
	}
	return ia > ib
}

// Dedupe applies the duplicate rules to res.Items (and their documents),
// keeping the API's order for the items kept, and counts what it dropped.
func (res *Result) Dedupe() {
	seen := map[string]bool{}
	keep := make([]bool, len(res.Items))
	winner := map[string]int{} // acquisition key → index of the item kept
	for i, it := range res.Items {
		k := it.Collection + "\x00" + it.ID
		if seen[k] {
			res.Duplicates++
			res.Dropped = append(res.Dropped, Dropped{it.Collection, it.ID, it.Collection, it.ID, "duplicate"})
			continue
		}
		seen[k] = true
		keep[i] = true
		a := res.acqs[i]
		if a.key == "" {
			continue
		}
		j, ok := winner[a.key]
		if !ok {
			winner[a.key] = i
			continue
		}
		lose, win := i, j
		if better(a, res.acqs[j], it.Collection, it.ID, res.Items[j].Collection, res.Items[j].ID) {
			lose, win = j, i
			winner[a.key] = i
		}
		keep[lose] = false
		res.SameAcquisition++
		res.Dropped = append(res.Dropped, Dropped{res.Items[lose].Collection, res.Items[lose].ID, res.Items[win].Collection, res.Items[win].ID, "same-acquisition"})
	}
	n := 0
	for i := range keep {
		if keep[i] {
			res.Items[n], res.spans[n], res.acqs[n] = res.Items[i], res.spans[i], res.acqs[i]
			n++
		}
	}
	res.Items, res.spans, res.acqs, res.Kept = res.Items[:n], res.spans[:n], res.acqs[:n], n
}
