package coverage

import (
	"math"
	"sort"
	"time"

	"github.com/manejo/manejo/zarc"
)

// daily is an NDVI series laid on a daily grid from t0: y and w hold the
// observations (weight 0 on days without a clear value) and z the smoothed
// curve.
type daily struct {
	t0      time.Time
	y, w, z []float64
	nObs    []int // clear observations per day
}

func (d *daily) day(t time.Time) int { return int(zarc.Day(t).Sub(d.t0).Hours() / 24) }

func (d *daily) date(i int) time.Time { return d.t0.AddDate(0, 0, i) }

// smoothNDVI lays the finite NDVI values of obs on a daily grid spanning the
// first to the last clear observation and fits a robust Whittaker smoother
// (Eilers 2003, second-order differences): it minimises
// Σ wᵢ(yᵢ − zᵢ)² + λ Σ (Δ²z)², then re-weights the observations iters times
// with Tukey's biweight on the residuals, asymmetric as in TIMESAT's upper
// envelope (Jönsson & Eklundh 2004): values below the curve (residual
// clouds and shadows, which lower NDVI) are cut off at 2.5 robust scales
// (1.4826 MAD, at least 0.02 NDVI), values above it at 6. It returns nil with fewer than 4 clear days.
func smoothNDVI(obs []Obs, lambda float64, iters int) *daily {
	var first, last time.Time
	n := 0
	for _, o := range obs {
		if !finite(o.NDVI) {
			continue
		}
		d := zarc.Day(o.Date)
		if n == 0 || d.Before(first) {
			first = d
		}
		if n == 0 || d.After(last) {
			last = d
		}
		n++
	}
	if n < 4 {
		return nil
	}
	s := &daily{t0: first}
	m := s.day(last) + 1
	s.y, s.w, s.z, s.nObs = make([]float64, m), make([]float64, m), make([]float64, m), make([]int, m)
	for _, o := range obs {
		if !finite(o.NDVI) {
			continue
		}
		i := s.day(o.Date)
		s.y[i] += o.NDVI
		s.nObs[i]++
	}
	days := 0
	for i, k := range s.nObs {
		if k > 0 {
			s.y[i] /= float64(k)
			days++
		}
	}
	if days < 4 {
		return nil
	}
	base := make([]float64, m) // observation weights before robust re-weighting
	for i, k := range s.nObs {
		if k > 0 {
			base[i] = 1
		}
	}
	copy(s.w, base)
	ws := newWhittaker(m, lambda)
	ws.solve(s.w, s.y, s.z)
	res := make([]float64, 0, days)
	for it := 0; it < iters; it++ {
		res = res[:0]
		for i, k := range s.nObs {
			if k > 0 {
				res = append(res, math.Abs(s.y[i]-s.z[i]))
			}
		}
		sort.Float64s(res)
		scale := 1.4826 * res[len(res)/2]
		scale = math.Max(scale, robustFloor)
		for i, k := range s.nObs {
			if k == 0 {
				continue
			}
			r := s.y[i] - s.z[i]
			c := robustAbove * scale // above the curve
			if r < 0 {
				c = robustBelow * scale // below: cloud-like
			}
			u := r / c
			if math.Abs(u) >= 1 {
				s.w[i] = base[i] * 1e-4
			} else {
				s.w[i] = base[i] * (1 - u*u) * (1 - u*u)
			}
		}
		ws.solve(s.w, s.y, s.z)
	}
	return s
}

// Robust weighting: residual scale floor (NDVI) and the bisquare cut-offs,
// in scales, below and above the curve.
const robustFloor, robustBelow, robustAbove = 0.02, 2.5, 6.0

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// whittaker solves (W + λ DᵀD) z = W y for second-order differences D by a
// banded Cholesky factorisation (the matrix is pentadiagonal, symmetric and
// positive definite once two days carry weight): O(n) time and memory.
type whittaker struct {
	n                 int
	lambda            float64
	d0, d1, d2        []float64 // diagonals of λDᵀD: main, first, second
	l0, l1, l2, scrat []float64
}

func newWhittaker(n int, lambda float64) *whittaker {
	w := &whittaker{n: n, lambda: lambda,
		d0: make([]float64, n), d1: make([]float64, n), d2: make([]float64, n),
		l0: make([]float64, n), l1: make([]float64, n), l2: make([]float64, n), scrat: make([]float64, n)}
	// DᵀD for rows (1, −2, 1): accumulate each difference row's outer product.
	for r := 0; r+2 < n; r++ {
		c := [3]float64{1, -2, 1}
		for a := 0; a < 3; a++ {
			for b := a; b < 3; b++ {
				v := lambda * c[a] * c[b]
				switch b - a {
				case 0:
					w.d0[r+a] += v
				case 1:
					w.d1[r+a] += v
				case 2:
					w.d2[r+a] += v
				}
			}
		}
	}
	return w
}

// solve writes the smoothed series into z.
func (w *whittaker) solve(wt, y, z []float64) {
	n := w.n
	l0, l1, l2 := w.l0, w.l1, w.l2 // L[i][i], L[i][i-1], L[i][i-2]
	for i := 0; i < n; i++ {
		a := w.d0[i] + wt[i]
		if i >= 2 {
			l2[i] = w.d2[i-2] / l0[i-2]
		}
		if i >= 1 {
			v := w.d1[i-1]
			if i >= 2 {
				v -= l2[i] * l1[i-1]
			}
			l1[i] = v / l0[i-1]
		}
		a -= l1[i]*l1[i] + l2[i]*l2[i]
		if a < 1e-12 {
			a = 1e-12
		}
		l0[i] = math.Sqrt(a)
	}
	b := w.scrat
	for i := 0; i < n; i++ {
		v := wt[i] * y[i]
		if i >= 1 {
			v -= l1[i] * b[i-1]
		}
		if i >= 2 {
			v -= l2[i] * b[i-2]
		}
		b[i] = v / l0[i]
	}
	for i := n - 1; i >= 0; i-- {
		v := b[i]
		if i+1 < n {
			v -= l1[i+1] * z[i+1]
		}
		if i+2 < n {
			v -= l2[i+2] * z[i+2]
		}
		z[i] = v / l0[i]
	}
}
