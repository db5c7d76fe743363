package export

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/parquet-go/parquet-go"
)

// Row is the set of row types export writes, one per dataset.
type Row interface {
	CellRow | ObsRow | EventRow | SeasonRow | CellCoverRow | CycleRow | IndicatorRow | ClassificationRow | SINMResultRow | SINMSubmissionRow
}

// Dataset describes one Parquet dataset of the output directory.
type Dataset struct {
	Name         string       // base name: "cells" is written as cells.parquet
	Title        string       // one line for the docs
	SortedBy     []string     // columns the rows are sorted by
	RowGroupRows int64        // default maximum rows per row group
	rowType      reflect.Type // the Go row type
}

// File returns the file name of an unsharded dataset, e.g. "cells.parquet".
func (d Dataset) File() string { return d.Name + ".parquet" }

// The datasets, in the order the docs list them.
var (
	Cells = Dataset{Name: "cells", Title: "one row per cell (GeoParquet 1.1)",
		SortedBy: []string{"field_id", "cell_id"}, RowGroupRows: 256 << 10, rowType: reflect.TypeFor[CellRow]()}
	Observations = Dataset{Name: "observations", Title: "one row per cell × scene (clear or masked)",
		SortedBy: []string{"field_id", "cell_id", "date", "collection", "item_id"}, RowGroupRows: 1 << 20, rowType: reflect.TypeFor[ObsRow]()}
	Events = Dataset{Name: "events", Title: "one row per soil-revolving event of a talhão",
		SortedBy: []string{"field_id", "date"}, RowGroupRows: 1 << 20, rowType: reflect.TypeFor[EventRow]()}
	Seasons = Dataset{Name: "seasons", Title: "one row per talhão × agricultural year",
		SortedBy: []string{"field_id", "season"}, RowGroupRows: 1 << 20, rowType: reflect.TypeFor[SeasonRow]()}
	CellCover = Dataset{Name: "cell_cover", Title: "one row per cell × agricultural year with a sowing date: pre-sowing straw cover",
		SortedBy: []string{"field_id", "cell_id", "season"}, RowGroupRows: 1 << 20, rowType: reflect.TypeFor[CellCoverRow]()}
	Cycles = Dataset{Name: "cycles", Title: "one row per detected crop cycle",
		SortedBy: []string{"field_id", "start_date", "cycle"}, RowGroupRows: 1 << 20, rowType: reflect.TypeFor[CycleRow]()}
	Indicators = Dataset{Name: "indicators", Title: "one row per talhão: T, C, slope, levels, status",
		SortedBy: []string{"field_id"}, RowGroupRows: 1 << 20, rowType: reflect.TypeFor[IndicatorRow]()}
	Classification = Dataset{Name: "classification", Title: "one row per talhão: NM1–NM4 preview and its explanation (manejo classify)",
		SortedBy: []string{"field_id"}, RowGroupRows: 1 << 20, rowType: reflect.TypeFor[ClassificationRow]()}
	SINMResults = Dataset{Name: "sinm_results", Title: "one row per delivered talhão: SINM's level and racional beside the preview (manejo sinm status)",
		SortedBy: []string{"field_id"}, RowGroupRows: 1 << 20, rowType: reflect.TypeFor[SINMResultRow]()}
	SINMSubmissions = Dataset{Name: "sinm_submissions", Title: "one row per record of the submissions ledger sinm/submissions.jsonl (manejo sinm submit)",
		SortedBy: []string{"field_id", "time"}, RowGroupRows: 1 << 20, rowType: reflect.TypeFor[SINMSubmissionRow]()}
)

// Datasets lists every dataset in documentation order.
var Datasets = []Dataset{Cells, Observations, Events, Seasons, CellCover, Cycles, Indicators, Classification, SINMResults, SINMSubmissions}

// DatasetOf returns the descriptor of the dataset whose rows are T.
func DatasetOf[T Row]() Dataset {
	t := reflect.TypeFor[T]()
	for _, d := range Datasets {
		if d.rowType == t {
			return d
		}
	}
	panic("export: no dataset for " + t.String()) // unreachable: Row is closed
}

// Sorted returns a copy of rows in the order their dataset is written (by
// field, cell and date; see each row type).
func Sorted[T Row](rows []T) []T {
	out := slices.Clone(rows)
	slices.SortStableFunc(out, compareFunc[T]())
	return out
}

