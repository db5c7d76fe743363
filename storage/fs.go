package storage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// Range sizes of the S3 files of FS: a read fetches the BlockSize-aligned
// blocks around it (a Parquet footer and its length, or a page header and
// its page, come in one request); reads that each continue where the last
// one ended fetch ahead, twice as far each time up to ReadAhead (a long scan
// makes one request per MiB, not per page). A file keeps its last few
// ranges.
const (
	ReadAhead = 1 << 20
	BlockSize = 64 << 10
)

// FS returns the folder at loc as a read-only fs.FS: a local folder through
// os.DirFS, an s3:// prefix through S3 requests, never downloaded whole.
// Files opened from an S3 FS implement io.ReaderAt with ranged GetObject
// requests (ReadAhead bytes at least, retried as ReadFile is), and Stat;
// the FS implements fs.ReadDirFS (listing with "/" as delimiter) and
// fs.StatFS, so fs.Glob, fs.WalkDir, export.DatasetFiles, export.ScanFS and
// export.ReadDataset read Parquet footers and row groups by range. ctx bounds
// every request made through the FS. A missing folder, or an S3 prefix
// holding no object, is an error wrapping fs.ErrNotExist; a local file is
// one wrapping syscall.ENOTDIR; HTTP locations cannot be listed.
func FS(ctx context.Context, loc string) (fs.FS, error) {
	switch KindOf(loc) {
	case S3:
		c, bucket, key, err := s3Target(ctx, loc)
		if err != nil {
			return nil, err
		}
		fsys := &s3FS{ctx: ctx, c: c, bucket: bucket, prefix: strings.Trim(key, "/")}
		if _, err := fsys.Stat("."); err != nil {
			return nil, fmt.Errorf("open %s: %w", loc, err)
		}
		return fsys, nil
	case HTTP:
		return nil, fmt.Errorf("open %s as a folder: HTTP locations cannot be listed", loc)
	}
	st, err := os.Stat(loc)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", loc, err)
	}
	if !st.IsDir() {
		return nil, &fs.PathError{Op: "open", Path: loc, Err: syscall.ENOTDIR}
	}
	return os.DirFS(loc), nil
}

// s3FS serves the objects under bucket/prefix; "a/b" is prefix/a/b.
type s3FS struct {
	ctx    context.Context
	c      *s3.Client
	bucket string
	prefix string // without leading or trailing "/"; "" is the bucket
}

var (
	_ fs.ReadDirFS = (*s3FS)(nil)
	_ fs.StatFS    = (*s3FS)(nil)
)

// key returns the object key of name ("." is the prefix itself).
func (f *s3FS) key(name string) string {
	switch {
	case name == ".":
		return f.prefix
	case f.prefix == "":
		return name
	}
	return f.prefix + "/" + name
}

func (f *s3FS) loc(name string) string { return "s3://" + f.bucket + "/" + f.key(name) }

// Open opens an object as a file or a common prefix as a directory.
func (f *s3FS) Open(name string) (fs.File, error) {
	st, err := f.Stat(name)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: unwrapPath(err)}
	}
	if st.IsDir() {
		return &s3Dir{fsys: f, name: name, info: st}, nil
	}
	return &s3File{fsys: f, name: name, info: st.(fileInfo), end: -1, ahead: BlockSize}, nil
}

// Stat reports an object (HeadObject) or, failing that, a prefix holding
// objects (a one-key listing).
func (f *s3FS) Stat(name string) (fs.FileInfo, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "stat", Path: name, Err: fs.ErrInvalid}
	}
	if name != "." {
		key := f.key(name)
		out, err := f.c.HeadObject(f.ctx, &s3.HeadObjectInput{Bucket: &f.bucket, Key: &key})
		var nf *types.NotFound
		switch {
		case err == nil:
			return fileInfo{name: path.Base(name), size: aws.ToInt64(out.ContentLength), mod: aws.ToTime(out.LastModified).Truncate(time.Second)}, nil
		case !errors.As(err, &nf):
			return nil, &fs.PathError{Op: "stat", Path: name, Err: fmt.Errorf("%s: %w", f.loc(name), err)}
		}
	}
	dir := f.dirPrefix(name)
	out, err := f.c.ListObjectsV2(f.ctx, &s3.ListObjectsV2Input{Bucket: &f.bucket, Prefix: &dir, MaxKeys: aws.Int32(1)})
	if err != nil {
		return nil, &fs.PathError{Op: "stat", Path: name, Err: fmt.Errorf("list %s: %w", f.loc(name), err)}
	}
	if len(out.Contents) == 0 {
		return nil, &fs.PathError{Op: "stat", Path: name, Err: fs.ErrNotExist}
	}
	return fileInfo{name: path.Base(name), dir: true}, nil
}

