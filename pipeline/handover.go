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
// receiving shard: one local file per shard (in the spill's folder), a
// frame per talhão and scene (the talhão id, then the spill's record),
// uploaded at the end (upload). Its writes are sequential (OnScene).
type handover struct {
	sp      *spill
	shardOf func(string) int
	n       int
	files   []*os.File
	bufs    []*bufio.Writer
	sums    []hash.Hash
	sizes   []int64
	records []int64
	err     error
}

func newHandover(sp *spill, n int, shardOf func(string) int) *handover {
	return &handover{sp: sp, shardOf: shardOf, n: n, files: make([]*os.File, n), bufs: make([]*bufio.Writer, n),
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
		f, err := os.Create(filepath.Join(h.sp.dir, fmt.Sprintf("to-%05d", k)))
		if err != nil {
			h.err = fmt.Errorf("hand-over: %w", err)
			return
		}
		h.files[k], h.sums[k] = f, sha256.New()
		h.bufs[k] = bufio.NewWriterSize(io.MultiWriter(f, h.sums[k]), 1<<20)
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

// upload flushes every file and puts one object per receiving shard
// (empty ones too: a missing object is a broken hand-over) under dir,
// returning them by the receiving shard's part name.
func (h *handover) upload(ctx context.Context, dir string, count int) (map[string]handoverObject, error) {
	if h.err != nil {
		return nil, h.err
	}
	out := map[string]handoverObject{}
	for k := range h.n {
		to := Shard{k, count}
		if h.files[k] == nil {
			if err := h.emptyFile(k); err != nil {
				return nil, err
			}
		}
		if err := h.bufs[k].Flush(); err != nil {
			return nil, fmt.Errorf("hand-over: %w", err)
		}
		name := handoverName(to)
		if err := storage.PutFile(ctx, storage.Join(dir, name), h.files[k].Name()); err != nil {
			return nil, err
		}
		out[to.Part()] = handoverObject{Path: name, Bytes: h.sizes[k], SHA256: hex.EncodeToString(h.sums[k].Sum(nil)), Records: h.records[k]}
	}
	return out, nil
}

func (h *handover) emptyFile(k int) error {
	f, err := os.Create(filepath.Join(h.sp.dir, fmt.Sprintf("to-%05d", k)))
	if err != nil {
		return fmt.Errorf("hand-over: %w", err)
	}
	h.files[k], h.sums[k] = f, sha256.New()
	h.bufs[k] = bufio.NewWriter(io.MultiWriter(f, h.sums[k]))
	return nil
}

// close closes the local files (the spill's folder removes them).
func (h *handover) close() {
	for _, f := range h.files {
		if f != nil {
			_ = f.Close()
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
	f, err := os.CreateTemp(sp.dir, "in-*")
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