// compareFunc returns the sort order of the dataset of T.
func compareFunc[T Row]() func(a, b T) int {
	var f any
	switch any(*new(T)).(type) {
	case CellRow:
		f = compareCells
	case ObsRow:
		f = compareObs
	case EventRow:
		f = compareEvents
	case SeasonRow:
		f = compareSeasons
	case CellCoverRow:
		f = compareCellCover
	case CycleRow:
		f = compareCycles
	case IndicatorRow:
		f = compareIndicators
	case ClassificationRow:
		f = compareClassifications
	case SINMResultRow:
		f = compareSINMResults
	case SINMSubmissionRow:
		f = compareSINMSubmissions
	}
	return f.(func(a, b T) int)
}

// Options configures the Parquet writers. The zero value is usable.
type Options struct {
	// Version is the manejo version recorded in the created_by field of the
	// file footer ("manejo version <Version>"); "" records "dev". No build
	// time or host goes into the file, so equal inputs give equal bytes.
	Version string
	// RowGroupRows caps the rows per row group; 0 uses the dataset default
	// (Dataset.RowGroupRows: 1 Mi rows, 256 Ki for cells), which keeps row
	// groups well under 128 MiB uncompressed.
	RowGroupRows int64
}

// CreatedBy returns the created_by string written in every file footer.
func (o Options) CreatedBy() string {
	v := o.Version
	if v == "" {
		v = "dev"
	}
	return "manejo version " + v
}

// ErrUnsorted reports rows handed to a Writer out of the dataset order
// across Write calls.
var ErrUnsorted = errors.New("export: rows out of order across batches")

// Writer streams rows of one dataset into a Parquet file: zstd compression,
// dictionary encoding on repeated strings, statistics and page indexes, rows
// in the dataset's sort order. Memory is bounded by one row group.
type Writer[T Row] struct {
	ds   Dataset
	pw   *parquet.GenericWriter[T]
	cmp  func(a, b T) int
	last *T
	n    int64
	rg   int64         // rows per row group
	geo  *geoCollector // cells only
	err  error
}

// zstdCodec is shared by all writers; it is safe for concurrent use
// (zstd.go).
var zstdCodec = &zstdPages{}

// NewWriter returns a Writer of the dataset of T writing to w. Close must be
// called to write the footer.
func NewWriter[T Row](w io.Writer, o Options) *Writer[T] {
	ds := DatasetOf[T]()
	rg := o.RowGroupRows
	if rg <= 0 {
		rg = ds.RowGroupRows
	}
	wr := &Writer[T]{ds: ds, cmp: compareFunc[T](), rg: rg}
	wr.pw = parquet.NewGenericWriter[T](w,
		&parquet.WriterConfig{CreatedBy: o.CreatedBy()},
		parquet.Compression(zstdCodec),
		parquet.MaxRowsPerRowGroup(rg),
		parquet.KeyValueMetadata("manejo:dataset", ds.Name),
		parquet.KeyValueMetadata("manejo:sorted_by", strings.Join(ds.SortedBy, ",")),
	)
	if ds.Name == Cells.Name {
		wr.geo = &geoCollector{}
	}
	return wr
}

// Write sorts rows in place into the dataset order and appends them. Rows of
// successive calls must follow each other in that order (write talhões in
// field_id order); otherwise Write returns ErrUnsorted and writes nothing.
func (w *Writer[T]) Write(rows []T) error {
	if w.err != nil {
		return w.err
	}
	if len(rows) == 0 {
		return nil
	}
	slices.SortStableFunc(rows, w.cmp)
	if w.last != nil && w.cmp(*w.last, rows[0]) > 0 {
		return fmt.Errorf("write %s: %w", w.ds.Name, ErrUnsorted)
	}
	if w.geo != nil {
		if err := w.geo.add(any(rows).([]CellRow)); err != nil {
			return fmt.Errorf("write %s: %w", w.ds.Name, err)
		}
	}
	if _, err := w.pw.Write(rows); err != nil {
		w.err = fmt.Errorf("write %s: %w", w.ds.Name, err)
		return w.err
	}
	last := rows[len(rows)-1]
	w.last = &last
	w.n += int64(len(rows))
	return nil
}

// Rows returns the number of rows written so far.
func (w *Writer[T]) Rows() int64 { return w.n }