// dirPrefix is the listing prefix of directory name: its key and "/".
func (f *s3FS) dirPrefix(name string) string {
	if k := f.key(name); k != "" {
		return k + "/"
	}
	return ""
}

// ReadDir lists directory name, one level deep, sorted by name.
func (f *s3FS) ReadDir(name string) ([]fs.DirEntry, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: fs.ErrInvalid}
	}
	dir := f.dirPrefix(name)
	var out []fs.DirEntry
	p := s3.NewListObjectsV2Paginator(f.c, &s3.ListObjectsV2Input{Bucket: &f.bucket, Prefix: &dir, Delimiter: aws.String("/")})
	for p.HasMorePages() {
		page, err := p.NextPage(f.ctx)
		if err != nil {
			return nil, &fs.PathError{Op: "readdir", Path: name, Err: fmt.Errorf("list %s: %w", f.loc(name), err)}
		}
		for _, cp := range page.CommonPrefixes {
			if base := strings.TrimSuffix(strings.TrimPrefix(aws.ToString(cp.Prefix), dir), "/"); base != "" {
				out = append(out, fs.FileInfoToDirEntry(fileInfo{name: base, dir: true}))
			}
		}
		for _, o := range page.Contents {
			if base := strings.TrimPrefix(aws.ToString(o.Key), dir); base != "" {
				out = append(out, fs.FileInfoToDirEntry(fileInfo{name: base, size: aws.ToInt64(o.Size), mod: aws.ToTime(o.LastModified).Truncate(time.Second)}))
			}
		}
	}
	if len(out) == 0 && name != "." {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: fs.ErrNotExist}
	}
	slices.SortFunc(out, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return out, nil
}

// readRange fetches bytes [off, off+n) of object name, retrying a body cut
// short as ReadFile does.
func (f *s3FS) readRange(name string, off, n int64) ([]byte, error) {
	key, loc := f.key(name), f.loc(name)
	rng := fmt.Sprintf("bytes=%d-%d", off, off+n-1)
	return withRetry(f.ctx, "read "+loc, func() ([]byte, error) {
		out, err := f.c.GetObject(f.ctx, &s3.GetObjectInput{Bucket: &f.bucket, Key: &key, Range: &rng})
		if err != nil {
			return nil, fmt.Errorf("read %s (%s): %w", loc, rng, err)
		}
		defer out.Body.Close()
		b := make([]byte, n)
		if _, err := io.ReadFull(out.Body, b); err != nil {
			if f.ctx.Err() != nil {
				return nil, fmt.Errorf("read %s (%s): %w", loc, rng, err)
			}
			return nil, transient(fmt.Errorf("read %s (%s): %w", loc, rng, err))
		}
		return b, nil
	})
}

// unwrapPath returns the cause of a *fs.PathError, so that Open does not
// nest one in another.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// fileInfo describes an object or a common prefix.
type fileInfo struct {
	name string
	size int64
	mod  time.Time
	dir  bool
}

func (i fileInfo) Name() string       { return i.name }
func (i fileInfo) Size() int64        { return i.size }
func (i fileInfo) ModTime() time.Time { return i.mod }
func (i fileInfo) IsDir() bool        { return i.dir }
func (i fileInfo) Sys() any           { return nil }
func (i fileInfo) Mode() fs.FileMode {
	if i.dir {
		return fs.ModeDir | 0o555
	}
	return 0o444
}

