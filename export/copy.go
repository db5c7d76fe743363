package export

import (
	"errors"
	"fmt"
	"io"

	"github.com/parquet-go/parquet-go"
)

// copyChunkRows is how many rows Copy holds at a time; a multiple of 64.
const copyChunkRows int64 = 4 << 10

// Copy appends the rows of a Parquet file of the dataset of T (r, size
// bytes; written by this package, so already in the dataset order) to w,
// reading them copyChunkRows at a time: memory holds one chunk, not the
// file's rows. The output is byte for byte what one Write of all the
// file's rows gives (TestCopySameBytes): parquet-go takes the rows of a
// Write call 64 at a time from its first row and from each row-group
// start, and decides after each 64 whether to cut a page, so the chunks
// end only where those 64-row steps do.
func (w *Writer[T]) Copy(r io.ReaderAt, size int64) error {
	return w.copyChunks(r, size, copyChunkRows)
}

// copyChunks is Copy holding chunk rows at a time (a multiple of 64).
func (w *Writer[T]) copyChunks(r io.ReaderAt, size, chunk int64) error {
	if w.err != nil {
		return w.err
	}
	f, err := parquet.OpenFile(r, size)
	if err != nil {
		return fmt.Errorf("copy into %s: %w", w.ds.Name, err)
	}
	pr := parquet.NewGenericReader[T](f)
	defer pr.Close()
	start, end := w.n, w.n+f.NumRows()
	buf := make([]T, min(chunk, f.NumRows()))
	for p := start; p < end; {
		next := w.chunkEnd(p, end, chunk)
		n, err := readRows(pr, buf[:next-p])
		if err != nil {
			return fmt.Errorf("copy into %s: row %d of %d: %w", w.ds.Name, p-start+int64(n), end-start, err)
		}
		if err := w.Write(buf[:n]); err != nil {
			return err
		}
		clear(buf)
		p = next
	}
	return nil
}

// chunkEnd is where a Copy's chunk starting at row p ends: p plus
// chunk, but not past the next row-group boundary nor end. From the
// Copy's first row up to the first boundary the chunks are chunk rows
// long, after it they start at a boundary: either way they end on a
// multiple of 64 rows from where parquet-go's steps start.
func (w *Writer[T]) chunkEnd(p, end, chunk int64) int64 {
	next := p + chunk
	if b := (p/w.rg + 1) * w.rg; next > b {
		next = b
	}
	return min(next, end)
}

// readRows fills rows from r; fewer rows than asked is an error.
func readRows[T any](r *parquet.GenericReader[T], rows []T) (int, error) {
	got := 0
	for got < len(rows) {
		n, err := r.Read(rows[got:])
		got += n
		if err == io.EOF && got < len(rows) {
			return got, io.ErrUnexpectedEOF
		}
		if err != nil && err != io.EOF {
			return got, err
		}
		if n == 0 && err == nil {
			return got, errors.New("reader returned no rows")
		}
	}
	return got, nil
}
