package export

import (
	"bytes"
	"math/rand/v2"
	"runtime"
	"testing"

	pqzstd "github.com/parquet-go/parquet-go/compress/zstd"
)

// TestZstdPagesBytes: the lower-memory codec writes exactly the bytes of
// parquet-go's own ZSTD codec (SpeedDefault, one goroutine), for pages
// from empty to 8 MiB, below and above the 128 KiB block where the history
// buffer is allocated, compressible and not; so the datasets keep their
// bytes, and their decoding gives the input back.
func TestZstdPagesBytes(t *testing.T) {
	ref := &pqzstd.Codec{Level: pqzstd.SpeedDefault, Concurrency: 1}
	ours := &zstdPages{}
	rng := rand.New(rand.NewPCG(15, 1))
	for _, n := range []int{0, 1, 100, 1 << 10, 4<<10 + 3, 64 << 10, 128 << 10, 128<<10 + 1, 300 << 10, 1 << 20, 3<<20 + 17, 8 << 20} {
		for _, kind := range []string{"random", "repetitive"} {
			src := make([]byte, n)
			for i := range src {
				if kind == "random" {
					src[i] = byte(rng.IntN(256))
				} else {
					src[i] = byte(i/7%13) + byte(rng.IntN(3))
				}
			}
			want, err := ref.Encode(nil, src)
			if err != nil {
				t.Fatal(err)
			}
			got, err := ours.Encode(make([]byte, 5), src)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("%s page of %d bytes: %d compressed bytes differ from parquet-go's %d", kind, n, len(got), len(want))
			}
			back, err := ours.Decode(nil, got)
			if err != nil || !bytes.Equal(back, src) {
				t.Fatalf("%s page of %d bytes: decoding gives %d bytes (err %v)", kind, n, len(back), err)
			}
		}
	}
	if ours.String() != ref.String() || ours.CompressionCodec() != ref.CompressionCodec() {
		t.Errorf("codec %s/%v, want %s/%v", ours, ours.CompressionCodec(), ref, ref.CompressionCodec())
	}
}

// TestZstdPagesMemory: after one page over 128 KiB, parquet-go's encoder
// holds a 16 MiB history buffer and this codec's 8 MiB + 128 KiB (plus about 1 MiB of match tables
// in both) (the heap a
// GC leaves, encoders still pooled).
func TestZstdPagesMemory(t *testing.T) {
	src := bytes.Repeat([]byte("manejo zstd page "), 300<<10/17)
	held := func(c interface {
		Encode(dst, src []byte) ([]byte, error)
	}) int64 {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.GC() // encoders pooled by earlier tests are dropped after two
		runtime.ReadMemStats(&before)
		if _, err := c.Encode(nil, src); err != nil {
			t.Fatal(err)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		runtime.KeepAlive(c)
		return int64(after.HeapAlloc) - int64(before.HeapAlloc)
	}
	ref := held(&pqzstd.Codec{Level: pqzstd.SpeedDefault, Concurrency: 1})
	ours := held(&zstdPages{})
	t.Logf("heap held after one %d KiB page: parquet-go's codec %.1f MiB, zstdPages %.1f MiB", len(src)>>10, float64(ref)/(1<<20), float64(ours)/(1<<20))
	if ref < 16<<20 || ours > 10<<20 {
		t.Errorf("heap held: parquet-go's codec %d B (want ≥ 16 MiB), zstdPages %d B (want ≤ 10 MiB)", ref, ours)
	}
}
