package export

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
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
	// RunID names the run that wrote this manifest (and holds the lock of
	// its output folder while it runs); every payload's record carries it.
	RunID string `json:"run_id"`
	// ParamsHash identifies the inputs and parameters; a rerun with the same
	// hash skips a complete shard and resumes from committed batches.
	ParamsHash string `json:"params_hash"`
	// Complete is true once every output of the shard is published and
	// outputs[] lists exactly the files of this run. A run rewrites the
	// previous manifest with complete false before it publishes anything.
	Complete bool     `json:"complete"`
	Warnings []string `json:"warnings"`
	Status   Status   `json:"status"`
	// CatalogSearch records the STAC API search that made the catalog, when
	// --catalog named an API (nil for a static catalog).
	CatalogSearch *CatalogSearch `json:"catalog_search,omitempty"`
	// DEMSearch records the search of a --dem stac:<collection> and the
	// tiles mosaicked (nil for a DEM file).
	DEMSearch *CatalogSearch `json:"dem_search,omitempty"`
	// IO accounts for the scene reads by collection (docs/performance.md);
	// in the finish phase of a run with the block exchange, this shard's
	// read phase included.
	IO map[string]IO `json:"io,omitempty"`
	// Exchange records the block exchange of a two-phase sharded run (the
	// finish phase's manifest; nil otherwise).
	Exchange *Exchange `json:"exchange,omitempty"`
}

// Exchange is what the block exchange between the shards of a run read
// and handed over (docs/performance.md, "The block exchange").
type Exchange struct {
	Shards int `json:"shards"`
	// ReadRunID is the run of this shard's read phase.
	ReadRunID string `json:"read_run_id"`
	// HandedOutBytes is what this shard's read phase wrote for the other
	// shards; HandedInBytes and HandedInRecords (talhão × scene) what this
	// shard took from the read phases of all shards, its own included.
	HandedOutBytes  int64 `json:"handed_out_bytes"`
	HandedInBytes   int64 `json:"handed_in_bytes"`
	HandedInRecords int64 `json:"handed_in_records"`
	// GivenUp counts the scenes the read phases could not hand over
	// (their owner could not read them, or its hand-over to this shard
	// could not be read whole): this shard's batches read those
	// themselves, within its retry budget. Unreadable names the shards
	// whose hand-over to this one could not be read whole.
	GivenUp    int      `json:"given_up,omitempty"`
	Unreadable []string `json:"unreadable,omitempty"`
	// Total is what the read phases of all the shards read, by
	// collection, with their minimum: bytes_over_min here is the whole
	// run's bytes against what it needed.
	Total map[string]IO `json:"total"`
}

// CatalogSearch is a STAC API search of a run (stacapi.Result): where it
// asked, what, and what came back. Frozen is the output file holding the
// items kept, which --catalog reads back to reproduce the run.
type CatalogSearch struct {
	API         string   `json:"api"`
	SearchURL   string   `json:"search_url"`
	Method      string   `json:"method"`
	Collections []string `json:"collections"`
	Queries     []string `json:"queries"`
	// Matched is the APIs' numberMatched summed over the queries (-1 when
	// one did not say); Returned the features received over all pages.
	Matched         int64 `json:"matched"`
	Returned        int   `json:"returned"`
	Pages           int   `json:"pages"`
	Retries         int   `json:"retries"`
	Duplicates      int   `json:"duplicates"`
	SameAcquisition int   `json:"same_acquisition"`
	Malformed       int   `json:"malformed"`
	// Unrequested are items of collections the search did not ask for,
	// dropped (each also a "catalog" skip with its id).
	Unrequested int    `json:"unrequested"`
	Kept        int    `json:"kept"`
	Frozen      string `json:"frozen,omitempty"`
	// Error is why the search failed after its retries (its talhões are
	// then incomplete); empty when it succeeded.
	Error string `json:"error,omitempty"`
	// Tiles are the DEM tiles mosaicked, collection/id (DEMSearch only).
	Tiles []string `json:"tiles,omitempty"`
}

// Status counts the talhões of a run (or shard) by status. Incomplete
// talhões (StatusIncomplete) are not in Failed; Total counts them.
type Status struct{ Total, OK, Partial, Failed, Incomplete int }

// IO is what the scene reads of one collection cost: HTTP requests GDAL
// sent and bytes it received (remote assets only), retries by cause
// ("gdal:http-503": a request GDAL retried itself; "scene:timeout": a
// scene read again), and seconds inside GDAL opens and reads (network or
// disk wait plus block decoding) against seconds computing indices, summed
// over scenes read concurrently.
type IO struct {
	Scenes         int              `json:"scenes"`
	Requests       int64            `json:"requests"`
	Bytes          int64            `json:"bytes"`
	Retries        map[string]int64 `json:"retries"`
	ReadSeconds    float64          `json:"read_seconds"`
	ComputeSeconds float64          `json:"compute_seconds"`
	// MinBytes, MinRequests and MinTiles are the least the run's remote
	// reads could have fetched (series.Minimum): each remote file's header
	// and the compressed tiles holding a cell centre read, each counted
	// once; requests one per header and per run of consecutive tiles.
	// BytesOverMin is Bytes / MinBytes: how many times over the run read
	// what it needed (0 when nothing remote was read).
	MinBytes     int64   `json:"min_bytes,omitempty"`
	MinRequests  int64   `json:"min_requests,omitempty"`
	MinTiles     int64   `json:"min_tiles,omitempty"`
	BytesOverMin float64 `json:"bytes_over_min,omitempty"`
}

// Add adds o to x.
func (x *IO) Add(o IO) {
	x.Scenes += o.Scenes
	x.Requests += o.Requests
	x.Bytes += o.Bytes
	x.ReadSeconds += o.ReadSeconds
	x.ComputeSeconds += o.ComputeSeconds
	x.MinBytes += o.MinBytes
	x.MinRequests += o.MinRequests
	x.MinTiles += o.MinTiles
	x.BytesOverMin = 0
	if x.MinBytes > 0 {
		x.BytesOverMin = math.Round(float64(x.Bytes)/float64(x.MinBytes)*1000) / 1000
	}
	for k, v := range o.Retries {
		if x.Retries == nil {
			x.Retries = map[string]int64{}
		}
		x.Retries[k] += v
	}
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

// Output is one file written, with its rows (Parquet) and fingerprint. A
// SINM payload's record names its talhão and the run that wrote it.
type Output struct {
	Path    string `json:"path"` // relative to the output directory, "/"-separated
	Rows    int64  `json:"rows,omitempty"`
	Bytes   int64  `json:"bytes"`
	SHA256  string `json:"sha256"` // hex
	FieldID string `json:"field_id,omitempty"`
	RunID   string `json:"run_id,omitempty"`
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
	if m.Warnings == nil {
		m.Warnings = []string{}
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

// MarshalManifest is WriteManifest into a byte slice.
func MarshalManifest(m Manifest) ([]byte, error) {
	var b bytes.Buffer
	err := WriteManifest(&b, m)
	return b.Bytes(), err
}

// ReadManifest decodes a run.json.
func ReadManifest(r io.Reader) (Manifest, error) {
	var m Manifest
	if err := json.NewDecoder(r).Decode(&m); err != nil {
		return Manifest{}, fmt.Errorf("read run.json: %w", err)
	}
	return m, nil
}
