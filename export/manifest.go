package export

import (
	"encoding/json"
	"fmt"
	"io"
	"time"
)

// Manifest is run.json: what a run did, with what, and how long it took.
// It is the only output that holds timestamps and timings; the Parquet files
// and payloads stay byte-identical between runs of the same inputs.
type Manifest struct {
	Tool       string            `json:"tool"`    // "manejo"
	Version    string            `json:"version"` // manejo version
	StartedAt  time.Time         `json:"started_at"`
	FinishedAt time.Time         `json:"finished_at"`
	Shard      *Shard            `json:"shard,omitempty"` // nil when unsharded
	Parameters map[string]string `json:"parameters"`      // flag name → value as given (no secrets)
	Inputs     []Input           `json:"inputs"`
	Counts     map[string]int64  `json:"counts"`         // talhoes, cells, observations, events, ...
	Timings    map[string]Timing `json:"timings"`        // stage → wall time
	Failures   []Failure         `json:"failures"`       // talhões that failed or are partial
	Skipped    map[string]int64  `json:"skipped_scenes"` // reason → scenes skipped
	Outputs    []Output          `json:"outputs"`
}

// Shard identifies one part of a sharded run (AWS Batch array index,
// Kubernetes completion index), 0-based.
type Shard struct {
	Index int `json:"index"`
	Count int `json:"count"`
}

// Input fingerprints one input (talhões, sowing CSV, catalog, DEM, codes).
type Input struct {
	Role   string `json:"role"` // fields, sowing, catalog, dem, satellite_codes, ...
	Path   string `json:"path"`
	Bytes  int64  `json:"bytes"`
	SHA256 string `json:"sha256"` // hex
}

// Timing is the wall time of one stage, in seconds.
type Timing struct {
	Seconds float64 `json:"seconds"`
}

// Failure is one talhão that failed, wholly or in part, and why.
type Failure struct {
	FieldID string `json:"field_id"`
	Stage   string `json:"stage,omitempty"` // grid, series, tillage, coverage, slope, export
	Status  string `json:"status"`          // failed or partial
	Reason  string `json:"reason"`
}

// Output is one file written, with its rows (Parquet) and fingerprint.
type Output struct {
	Path   string `json:"path"` // relative to the output directory
	Rows   int64  `json:"rows,omitempty"`
	Bytes  int64  `json:"bytes"`
	SHA256 string `json:"sha256"`
}

// Record adds d to the timing of stage.
func (m *Manifest) Record(stage string, d time.Duration) {
	if m.Timings == nil {
		m.Timings = map[string]Timing{}
	}
	t := m.Timings[stage]
	t.Seconds += d.Seconds()
	m.Timings[stage] = t
}

// WriteManifest writes m as indented JSON (map keys sorted, times RFC 3339
// in UTC). Nil maps and slices are written as {} and [].
func WriteManifest(w io.Writer, m Manifest) error {
	if m.Tool == "" {
		m.Tool = "manejo"
	}
	if m.Parameters == nil {
		m.Parameters = map[string]string{}
	}
	if m.Counts == nil {
		m.Counts = map[string]int64{}
	}
	if m.Timings == nil {
		m.Timings = map[string]Timing{}
	}
	if m.Skipped == nil {
		m.Skipped = map[string]int64{}
	}
	if m.Inputs == nil {
		m.Inputs = []Input{}
	}
	if m.Failures == nil {
		m.Failures = []Failure{}
	}
	if m.Outputs == nil {
		m.Outputs = []Output{}
	}
	m.StartedAt, m.FinishedAt = m.StartedAt.UTC(), m.FinishedAt.UTC()
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		return fmt.Errorf("write run.json: %w", err)
	}
	return nil
}

// ReadManifest decodes a run.json.
func ReadManifest(r io.Reader) (Manifest, error) {
	var m Manifest
	if err := json.NewDecoder(r).Decode(&m); err != nil {
		return Manifest{}, fmt.Errorf("read run.json: %w", err)
	}
	return m, nil
}
