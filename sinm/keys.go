package sinm

import (
	"encoding/csv"
	"fmt"
	"io"
	"slices"
	"strings"
)

// KeysGlob matches the key files a run writes into its output folder (see
// KeysName); `manejo sinm submit` and `status` read them.
const KeysGlob = "sinm/keys*.csv"

// KeysName returns the path, in a run's output folder, of the file of the
// SINM classification keys its talhões declare (property
// chaveClassificacaoNM): "sinm/keys.csv", or "sinm/keys-<part>.csv" for a
// shard (part as "part-00000-of-00004"). Payload names end in ".json", so
// the two never meet.
func KeysName(part string) string {
	if part == "" {
		return "sinm/keys.csv"
	}
	return "sinm/keys-" + part + ".csv"
}

// WriteKeys writes keys (talhão id → chaveClassificacaoNM) as the CSV
// "field_id,chaveClassificacaoNM" that `manejo sinm submit --keys` also
// takes, one line per talhão in id order. A key is a capability: the file
// is for the operator's own folder, never for logs.
func WriteKeys(w io.Writer, keys map[string]string) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"field_id", "chaveClassificacaoNM"})
	ids := make([]string, 0, len(keys))
	for id := range keys {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		if strings.TrimSpace(keys[id]) == "" {
			continue
		}
		_ = cw.Write([]string{id, keys[id]})
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("write keys: %w", err)
	}
	return nil
}
