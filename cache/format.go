package cache

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"math"
	"time"

	"github.com/manejo/manejo/series"
	"github.com/manejo/manejo/storage"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/zstd"
)

// Format names the files of an observation cache (Meta.Format); Schema is
// the version of their layout. A file with another format or schema is
// foreign: it is never read, and a run replaces it.
const (
	Format = "manejo-observation-cache"
	Schema = 1
)

// metaKey is the Parquet key-value metadata entry holding Meta as JSON.
const metaKey = "manejo:cache"

// dir is the folder of the partitions under a cache location.
const dir = "observations-v1"

// Meta describes one partition: the talhão, how its observations were
// sampled, the scenes they came from and a checksum of its rows.
type Meta struct {
	Format string `json:"format"`
	Schema int    `json:"schema"`
	// Version is the manejo version that sampled the observations: another
	// version may sample differently, so its entries are rebuilt.
	Version string `json:"version"`
	FieldID string `json:"field_id"`
	// Grid is GridKey of the talhão: its geometry, grid options and cells.
	Grid      string    `json:"grid"`
	WrittenAt time.Time `json:"written_at"`
	// Items are the scenes read in full for the talhão.
	Items []Item `json:"items"`
	Rows  int    `json:"rows"`
	// RowsSHA256 hashes the rows in a canonical encoding (rowsHash).
	RowsSHA256 string `json:"rows_sha256"`
}

// Item is one scene read in full for a talhão: which item, as what
// (ItemFingerprint) and under which profile rules (ProfileKey), how many
// observations it gave and what reading it cost (series.SceneRead: GDAL
// calls and pixel bytes of the whole scene).
type Item struct {
	ID          string `json:"id"`
	Collection  string `json:"collection"`
	Date        string `json:"date"`
	Fingerprint string `json:"fingerprint"`
	Profile     string `json:"profile"`
	Obs         int    `json:"obs"`
	Reads       int64  `json:"reads"`
	ReadBytes   int64  `json:"read_bytes"`
}

// row is one observation of a partition (series.Obs without the talhão,
// which Meta names).
type row struct {
	CellID     string  `parquet:"cell_id,dict"`
	Day        int32   `parquet:"day"` // days since 1970-01-01
	Collection string  `parquet:"collection,dict"`
	ItemID     string  `parquet:"item_id,dict"`
	NDVI       float32 `parquet:"ndvi"`
	NDTI       float32 `parquet:"ndti"`
	Red        float32 `parquet:"red"`
	NIR        float32 `parquet:"nir"`
	SWIR1      float32 `parquet:"swir1"`
	SWIR2      float32 `parquet:"swir2"`
	Mask       string  `parquet:"mask,dict"`
}

// Entry is one talhão's partition: its metadata and raw observations (as
// series.SceneRead gave them, before same-date observations collapse).
type Entry struct {
	Meta Meta
	Obs  []series.Obs
}

// ErrCorrupt is returned (wrapped) by Load for a partition that is not a
// readable, consistent cache file of this format: truncated, altered,
// foreign, of another schema, or of another talhão.
var ErrCorrupt = errors.New("cache: corrupt or foreign partition")

var codec = &zstd.Codec{Level: zstd.SpeedFastest, Concurrency: 1}

// encode writes e as one Parquet file, filling Rows and RowsSHA256.
func encode(e *Entry) ([]byte, error) {
	rows := make([]row, len(e.Obs))
	for i, o := range e.Obs {
		rows[i] = row{CellID: o.CellID, Day: int32(o.Date.Unix() / 86400), Collection: o.Collection, ItemID: o.ItemID,
			NDVI: o.NDVI, NDTI: o.NDTI, Red: o.Red, NIR: o.NIR, SWIR1: o.SWIR1, SWIR2: o.SWIR2, Mask: string(o.Mask)}
	}
	m := e.Meta
	m.Format, m.Schema, m.Rows, m.RowsSHA256 = Format, Schema, len(rows), rowsHash(rows)
	mj, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[row](&buf, parquet.Compression(codec), parquet.KeyValueMetadata(metaKey, string(mj)))
	if _, err := w.Write(rows); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	e.Meta = m
	return buf.Bytes(), nil
}