// s3File reads one object by range, keeping the ranges it fetched last.
type s3File struct {
	fsys *s3FS
	name string
	info fileInfo

	mu     sync.Mutex
	off    int64     // of the next Read
	end    int64     // where the last ReadAt ended; -1 before the first
	ahead  int64     // the read-ahead of the current sequential streak
	blocks []fetched // most recent last
}

// fetched is a range of the object.
type fetched struct {
	off  int64
	data []byte
}

// keptRanges is how many fetched ranges a file keeps.
const keptRanges = 4

var (
	_ io.ReaderAt = (*s3File)(nil)
	_ io.Seeker   = (*s3File)(nil)
)

func (f *s3File) Stat() (fs.FileInfo, error) { return f.info, nil }
func (f *s3File) Close() error               { return nil }

// ReadAt implements io.ReaderAt; it is safe for concurrent use.
func (f *s3File) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, &fs.PathError{Op: "read", Path: f.name, Err: fs.ErrInvalid}
	}
	size := f.info.size
	if off >= size {
		return 0, io.EOF
	}
	if len(p) == 0 {
		return 0, nil
	}
	want := min(int64(len(p)), size-off)
	f.mu.Lock()
	defer f.mu.Unlock()
	b, ok := f.cached(off, want)
	if !ok {
		start, end := off-off%BlockSize, min(size, (off+want+BlockSize-1)/BlockSize*BlockSize)
		if off == f.end { // sequential: read ahead, further each time
			f.ahead = min(2*f.ahead, ReadAhead)
			start, end = off, min(size, off+max(want, f.ahead))
		} else {
			f.ahead = BlockSize
		}
		data, err := f.fsys.readRange(f.name, start, end-start)
		if err != nil {
			return 0, err
		}
		b = fetched{start, data}
		if len(f.blocks) == keptRanges {
			f.blocks = f.blocks[1:]
		}
		f.blocks = append(f.blocks, b)
	}
	f.end = off + want
	n := copy(p, b.data[off-b.off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// cached returns the kept range holding [off, off+n).
func (f *s3File) cached(off, n int64) (fetched, bool) {
	for _, b := range f.blocks {
		if off >= b.off && off+n <= b.off+int64(len(b.data)) {
			return b, true
		}
	}
	return fetched{}, false
}

// Read implements io.Reader from the current offset.
func (f *s3File) Read(p []byte) (int, error) {
	f.mu.Lock()
	off := f.off
	f.mu.Unlock()
	n, err := f.ReadAt(p, off)
	f.mu.Lock()
	f.off = off + int64(n)
	f.mu.Unlock()
	if n > 0 && err == io.EOF {
		err = nil
	}
	return n, err
}

// Seek implements io.Seeker.
func (f *s3File) Seek(offset int64, whence int) (int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch whence {
	case io.SeekCurrent:
		offset += f.off
	case io.SeekEnd:
		offset += f.info.size
	}
	if offset < 0 {
		return 0, &fs.PathError{Op: "seek", Path: f.name, Err: fs.ErrInvalid}
	}
	f.off = offset
	return offset, nil
}

// s3Dir is a common prefix opened as a directory.
type s3Dir struct {
	fsys    *s3FS
	name    string
	info    fs.FileInfo
	entries []fs.DirEntry
	read    bool
}

func (d *s3Dir) Stat() (fs.FileInfo, error) { return d.info, nil }
func (d *s3Dir) Close() error               { return nil }
func (d *s3Dir) Read([]byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: d.name, Err: errors.New("is a directory")}
}

// ReadDir implements fs.ReadDirFile.
func (d *s3Dir) ReadDir(n int) ([]fs.DirEntry, error) {
	if !d.read {
		all, err := d.fsys.ReadDir(d.name)
		if err != nil {
			return nil, err
		}
		d.entries, d.read = all, true
	}
	if n <= 0 {
		out := d.entries
		d.entries = nil
		return out, nil
	}
	if len(d.entries) == 0 {
		return nil, io.EOF
	}
	n = min(n, len(d.entries))
	out := d.entries[:n]
	d.entries = d.entries[n:]
	return out, nil
}
