package series

import (
	"encoding/binary"
	"errors"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/airbusgeo/godal"
)

// GeoTIFF tags that hold a file's coordinate reference system.
const (
	tagGeoKeyDirectory = 34735 // SHORT
	tagGeoDoubleParams = 34736 // DOUBLE
	tagGeoASCIIParams  = 34737 // ASCII
	maxGeoTagBytes     = 1 << 16
	maxWKTCache        = 256
)

// wktCache holds, for one Sample call (shared by its readers), the WKT
// GDAL derived from each distinct set of GeoTIFF georeferencing tags, with
// the GDAL configuration of the open. Building it (ds.Projection) costs
// 2–9 ms of CPU a file — more than the open and often more than the
// reads — while a catalog's files share a handful of CRSs. GDAL derives a
// GTiff's CRS from these tags and its configuration only (no sidecar file
// is read: GDAL_DISABLE_READDIR_ON_OPEN=EMPTY_DIR, which Sample sets), so
// two files with the same key get the same WKT, byte for byte.
type wktCache struct {
	mu sync.Mutex
	m  map[string]string
}

func newWKTCache() *wktCache { return &wktCache{m: map[string]string{}} }

// geoFile is what tags read of a local file before GDAL opens it: the key
// of its CRS and its identity on disk.
type geoFile struct {
	key  string
	stat os.FileInfo
}

// tags reads the georeferencing tags of the local file at path, to be
// opened with cfg. It returns no key for a remote file, a GDAL path
// syntax (a ':' in the path), an open that may read sidecar files or a
// file whose tags cannot be read: projection then asks GDAL.
func (c *wktCache) tags(path string, cfg []string) geoFile {
	if c == nil || strings.HasPrefix(path, "/vsi") || strings.Contains(path, ":") || !noSidecars(cfg) {
		return geoFile{}
	}
	f, err := os.Open(path)
	if err != nil {
		return geoFile{}
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return geoFile{}
	}
	tags, err := geoTags(f)
	if err != nil || tags == "" {
		return geoFile{}
	}
	return geoFile{key: strings.Join(cfg, "\x00") + "\x01" + tags, stat: st}
}

// projection returns the WKT of ds, opened from path after tags read g:
// the one GDAL gave for an earlier file of the same key, when the path
// still names the file whose tags were read (same inode, size and
// modification time), else GDAL's.
func (c *wktCache) projection(path string, g geoFile, ds *godal.Dataset) string {
	if g.key == "" {
		return ds.Projection()
	}
	if st, err := os.Stat(path); err != nil || !os.SameFile(st, g.stat) || st.Size() != g.stat.Size() || !st.ModTime().Equal(g.stat.ModTime()) {
		return ds.Projection()
	}
	c.mu.Lock()
	wkt, ok := c.m[g.key]
	c.mu.Unlock()
	if ok {
		return wkt
	}
	wkt = ds.Projection()
	c.mu.Lock()
	if wkt != "" && len(c.m) < maxWKTCache {
		c.m[g.key] = wkt
	}
	c.mu.Unlock()
	return wkt
}

// noSidecars tells whether cfg keeps GDAL from reading files beside the
// one opened (a .aux.xml could carry another CRS): the last setting of
// GDAL_DISABLE_READDIR_ON_OPEN wins, as GDAL applies them in order.
func noSidecars(cfg []string) bool {
	v := ""
	for _, c := range cfg {
		if k, val, ok := strings.Cut(c, "="); ok && strings.EqualFold(k, "GDAL_DISABLE_READDIR_ON_OPEN") {
			v = val
		}
	}
	return strings.EqualFold(v, "EMPTY_DIR")
}

