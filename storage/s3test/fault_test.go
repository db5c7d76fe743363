package s3test

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// TestKeyedFaultsIgnoreOtherKeys: with Key set, the faults a key's
// requests meet, scripted or drawn at a rate, do not depend on how other
// keys' requests came between them (review s10 F14), and the script's
// fault wins over the rate's draw.
func TestKeyedFaultsIgnoreOtherKeys(t *testing.T) {
	f := Faults{Rate503: 0.25, RateDrop: 0.25, Seed: 7,
		Key: func(r *http.Request) string { return r.URL.Path },
		Script: func(key string, n int) Fault {
			if key == "/a" && n == 2 {
				return Reset
			}
			return Pass
		}}
	faults := func(paths ...string) map[string][]Fault {
		fl := NewFlaky(nil, f)
		got := map[string][]Fault{}
		for i, p := range paths {
			got[p] = append(got[p], fl.fault(httptest.NewRequest("GET", p, nil), int64(i+1)))
		}
		return got
	}
	ab := faults("/a", "/b", "/a", "/b", "/a", "/b", "/a", "/b", "/a", "/b")
	ba := faults("/b", "/b", "/b", "/a", "/a", "/b", "/a", "/a", "/b", "/a")
	if ab["/a"][1] != Reset || ba["/a"][1] != Reset {
		t.Errorf("key /a, request 2: %v and %v; want the script's reset in both orders", ab["/a"][1], ba["/a"][1])
	}
	drawn := 0
	for _, k := range []string{"/a", "/b"} {
		for i := range ab[k] {
			if ab[k][i] != ba[k][i] {
				t.Errorf("key %s, request %d: %v in one order, %v in the other", k, i+1, ab[k][i], ba[k][i])
			}
			if ab[k][i] != Pass && !(k == "/a" && i == 1) {
				drawn++
			}
		}
	}
	if drawn == 0 {
		t.Errorf("no fault drawn at rates %.2f + %.2f in 9 requests: the draws prove nothing", f.Rate503, f.RateDrop)
	}
}

// TestPeakInFlight: PeakInFlight counts the numbered requests being served
// at once: three held together (and one not numbered), then one alone.
func TestPeakInFlight(t *testing.T) {
	var in sync.WaitGroup
	release := make(chan struct{})
	fl := NewFlaky(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { in.Done(); <-release }),
		Faults{Match: func(r *http.Request) bool { return r.URL.Path != "/unnumbered" }})
	var wg sync.WaitGroup
	for _, p := range []string{"/a", "/b", "/c", "/unnumbered"} {
		in.Add(1)
		wg.Add(1)
		go func() { defer wg.Done(); fl.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", p, nil)) }()
	}
	in.Wait() // all four are in the handler
	close(release)
	wg.Wait()
	in.Add(1)
	fl.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/d", nil))
	if got := fl.PeakInFlight(); got != 3 {
		t.Errorf("PeakInFlight = %d, want 3", got)
	}
}