// decode reads a partition and checks it: format, schema, talhão, row
// count and checksum. Any failure wraps ErrCorrupt.
func decode(b []byte, fieldID string) (*Entry, error) {
	f, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	raw, ok := f.Lookup(metaKey)
	if !ok {
		return nil, fmt.Errorf("%w: no %s metadata", ErrCorrupt, metaKey)
	}
	var m Meta
	if err := json.Unmarshal([]byte(raw), &m); err != nil {
		return nil, fmt.Errorf("%w: metadata: %v", ErrCorrupt, err)
	}
	if m.Format != Format || m.Schema != Schema {
		return nil, fmt.Errorf("%w: format %q schema %d, want %q schema %d", ErrCorrupt, m.Format, m.Schema, Format, Schema)
	}
	if fieldID != "" && m.FieldID != fieldID {
		return nil, fmt.Errorf("%w: it holds talhão %q", ErrCorrupt, m.FieldID)
	}
	rows, err := parquet.Read[row](bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return nil, fmt.Errorf("%w: rows: %v", ErrCorrupt, err)
	}
	if len(rows) != m.Rows || rowsHash(rows) != m.RowsSHA256 {
		return nil, fmt.Errorf("%w: %d rows with checksum %s, metadata says %d rows with %s", ErrCorrupt, len(rows), rowsHash(rows), m.Rows, m.RowsSHA256)
	}
	e := &Entry{Meta: m, Obs: make([]series.Obs, len(rows))}
	for i, r := range rows {
		e.Obs[i] = series.Obs{FieldID: m.FieldID, CellID: r.CellID, Date: time.Unix(int64(r.Day)*86400, 0).UTC(), Collection: r.Collection, ItemID: r.ItemID,
			NDVI: r.NDVI, NDTI: r.NDTI, Red: r.Red, NIR: r.NIR, SWIR1: r.SWIR1, SWIR2: r.SWIR2, Mask: series.MaskReason(r.Mask)}
	}
	return e, nil
}

// rowsHash hashes rows in a canonical encoding: strings length-prefixed,
// numbers as their bits, so any change of a value changes the hash.
func rowsHash(rows []row) string {
	h := sha256.New()
	for _, r := range rows {
		for _, s := range []string{r.CellID, r.Collection, r.ItemID, r.Mask} {
			writeString(h, s)
		}
		var b [4]byte
		binary.LittleEndian.PutUint32(b[:], uint32(r.Day))
		h.Write(b[:])
		for _, v := range []float32{r.NDVI, r.NDTI, r.Red, r.NIR, r.SWIR1, r.SWIR2} {
			binary.LittleEndian.PutUint32(b[:], math.Float32bits(v))
			h.Write(b[:])
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

func writeString(h hash.Hash, s string) {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(len(s)))
	h.Write(b[:])
	h.Write([]byte(s))
}

// Cache is an observation cache at a location (a local folder or an
// s3:// prefix): one Parquet partition per talhão.
type Cache struct{ root string }

// Open returns the cache at loc; nothing is read or created until used.
func Open(loc string) *Cache { return &Cache{root: loc} }

// Location is where the cache lives.
func (c *Cache) Location() string { return c.root }

// partition is the location of a talhão's partition: named by a hash of
// its id, so any id gives a safe object name and case-insensitive disks
// cannot merge two talhões.
func (c *Cache) partition(fieldID string) string {
	h := sha256.Sum256([]byte(fieldID))
	return storage.Join(c.root, dir, "talhao="+hex.EncodeToString(h[:16])+".parquet")
}

// Load reads and checks the partition of a talhão. It returns (nil, nil)
// when there is none, and an error wrapping ErrCorrupt when the partition
// cannot be trusted; other errors are the store's.
func (c *Cache) Load(ctx context.Context, fieldID string) (*Entry, error) {
	loc := c.partition(fieldID)
	b, err := storage.ReadFile(ctx, loc)
	if errors.Is(err, storage.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	e, err := decode(b, fieldID)
	if err != nil {
		return nil, fmt.Errorf("cache partition %s of talhão %s: %w", loc, fieldID, err)
	}
	return e, nil
}

// Store writes the partition of e.Meta.FieldID atomically (storage.WriteFile:
// temporary file and rename on disk, one PutObject on S3): a reader sees
// the old partition or the new one, never a part. It returns the bytes
// written.
func (c *Cache) Store(ctx context.Context, e *Entry) (int, error) {
	b, err := encode(e)
	if err != nil {
		return 0, fmt.Errorf("cache: encode talhão %s: %w", e.Meta.FieldID, err)
	}
	if err := storage.WriteFile(ctx, c.partition(e.Meta.FieldID), b); err != nil {
		return 0, fmt.Errorf("cache: %w", err)
	}
	return len(b), nil
}
