package pipeline

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/manejo/manejo/grid"
	"github.com/manejo/manejo/series"
	"github.com/manejo/manejo/storage"
)

// spill holds what the read pass read: one file per talhão in a local
// temporary folder (storage.Scratch "manejo-read-pass-*" under $TMPDIR:
// the folder of a killed worker is removed by the next one), to which each scene read in full appends one record
// (the item, what reading it cost and the talhão's raw observations). The
// batches take their talhões' records instead of reading those scenes
// again. A talhão whose file cannot be written or read back whole is
// simply read by its batch.
type spill struct {
	tmp    *storage.Scratch // its folder: tmp.Dir
	broken map[string]bool  // talhões whose file failed to write
	// pairs and obs count the records and observations written, scenes
	// the scenes of the current read (progress; chunkItems holds them).
	pairs, obs, scenes atomic.Int64
	chunkItems         map[string]bool
}

// newSpill makes the spill folder; logf gets the dead workers' folders
// reclaimed on the way and a warning if the disk takes no flock.
func newSpill(logf func(string, ...any)) (*spill, error) {
	tmp, err := storage.NewScratch("manejo-read-pass-")
	if err != nil {
		return nil, fmt.Errorf("read pass: %w", err)
	}
	for _, line := range tmp.Report() {
		logf("%s", line)
	}
	return &spill{tmp: tmp, broken: map[string]bool{}, chunkItems: map[string]bool{}}, nil
}

// close removes the spill folder.
func (s *spill) close() {
	if s != nil {
		_ = s.tmp.Close()
	}
}

func (s *spill) path(id string) string {
	h := sha256.Sum256([]byte(id))
	return filepath.Join(s.tmp.Dir, hex.EncodeToString(h[:16]))
}

// write appends one scene's record to its talhão's file (series.Options
// OnScene: calls are sequential).
func (s *spill) write(sr series.SceneRead) {
	if s.broken[sr.FieldID] {
		return
	}
	b, ok := encodeScene(sr)
	if !ok {
		s.broken[sr.FieldID] = true
		_ = os.Remove(s.path(sr.FieldID))
		return
	}
	f, err := os.OpenFile(s.path(sr.FieldID), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err == nil {
		_, err = f.Write(b)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		// A partial record would make the file unreadable: the talhão's
		// batch reads everything instead.
		s.broken[sr.FieldID] = true
		_ = os.Remove(s.path(sr.FieldID))
		return
	}
	s.count(sr)
}

// count counts one record written (progress).
func (s *spill) count(sr series.SceneRead) {
	s.pairs.Add(1)
	s.obs.Add(int64(len(sr.Obs)))
	if !s.chunkItems[sr.Item.ID] {
		s.chunkItems[sr.Item.ID] = true
		s.scenes.Add(1)
	}
}

// newChunk starts counting the scenes of a new read.
func (s *spill) newChunk() {
	s.chunkItems = map[string]bool{}
	s.scenes.Store(0)
}

// options sets o to serve the grids' spilled scenes: Known accepts them
// (after what o already knew), Cached holds their observations. The
// returned feed hands them to o.OnScene (the observation cache's, when
// the run has one) as if they had been read now: call it after sampling,
// so the cache counts them as read, not served. items finds a catalog
// item by id.
func (s *spill) options(o series.Options, grids []grid.Grid, items map[string]*series.Item) (series.Options, func()) {
	known := map[[2]string]bool{}
	var reads []series.SceneRead
	for _, g := range grids {
		id := g.Field.ID
		if s.broken[id] {
			continue
		}
		recs, err := s.load(id)
		if err != nil {
			continue // read by the batch
		}
		for _, sr := range recs {
			it := items[sr.itemID]
			if it == nil {
				continue
			}
			known[[2]string{id, it.ID}] = true
			o.Cached = append(o.Cached, sr.obs...)
			reads = append(reads, series.SceneRead{FieldID: id, Item: it, Obs: sr.obs, Reads: sr.reads, ReadBytes: sr.bytes})
		}
	}
	// What o already knew (the cache) answers first, so its accounting
	// (pairs served and read) is that of a run without the pass.
	prev := o.Known
	o.Known = func(id string, it *series.Item) bool {
		return (prev != nil && prev(id, it)) || known[[2]string{id, it.ID}]
	}
	on := o.OnScene
	return o, func() {
		if on != nil {
			for _, sr := range reads {
				on(sr)
			}
		}
	}
}

// spilled is one record read back.
type spilled struct {
	itemID       string
	reads, bytes int64
	obs          []series.Obs
}

// load reads back the records of a talhão (none when it has no file).
func (s *spill) load(id string) ([]spilled, error) {
	f, err := os.Open(s.path(id))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := bufio.NewReader(f)
	var out []spilled
	for {
		sr, err := decodeScene(r, id)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("spill of talhão %s: %w", id, err)
		}
		out = append(out, sr)
	}
}

