package export

import (
	"errors"
	"fmt"
	"io"
	"io/fs"

	"github.com/parquet-go/parquet-go"
)

// Scan reads the rows of one Parquet file of dataset T in file order, at
// most chunk rows at a time, and calls fn with each chunk. Memory stays
// bounded by the chunk, whatever the size of the file: this is how the
// report walks observations.parquet. A chunk is not reused after fn
// returns. chunk ≤ 0 means 8192.
func Scan[T Row](r io.ReaderAt, size int64, chunk int, fn func(rows []T) error) error {
	ds := DatasetOf[T]()
	if chunk <= 0 {
		chunk = 8192
	}
	f, err := parquet.OpenFile(r, size)
	if err != nil {
		return fmt.Errorf("scan %s: %w", ds.Name, err)
	}
	rd := parquet.NewGenericReader[T](f)
	defer rd.Close()
	for {
		buf := make([]T, chunk)
		n, err := rd.Read(buf)
		if n > 0 {
			if ferr := fn(buf[:n]); ferr != nil {
				return ferr
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("scan %s: %w", ds.Name, err)
		}
	}
}

// ScanFS is Scan on the file name of fsys (one part file of a dataset).
func ScanFS[T Row](fsys fs.FS, name string, chunk int, fn func(rows []T) error) error {
	ra, size, closeFn, err := openAt(fsys, name)
	if err != nil {
		return err
	}
	defer closeFn()
	if err := Scan(ra, size, chunk, fn); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}
