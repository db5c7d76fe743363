package export

import (
	"sync"

	"github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go/format"
)

// zstdPages is the ZSTD codec of every dataset. It writes the same bytes
// as parquet-go's own codec (compress/zstd at SpeedDefault, one goroutine,
// the default 8 MiB window) but with klauspost's lower-memory encoder: a
// page over 128 KiB makes parquet-go's encoder allocate a 16 MiB history
// buffer (twice the window), this one 8 MiB + 128 KiB. Encoders live in a
// sync.Pool, so each one that a GC drops is allocated again by the next
// page: with the smaller buffer, publishing and every batch's commit reach
// a lower Go heap (docs/performance.md, "Memory"). TestZstdPagesBytes
// checks the bytes against parquet-go's codec.
type zstdPages struct {
	enc, dec sync.Pool
}

func (*zstdPages) String() string                            { return "ZSTD" }
func (*zstdPages) CompressionCodec() format.CompressionCodec { return format.Zstd }

// Encode compresses src into dst[:0], as one zstd frame.
func (c *zstdPages) Encode(dst, src []byte) ([]byte, error) {
	e, _ := c.enc.Get().(*zstd.Encoder)
	if e == nil {
		var err error
		e, err = zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithEncoderLevel(zstd.SpeedDefault),
			zstd.WithZeroFrames(true), zstd.WithEncoderCRC(false), zstd.WithLowerEncoderMem(true))
		if err != nil {
			return nil, err
		}
	}
	defer c.enc.Put(e)
	return e.EncodeAll(src, dst[:0]), nil
}

// Decode decompresses src into dst[:0].
func (c *zstdPages) Decode(dst, src []byte) ([]byte, error) {
	d, _ := c.dec.Get().(*zstd.Decoder)
	if d == nil {
		var err error
		d, err = zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))
		if err != nil {
			return nil, err
		}
	}
	defer c.dec.Put(d)
	return d.DecodeAll(src, dst[:0])
}
