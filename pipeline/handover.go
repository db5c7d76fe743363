package pipeline

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"

	"github.com/manejo/manejo/series"
	"github.com/manejo/manejo/storage"
)

// handover collects, in the read phase, the scenes read for every
// receiving shard: one local temporary file per shard (storage.CreateTemp
// of its object under dir), a frame per talhão and scene (the talhão id,
// then the spill's record), published at the end (upload). It counts in
// sp (progress). Its writes are sequential (OnScene).
type handover struct {
	sp      *spill
	shardOf func(string) int
	n       int
	dir     string
	files   []*os.File
	bufs    []*bufio.Writer
	sums    []hash.Hash
	sizes   []int64
	records []int64
	err     error
}

func newHandover(sp *spill, n int, shardOf func(string) int, dir string) *handover {
	return &handover{sp: sp, shardOf: shardOf, n: n, dir: dir, files: make([]*os.File, n), bufs: make([]*bufio.Writer, n),
		sums: make([]hash.Hash, n), sizes: make([]int64, n), records: make([]int64, n)}
}

// write appends one scene of one talhão to the file of the talhão's
// shard. A scene the spill cannot encode is left out: the receiving
// shard's batch reads it itself.
func (h *handover) write(sr series.SceneRead) {
	rec, ok := encodeScene(sr)
	if !ok || h.err != nil {
		return
	}
	k := h.shardOf(sr.FieldID)
	if h.files[k] == nil {
		if h.err = h.open(k); h.err != nil {
			return
		}
	}
	frame := binary.AppendUvarint(nil, uint64(len(sr.FieldID)))
	frame = append(frame, sr.FieldID...)
	frame = binary.AppendUvarint(frame, uint64(len(rec)))
	frame = append(frame, rec...)
	if _, err := h.bufs[k].Write(frame); err != nil {
		h.err = fmt.Errorf("hand-over: %w", err)
		return
	}
	h.sizes[k] += int64(len(frame))
	h.records[k]++
	h.sp.count(sr)
}

// open starts the file of receiving shard k.
func (h *handover) open(k int) error {
	f, err := storage.CreateTemp(storage.Join(h.dir, handoverName(Shard{k, h.n})))
	if err != nil {
		return fmt.Errorf("hand-over: %w", err)
	}
	h.files[k], h.sums[k] = f, sha256.New()
	h.bufs[k] = bufio.NewWriterSize(io.MultiWriter(f, h.sums[k]), 64<<10) // one per receiving shard
	return nil
}

// upload flushes every file and publishes one object per receiving
// shard (empty ones too: a missing object is a broken hand-over),
// returning them by the receiving shard's part name.
func (h *handover) upload(ctx context.Context) (map[string]handoverObject, error) {
	if h.err != nil {
		return nil, h.err
	}
	out := map[string]handoverObject{}
	for k := range h.n {
		to := Shard{k, h.n}
		if h.files[k] == nil {
			if err := h.open(k); err != nil {
				return nil, err
			}
		}
		f := h.files[k]
		err := h.bufs[k].Flush()
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		h.files[k] = nil
		if err != nil {
			os.Remove(f.Name())
			return nil, fmt.Errorf("hand-over: %w", err)
		}
		if err := storage.PutFile(ctx, storage.Join(h.dir, handoverName(to)), f.Name()); err != nil {
			return nil, err
		}
		out[to.Part()] = handoverObject{Path: handoverName(to), Bytes: h.sizes[k], SHA256: hex.EncodeToString(h.sums[k].Sum(nil)), Records: h.records[k]}
	}
	return out, nil
}

// close closes and removes the files not published.
func (h *handover) close() {
	for _, f := range h.files {
		if f != nil {
			_ = f.Close()
			_ = os.Remove(f.Name())
		}
	}
}

// fetchHandover downloads the object o of the hand-over under dir into a
// local temporary file of sp's folder and checks its size and hash
// against the marker's record: a partial or altered object is refused.
// It returns the local file's path.
func fetchHandover(ctx context.Context, sp *spill, dir string, o handoverObject) (string, error) {
	rc, err := storage.Open(ctx, storage.Join(dir, o.Path))
	if err != nil {
		return "", err
	}
	defer rc.Close()
	f, err := os.CreateTemp(sp.tmp.Dir, "in-*")
	if err != nil {
		return "", err
	}
	sum := sha256.New()
	n, err := io.Copy(io.MultiWriter(f, sum), rc)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && (n != o.Bytes || hex.EncodeToString(sum.Sum(nil)) != o.SHA256) {
		err = fmt.Errorf("%s: %d bytes with sha256 %.12s…, the marker says %d bytes with %.12s…", o.Path, n, hex.EncodeToString(sum.Sum(nil)), o.Bytes, o.SHA256)
	}
	if err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}

// readHandover hands every frame of a fetched hand-over file to add, as
// the talhão id and the spill's record.
func readHandover(path string, add func(id string, rec spilled) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	for {
		id, rec, err := readFrame(r)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("hand-over %s: %w", filepath.Base(path), err)
		}
		if err := add(id, rec); err != nil {
			return err
		}
	}
}

// readFrame reads one frame; io.EOF only before one.
func readFrame(r *bufio.Reader) (string, spilled, error) {
	n, err := binary.ReadUvarint(r)
	if err != nil {
		return "", spilled{}, err
	}
	if n > 1<<20 {
		return "", spilled{}, errors.New("corrupt frame")
	}
	id := make([]byte, n)
	if _, err := io.ReadFull(r, id); err != nil {
		return "", spilled{}, io.ErrUnexpectedEOF
	}
	size, err := binary.ReadUvarint(r)
	if err != nil || size > 1<<32 {
		return "", spilled{}, io.ErrUnexpectedEOF
	}
	body := make([]byte, size)
	if _, err := io.ReadFull(r, body); err != nil {
		return "", spilled{}, io.ErrUnexpectedEOF
	}
	rec, err := decodeScene(bufio.NewReader(bytes.NewReader(body)), string(id))
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return string(id), rec, err
}
