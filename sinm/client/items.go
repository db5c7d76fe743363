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
