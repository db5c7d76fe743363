package num

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestSelectMatchesSort(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 2, 3, 10, 17, 100, 1001} {
		for trial := 0; trial < 20; trial++ {
			v := make([]float64, n)
			for i := range v {
				v[i] = math.Round(rng.NormFloat64()*10) / 2 // ties on purpose
			}
			sorted := slices.Clone(v)
			slices.Sort(sorted)
			k := rng.IntN(n)
			if got := Select(slices.Clone(v), k); got != sorted[k] {
				t.Fatalf("n=%d: Select(k=%d) = %v, want %v", n, k, got, sorted[k])
			}
		}
	}
}

func TestQuantileType7(t *testing.T) {
	t.Parallel()
	v := []float64{5, 1, 4, 2, 3} // sorted 1..5
	for _, tc := range []struct{ p, want float64 }{{0, 1}, {0.25, 2}, {0.5, 3}, {0.9, 4.6}, {1, 5}, {0.125, 1.5}} {
		if got := Quantile(slices.Clone(v), tc.p); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("Quantile(%v) = %v, want %v", tc.p, got, tc.want)
		}
	}
}

// TestQuantileMatchesSort checks the selection-based quantile against the
// definition on sorted data, including ties.
func TestQuantileMatchesSort(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 7))
	for _, n := range []int{1, 2, 3, 17, 100, 1001, 5000} {
		for _, ties := range []bool{false, true} {
			v := make([]float64, n)
			for i := range v {
				v[i] = rng.Float64() * 10
				if ties {
					v[i] = math.Floor(v[i])
				}
			}
			sorted := slices.Clone(v)
			slices.Sort(sorted)
			for _, p := range []float64{0, 0.1, 0.5, 0.9, 1} {
				h := p * float64(n-1)
				lo := int(math.Floor(h))
				want := sorted[lo]
				if lo < n-1 {
					want += (h - float64(lo)) * (sorted[lo+1] - sorted[lo])
				}
				if got := Quantile(slices.Clone(v), p); got != want {
					t.Errorf("Quantile(n=%d, ties=%t, p=%v) = %v, want %v", n, ties, p, got, want)
				}
			}
		}
	}
}

func TestRound(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		v    float64
		n    int
		want float64
	}{
		{0.21336, 4, 0.2134}, {-0.00004, 4, 0}, {76.5, 0, 77}, {-76.5, 0, -77}, {2.5, 0, 3},
		{-55.6170000001, 6, -55.617}, {1.005, 2, 1}, {0.125, 2, 0.13}, {-0.04, 1, 0},
	} {
		got := Round(tc.v, tc.n)
		if got != tc.want || math.Signbit(got) != math.Signbit(tc.want) {
			t.Errorf("Round(%v, %d) = %v, want %v", tc.v, tc.n, got, tc.want)
		}
	}
	if !math.IsNaN(Round(math.NaN(), 2)) || !math.IsInf(Round(math.Inf(-1), 2), -1) {
		t.Error("Round of NaN or Inf changed it")
	}
}

// TestMedian: the median of short and long slices, odd and even, equals the
// middle of a full sort; an empty slice has none.
func TestMedian(t *testing.T) {
	if !math.IsNaN(Median(nil)) {
		t.Error("Median(nil) is not NaN")
	}
	for _, n := range []int{1, 2, 7, 32, 33, 64, 101} {
		v := make([]float64, n)
		for i := range v {
			v[i] = math.Sin(float64(i*i + 3))
		}
		s := slices.Clone(v)
		slices.Sort(s)
		want := s[n/2]
		if n%2 == 0 {
			want = (s[n/2-1] + s[n/2]) / 2
		}
		if got := Median(v); got != want {
			t.Errorf("n=%d: Median = %v, want %v", n, got, want)
		}
	}
}