// geoTags returns the GeoTIFF tags of the first image directory of a
// (Big)TIFF file — byte order, then each tag's number, type, count and
// value bytes — or "" when the directory has no GeoKeyDirectory tag.
func geoTags(f io.ReaderAt) (string, error) {
	t, err := newTIFFDir(f)
	if err != nil {
		return "", err
	}
	if _, ok := t.entries[tagGeoKeyDirectory]; !ok {
		return "", nil
	}
	var b strings.Builder
	b.WriteString(t.order)
	for _, tag := range []uint16{tagGeoKeyDirectory, tagGeoDoubleParams, tagGeoASCIIParams} {
		e, ok := t.entries[tag]
		if !ok {
			continue
		}
		v, err := t.value(f, e)
		if err != nil {
			return "", err
		}
		b.WriteString(";" + strconv.Itoa(int(tag)) + ":" + strconv.Itoa(int(e.typ)) + ":" + strconv.FormatUint(e.count, 10) + ":")
		b.Write(v)
	}
	return b.String(), nil
}

// tiffEntry is one directory entry: its type, count and the bytes that
// hold the value inline or the offset to it.
type tiffEntry struct {
	typ   uint16
	count uint64
	raw   []byte
}

// tiffDir holds the GeoTIFF entries of the first image directory of a
// TIFF or BigTIFF file.
type tiffDir struct {
	bo      binary.ByteOrder
	order   string
	big     bool
	entries map[uint16]tiffEntry
}

var errNotTIFF = errors.New("not a TIFF file")

// newTIFFDir reads the header and the first directory's GeoTIFF entries.
func newTIFFDir(r io.ReaderAt) (*tiffDir, error) {
	h := make([]byte, 16)
	if _, err := r.ReadAt(h, 0); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	t := &tiffDir{entries: map[uint16]tiffEntry{}}
	switch string(h[:2]) {
	case "II":
		t.bo, t.order = binary.LittleEndian, "II"
	case "MM":
		t.bo, t.order = binary.BigEndian, "MM"
	default:
		return nil, errNotTIFF
	}
	var off uint64
	switch t.bo.Uint16(h[2:]) {
	case 42:
		off = uint64(t.bo.Uint32(h[4:]))
	case 43:
		t.big, off = true, t.bo.Uint64(h[8:])
	default:
		return nil, errNotTIFF
	}
	cw, ew := 2, 12
	if t.big {
		cw, ew = 8, 20
	}
	c := make([]byte, cw)
	if _, err := r.ReadAt(c, int64(off)); err != nil {
		return nil, err
	}
	n := uint64(t.bo.Uint16(c))
	if t.big {
		n = t.bo.Uint64(c)
	}
	if n == 0 || n > 4096 {
		return nil, errNotTIFF
	}
	d := make([]byte, int(n)*ew)
	if _, err := r.ReadAt(d, int64(off)+int64(cw)); err != nil {
		return nil, err
	}
	for i := range int(n) {
		e := d[i*ew : (i+1)*ew]
		te := tiffEntry{typ: t.bo.Uint16(e[2:])}
		if t.big {
			te.count, te.raw = t.bo.Uint64(e[4:]), e[12:20]
		} else {
			te.count, te.raw = uint64(t.bo.Uint32(e[4:])), e[8:12]
		}
		tag := t.bo.Uint16(e)
		if tag < tagGeoKeyDirectory || tag > tagGeoASCIIParams {
			continue
		}
		if _, dup := t.entries[tag]; dup {
			return nil, errNotTIFF // which one would GDAL take?
		}
		t.entries[tag] = te
	}
	return t, nil
}

// value returns the bytes of e's value, read from r when not inline.
func (t *tiffDir) value(r io.ReaderAt, e tiffEntry) ([]byte, error) {
	size := map[uint16]uint64{1: 1, 2: 1, 3: 2, 4: 4, 5: 8, 6: 1, 7: 1, 8: 2, 9: 4, 10: 8, 11: 4, 12: 8, 16: 8, 17: 8, 18: 8}[e.typ]
	if size == 0 || e.count > maxGeoTagBytes/size {
		return nil, errNotTIFF
	}
	n := size * e.count
	if n <= uint64(len(e.raw)) {
		return e.raw[:n], nil
	}
	off := uint64(t.bo.Uint32(e.raw))
	if t.big {
		off = t.bo.Uint64(e.raw)
	}
	v := make([]byte, n)
	if _, err := r.ReadAt(v, int64(off)); err != nil {
		return nil, err
	}
	return v, nil
}
