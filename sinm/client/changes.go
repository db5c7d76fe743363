package client

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// personal are the payload members never summarised, not even hashed (an
// 11-digit CPF's hash is found by trying them all): a change there is
// only inferred from the whole payload's hash.
var personal = map[string]bool{"cpfProdutor": true, "cnpjPropriedade": true, "cnpjEmpresaSensoriamento": true}

// Part is what the ledger keeps of one payload member, so that a later
// submit can say what changed (issue 28 point 10): a scalar's JSON value,
// or a list's length and the first 12 hex digits of its SHA-256.
type Part struct {
	Value string `json:"v,omitempty"`
	N     int    `json:"n,omitempty"`
	SHA   string `json:"sha,omitempty"`
}

// partsOf summarises the members of a payload, personal ones left out
// (nil when it is not a JSON object).
func partsOf(payload []byte) map[string]Part {
	var m map[string]json.RawMessage
	if json.Unmarshal(payload, &m) != nil {
		return nil
	}
	out := make(map[string]Part, len(m))
	for k, v := range m {
		if personal[k] {
			continue
		}
		var list []json.RawMessage
		if json.Unmarshal(v, &list) == nil {
			s := sha256.Sum256(v)
			out[k] = Part{N: len(list), SHA: hex.EncodeToString(s[:6])}
			continue
		}
		out[k] = Part{Value: string(v)}
	}
	return out
}

// changes says what differs between the payload delivered (its record d)
// and the one about to be sent: the key, each member that changed (a
// scalar old → new, a list by its length), or, when no summarised member
// did, the personal data; nil when d holds no summary (a ledger written
// before issue 28).
func changes(d *Record, keyHash string, now map[string]Part) []string {
	if d == nil || d.Parts == nil {
		return nil
	}
	var out []string
	if d.KeySHA256 != keyHash {
		out = append(out, "the classification key")
	}
	names := make([]string, 0, len(now)+len(d.Parts))
	for k := range now {
		names = append(names, k)
	}
	for k := range d.Parts {
		if _, ok := now[k]; !ok {
			names = append(names, k)
		}
	}
	slices.Sort(names)
	for _, k := range names {
		a, had := d.Parts[k]
		b, has := now[k]
		switch {
		case !had:
			out = append(out, k+" added")
		case !has:
			out = append(out, k+" removed")
		case a == b:
		case a.SHA != "" || b.SHA != "":
			out = append(out, fmt.Sprintf("%s %d → %d entries", k, a.N, b.N))
		default:
			out = append(out, fmt.Sprintf("%s %s → %s", k, a.Value, b.Value))
		}
	}
	if len(out) == 0 {
		out = append(out, "personal data (cpfProdutor, cnpjPropriedade or cnpjEmpresaSensoriamento)")
	}
	return []string{"changed: " + strings.Join(out, ", ")}
}
