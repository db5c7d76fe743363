package pipeline

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"

	"github.com/manejo/manejo/export"
	"github.com/manejo/manejo/grid"
	"github.com/manejo/manejo/sinm"
	"github.com/manejo/manejo/storage"
)

// keysName is the shard's file of SINM classification keys (sinm.KeysName).
func keysName(sh Shard) string {
	if sh.Count <= 1 {
		return sinm.KeysName("")
	}
	return sinm.KeysName(sh.Part())
}

// keysFile returns the CSV of the SINM keys (property chaveClassificacaoNM)
// the owned talhões declare, as `manejo sinm submit` reads it, and its
// record for run.json; nil when no talhão declares one. Talhões that fail
// keep their key in it: submit then names them as having no payload.
func keysFile(sh Shard, owned []grid.Field) ([]byte, export.Output) {
	keys := map[string]string{}
	for _, f := range owned {
		if f.ChaveClassificacaoNM != "" {
			keys[f.ID] = f.ChaveClassificacaoNM
		}
	}
	if len(keys) == 0 {
		return nil, export.Output{}
	}
	var buf bytes.Buffer
	_ = sinm.WriteKeys(&buf, keys) // a bytes.Buffer does not fail
	h := sha256.Sum256(buf.Bytes())
	return buf.Bytes(), export.Output{Path: keysName(sh), Rows: int64(len(keys)), Bytes: int64(buf.Len()), SHA256: hex.EncodeToString(h[:])}
}

// publishKeys writes the keys file of the run, when it has one.
func (r *run) publishKeys(ctx context.Context) error {
	if r.keys == nil {
		return nil
	}
	return storage.WriteFile(ctx, storage.Join(r.cfg.Out, r.keysOut.Path), r.keys)
}
