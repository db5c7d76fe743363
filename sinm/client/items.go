package client

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strings"

	"github.com/manejo/manejo/sinm"
)

// ReadKeys reads a CSV "field_id,chaveClassificacaoNM" (header required,
// column order free, header names case-insensitive) into field id → key.
// Errors name the line, never the key.
func ReadKeys(r io.Reader) (map[string]string, error) {
	cr := csv.NewReader(r)
	cr.TrimLeadingSpace = true
	head, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("keys CSV: header: %w", err)
	}
	fi, ki := -1, -1
	for i, h := range head {
		switch strings.ToLower(strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))) {
		case "field_id":
			fi = i
		case "chaveclassificacaonm", "chave":
			ki = i
		}
	}
	if fi < 0 || ki < 0 {
		return nil, errors.New("keys CSV: header must name field_id and chaveClassificacaoNM")
	}
	keys := map[string]string{}
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return keys, nil
		}
		if err != nil {
			return nil, fmt.Errorf("keys CSV line %d: not CSV", line)
		}
		id, key := strings.TrimSpace(rec[fi]), strings.TrimSpace(rec[ki])
		switch {
		case id == "" || key == "":
			return nil, fmt.Errorf("keys CSV line %d: empty field_id or key", line)
		case keys[id] != "":
			return nil, fmt.Errorf("keys CSV line %d: talhão %s listed twice", line, id)
		}
		keys[id] = key
	}
}

// Items reads the payload of every talhão of keys from an output folder
// (sinm.PayloadName), in field id order. missing lists the talhões with a
// key but no payload (the run failed them or does not know them); unkeyed
// counts payloads without a key.
func Items(fsys fs.FS, keys map[string]string) (items []Item, missing []string, unkeyed int, err error) {
	named := map[string]bool{}
	for _, id := range sortedKeys(keys) {
		name := sinm.PayloadName(id)
		named[name] = true
		b, err := fs.ReadFile(fsys, name)
		if errors.Is(err, fs.ErrNotExist) {
			missing = append(missing, id)
			continue
		}
		if err != nil {
			return nil, nil, 0, fmt.Errorf("read payload of talhão %s: %w", id, err)
		}
		items = append(items, Item{FieldID: id, Key: keys[id], Payload: b})
	}
	all, err := fs.Glob(fsys, "sinm/*.json")
	if err != nil {
		return nil, nil, 0, err
	}
	for _, n := range all {
		if !named[n] {
			unkeyed++
		}
	}
	return items, missing, unkeyed, nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// RunKeys reads the keys a run wrote into its output folder (sinm.KeysGlob:
// sinm/keys.csv, or one file per shard) from the talhões' property
// chaveClassificacaoNM: talhão id → key, empty when there are none. A
// talhão listed twice with different keys is an error naming it.
func RunKeys(fsys fs.FS) (map[string]string, error) {
	files, err := fs.Glob(fsys, sinm.KeysGlob)
	if err != nil {
		return nil, err
	}
	keys := map[string]string{}
	for _, name := range files {
		f, err := fsys.Open(name)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", name, err)
		}
		part, err := ReadKeys(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		for id, k := range part {
			if old, ok := keys[id]; ok && old != k {
				return nil, fmt.Errorf("%s: talhão %s has another key in an earlier keys file", name, id)
			}
			keys[id] = k
		}
	}
	return keys, nil
}

// KeyConflict is a talhão whose key in a --keys CSV differs from the one
// its talhões file declared; the CSV's is used. Both keys appear only as
// their Redact prefix and the first 8 hex digits of their KeyHash.
type KeyConflict struct {
	FieldID       string
	Run, Override string // "KEY-… (sha256 1a2b3c4d)"
}

func shown(key string) string { return Redact(key) + " (sha256 " + KeyHash(key)[:8] + ")" }

// MergeKeys returns the keys of run (the output folder's, RunKeys) with
// those of csv (a --keys file) added or overriding, and the talhões whose
// two keys differ, in id order.
func MergeKeys(run, csv map[string]string) (map[string]string, []KeyConflict) {
	out := make(map[string]string, len(run)+len(csv))
	for id, k := range run {
		out[id] = k
	}
	var conflicts []KeyConflict
	for _, id := range sortedKeys(csv) {
		if old, ok := run[id]; ok && old != csv[id] {
			conflicts = append(conflicts, KeyConflict{FieldID: id, Run: shown(old), Override: shown(csv[id])})
		}
		out[id] = csv[id]
	}
	return out, conflicts
}
