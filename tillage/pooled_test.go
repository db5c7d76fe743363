package tillage

import (
	"math"
	"testing"
	"time"
)

// TestPooledClearShare pins which dates the pooled interior series keeps:
// a date is read when at least max(1, ⌈pooledShare·n⌉) of the n cells are
// clear on it, the (n+1)/2 of the rule before pooledShare (half, rounded
// up: 2 of 4 kept, 1 of 4 dropped, 2 of 3 kept, 1 of 3 dropped).
func TestPooledClearShare(t *testing.T) {
	if pooledShare != 0.5 {
		t.Skipf("pooledShare %v set by -pooledshare", pooledShare)
	}
	d0 := time.Date(2024, 6, 1, 0, 0, 0, 0, time.UTC)
	need := []int{1: 1, 2: 1, 3: 2, 4: 2, 5: 3, 6: 3}
	for n := 1; n <= 6; n++ {
		if need[n] != (n+1)/2 {
			t.Fatalf("table: n %d needs %d, the former rule %d", n, need[n], (n+1)/2)
		}
		// Date k (k = 0…n) is clear in the first k cells only.
		cells := make([][]Obs, n)
		for i := range cells {
			for k := 0; k <= n; k++ {
				o := Obs{Date: d0.AddDate(0, 0, k), NDVI: math.NaN(), NDTI: math.NaN()}
				if i < k {
					o.NDVI, o.NDTI = 0.2, 0.01*float64(i+1)
				}
				cells[i] = append(cells[i], o)
			}
		}
		ps := pooled(cells)
		if len(ps) != n+1 {
			t.Fatalf("n %d: %d pooled dates, want %d", n, len(ps), n+1)
		}
		for k, p := range ps {
			kept := !math.IsNaN(p.NDTI)
			if want := k >= need[n]; kept != want {
				t.Errorf("n %d: %d of %d clear: kept %v, want %v", n, k, n, kept, want)
			}
			if kept && p.NDTI != medianOfFirst(k) {
				t.Errorf("n %d, %d clear: NDTI %v, want the clear cells' median %v", n, k, p.NDTI, medianOfFirst(k))
			}
			if want := float64(k) / float64(n); kept && p.share != want {
				t.Errorf("n %d, %d clear: share %v, want %v", n, k, p.share, want)
			}
		}
	}
}

// medianOfFirst is the median of 0.01, 0.02, …, 0.01·k.
func medianOfFirst(k int) float64 {
	if k%2 == 1 {
		return 0.01 * float64(k/2+1)
	}
	return (0.01*float64(k/2) + 0.01*float64(k/2+1)) / 2
}
