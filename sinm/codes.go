package sinm

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
)

// SatelliteCodes maps a STAC collection id ("sentinel-2-l2a") or the key
// "dem" (the slope source) to a SINM satellite code, S01…S09. SINM's
// catalogue (GET /api/v1/satelites) is not public, so the mapping is always
// configured, never guessed.
type SatelliteCodes map[string]string

// DEMKey is the SatelliteCodes key of the elevation model the slope comes
// from (codigoSateliteDeclividadeMedia).
const DEMKey = "dem"

var (
	// ErrNoSatelliteCode reports a collection missing from SatelliteCodes.
	ErrNoSatelliteCode = errors.New("sinm: no SINM satellite code configured")
	// ErrBadSatelliteCode reports a malformed mapping or a code outside S01…S09.
	ErrBadSatelliteCode = errors.New("sinm: invalid satellite code mapping")
)

var codePattern = regexp.MustCompile(`^S0[1-9]$`)

// Code returns the SINM code of a collection, or an error wrapping
// ErrNoSatelliteCode that names the collection and the configured keys.
func (c SatelliteCodes) Code(collection string) (string, error) {
	if code, ok := c[collection]; ok {
		return code, nil
	}
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return "", fmt.Errorf("collection %q: %w (configured: %s; add it with --satellite-codes '%s=S0n')",
		collection, ErrNoSatelliteCode, strings.Join(keys, ", "), collection)
}

// String formats the mapping as the --satellite-codes flag value, keys sorted.
func (c SatelliteCodes) String() string {
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + c[k]
	}
	return strings.Join(parts, ",")
}

// set adds one pair, checking the key, the code and duplicates.
func (c SatelliteCodes) set(key, code, where string) error {
	key, code = strings.TrimSpace(key), strings.TrimSpace(code)
	if key == "" {
		return fmt.Errorf("%s: %w: empty collection", where, ErrBadSatelliteCode)
	}
	if !codePattern.MatchString(code) {
		return fmt.Errorf("%s: %w: code %q for %q does not match S01…S09", where, ErrBadSatelliteCode, code, key)
	}
	if old, dup := c[key]; dup {
		return fmt.Errorf("%s: %w: %q given twice (%s, %s)", where, ErrBadSatelliteCode, key, old, code)
	}
	c[key] = code
	return nil
}

// ParseSatelliteCodes parses the --satellite-codes flag value, a
// comma-separated list of collection=code pairs:
// "sentinel-2-l2a=S01,landsat-c2-l2=S02,dem=S09". Spaces around items are
// ignored; an empty string gives an empty mapping.
func ParseSatelliteCodes(s string) (SatelliteCodes, error) {
	c := SatelliteCodes{}
	for i, item := range strings.Split(s, ",") {
		if strings.TrimSpace(item) == "" {
			continue
		}
		k, v, ok := strings.Cut(item, "=")
		if !ok {
			return nil, fmt.Errorf("item %d %q: %w: want collection=code", i+1, item, ErrBadSatelliteCode)
		}
		if err := c.set(k, v, fmt.Sprintf("item %d", i+1)); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// LoadSatelliteCodes reads a satellite-code file. Two formats are accepted:
// a JSON object {"sentinel-2-l2a": "S01", "dem": "S09"}, or lines of
// collection=code with blank lines and #-comments ignored. A file starting
// with "{" is JSON.
func LoadSatelliteCodes(r io.Reader) (SatelliteCodes, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("read satellite codes: %w", err)
	}
	c := SatelliteCodes{}
	if t := bytes.TrimSpace(b); len(t) > 0 && t[0] == '{' {
		var m map[string]string
		dec := json.NewDecoder(bytes.NewReader(t))
		if err := dec.Decode(&m); err != nil {
			return nil, fmt.Errorf("decode satellite codes: %w: %v", ErrBadSatelliteCode, err)
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if err := c.set(k, m[k], "key "+k); err != nil {
				return nil, err
			}
		}
		return c, nil
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = strings.TrimSpace(line[:i])
		}
		if line == "" {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			return nil, fmt.Errorf("line %d %q: %w: want collection=code", n, line, ErrBadSatelliteCode)
		}
		if err := c.set(k, v, fmt.Sprintf("line %d", n)); err != nil {
			return nil, err
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read satellite codes: %w", err)
	}
	return c, nil
}

// Merge returns the union of c and over, over winning on shared keys (the
// command-line flag over the config file).
func (c SatelliteCodes) Merge(over SatelliteCodes) SatelliteCodes {
	out := make(SatelliteCodes, len(c)+len(over))
	for k, v := range c {
		out[k] = v
	}
	for k, v := range over {
		out[k] = v
	}
	return out
}
