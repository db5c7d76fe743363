package storage

import "testing"

// TestSizeBlockCache: a size below 16 MB is raised to it, 0 restores
// GDAL's default, and GDAL_CACHEMAX set by the operator is left alone.
func TestSizeBlockCache(t *testing.T) {
	InitGDAL()
	SizeBlockCache(0)
	def := BlockCacheSize()
	SizeBlockCache(1 << 20)
	if got := BlockCacheSize(); got != 16<<20 {
		t.Errorf("cache %d after asking 1 MB, want the 16 MB floor", got)
	}
	SizeBlockCache(48 << 20)
	if got := BlockCacheSize(); got != 48<<20 {
		t.Errorf("cache %d, want 48 MB", got)
	}
	SizeBlockCache(0)
	if got := BlockCacheSize(); got != def || def <= 16<<20 {
		t.Errorf("cache %d after restoring, want GDAL's default %d", got, def)
	}
	t.Setenv("GDAL_CACHEMAX", "64")
	SizeBlockCache(16 << 20)
	if got := BlockCacheSize(); got != def {
		t.Errorf("cache %d with GDAL_CACHEMAX set by the operator, want it untouched (%d)", got, def)
	}
}