// encodeScene is one record: item id, reads, bytes, the observations'
// date (Unix seconds), collection and item id (one scene gives them all
// the same), then per observation its cell id, six float32 (bits, so NaN
// stays NaN) and mask; strings length-prefixed, integers varint. It
// returns false for observations that do not share their scene's date,
// collection and item (not spilled: the batch reads them).
func encodeScene(sr series.SceneRead) ([]byte, bool) {
	var b []byte
	str := func(v string) { b = binary.AppendUvarint(b, uint64(len(v))); b = append(b, v...) }
	var first series.Obs
	if len(sr.Obs) > 0 {
		first = sr.Obs[0]
	}
	str(sr.Item.ID)
	b = binary.AppendVarint(b, sr.Reads)
	b = binary.AppendVarint(b, sr.ReadBytes)
	b = binary.AppendVarint(b, first.Date.Unix())
	str(first.Collection)
	str(first.ItemID)
	b = binary.AppendUvarint(b, uint64(len(sr.Obs)))
	for _, o := range sr.Obs {
		if !o.Date.Equal(first.Date) || o.Collection != first.Collection || o.ItemID != first.ItemID || o.FieldID != sr.FieldID {
			return nil, false
		}
		str(o.CellID)
		for _, v := range []float32{o.NDVI, o.NDTI, o.Red, o.NIR, o.SWIR1, o.SWIR2} {
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
		}
		str(string(o.Mask))
	}
	return b, true
}

// decodeScene reads one record of talhão id; io.EOF only before one.
func decodeScene(r *bufio.Reader, id string) (spilled, error) {
	var sr spilled
	var err error
	str := func() string {
		if err != nil {
			return ""
		}
		var n uint64
		if n, err = binary.ReadUvarint(r); err != nil {
			return ""
		}
		if n > 1<<20 {
			err = errors.New("corrupt record")
			return ""
		}
		p := make([]byte, n)
		_, err = io.ReadFull(r, p)
		return string(p)
	}
	varint := func() int64 {
		if err != nil {
			return 0
		}
		var v int64
		v, err = binary.ReadVarint(r)
		return v
	}
	if _, err = r.Peek(1); err != nil {
		return sr, err // io.EOF: no further record
	}
	sr.itemID = str()
	sr.reads, sr.bytes = varint(), varint()
	date := time.Unix(varint(), 0).UTC()
	collection, itemID := str(), str()
	var n uint64
	if err == nil {
		n, err = binary.ReadUvarint(r)
	}
	for i := uint64(0); i < n && err == nil; i++ {
		o := series.Obs{FieldID: id, CellID: str(), Date: date, Collection: collection, ItemID: itemID}
		var fs [6]float32
		var raw [4]byte
		for k := range fs {
			if err == nil {
				_, err = io.ReadFull(r, raw[:])
				fs[k] = math.Float32frombits(binary.LittleEndian.Uint32(raw[:]))
			}
		}
		o.NDVI, o.NDTI, o.Red, o.NIR, o.SWIR1, o.SWIR2 = fs[0], fs[1], fs[2], fs[3], fs[4], fs[5]
		o.Mask = series.MaskReason(str())
		sr.obs = append(sr.obs, o)
	}
	if err == io.EOF {
		err = io.ErrUnexpectedEOF // a record cut short
	}
	return sr, err
}