// Close flushes the last row group and writes the footer (with the GeoParquet
// `geo` metadata for cells). It does not close the underlying io.Writer.
func (w *Writer[T]) Close() error {
	if w.err != nil {
		return w.err
	}
	if w.geo != nil {
		meta, err := w.geo.metadata()
		if err != nil {
			return fmt.Errorf("close %s: %w", w.ds.Name, err)
		}
		w.pw.SetKeyValueMetadata("geo", meta)
	}
	if err := w.pw.Close(); err != nil {
		return fmt.Errorf("close %s: %w", w.ds.Name, err)
	}
	return nil
}

// Write writes rows as one complete Parquet file of the dataset of T to w,
// sorting rows in place first.
func Write[T Row](w io.Writer, rows []T, o Options) error {
	pw := NewWriter[T](w, o)
	if err := pw.Write(rows); err != nil {
		return err
	}
	return pw.Close()
}

// Read reads every row of one Parquet file of the dataset of T. Columns
// missing from the file are left at their zero value.
func Read[T Row](r io.ReaderAt, size int64) ([]T, error) {
	ds := DatasetOf[T]()
	rows, err := parquet.Read[T](r, size)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", ds.Name, err)
	}
	return rows, nil
}

// ReadDataset reads the dataset of T from an output directory: either the
// single file <name>.parquet or every part-*.parquet file under the folder
// <name>.parquet/, concatenated in part order.
func ReadDataset[T Row](fsys fs.FS) ([]T, error) {
	ds := DatasetOf[T]()
	files, err := DatasetFiles(fsys, ds.Name)
	if err != nil {
		return nil, err
	}
	var all []T
	for _, name := range files {
		rows, err := readFS[T](fsys, name)
		if err != nil {
			return nil, err
		}
		all = append(all, rows...)
	}
	return all, nil
}

// DatasetFiles lists the Parquet files of dataset name ("indicators") in
// fsys: the single file, or the part files of the folder in name order.
func DatasetFiles(fsys fs.FS, name string) ([]string, error) {
	file := strings.TrimSuffix(name, ".parquet") + ".parquet"
	st, err := fs.Stat(fsys, file)
	if err != nil {
		return nil, fmt.Errorf("find dataset %s: %w", file, err)
	}
	if !st.IsDir() {
		return []string{file}, nil
	}
	matches, err := fs.Glob(fsys, path.Join(file, "part-*.parquet"))
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", file, err)
	}
	if len(matches) == 0 {
		return nil, fmt.Errorf("list %s: no part-*.parquet files", file)
	}
	sort.Strings(matches)
	return matches, nil
}

func readFS[T Row](fsys fs.FS, name string) ([]T, error) {
	ra, size, closeFn, err := openAt(fsys, name)
	if err != nil {
		return nil, err
	}
	defer closeFn()
	rows, err := Read[T](ra, size)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return rows, nil
}

// openAt opens a file of fsys for random access: the file itself when it is
// an io.ReaderAt (os.DirFS), else its bytes in memory. Call closeFn when done.
func openAt(fsys fs.FS, name string) (ra io.ReaderAt, size int64, closeFn func() error, err error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, 0, nil, fmt.Errorf("open %s: %w", name, err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, nil, fmt.Errorf("stat %s: %w", name, err)
	}
	if ra, ok := f.(io.ReaderAt); ok {
		return ra, st.Size(), f.Close, nil
	}
	b, err := io.ReadAll(f)
	f.Close()
	if err != nil {
		return nil, 0, nil, fmt.Errorf("read %s: %w", name, err)
	}
	return bytes.NewReader(b), int64(len(b)), func() error { return nil }, nil
}

// PartName returns the path of part i (0-based) of n of a dataset:
// PartName("indicators", 3, 16) = "indicators.parquet/part-00003-of-00016.parquet".
// The folder reads as one dataset in DuckDB ('indicators.parquet/*.parquet'),
// pyarrow and Athena. With n ≤ 1 it returns the unsharded "indicators.parquet".
// It panics when i is outside [0, n), a programming error.
func PartName(dataset string, i, n int) string {
	file := strings.TrimSuffix(dataset, ".parquet") + ".parquet"
	if n <= 1 {
		return file
	}
	if i < 0 || i >= n {
		panic(fmt.Sprintf("export: part %d outside [0, %d)", i, n))
	}
	return fmt.Sprintf("%s/part-%05d-of-%05d.parquet", file, i, n)
}
