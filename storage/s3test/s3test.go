// Package s3test starts an in-process S3 protocol server for tests, clean
// or failing a deterministic share of its requests.
package s3test

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/manejo/manejo/storage"
)

// StartS3 starts an in-process S3 protocol server (gofakes3) on loopback,
// creates the given buckets, points the standard AWS variables at it for the
// rest of the test and resets the client. GDAL's /vsis3/ sees the same
// settings through GDALConfig.
func StartS3(tb testing.TB, buckets ...string) *httptest.Server {
	srv, _ := StartFlakyS3(tb, Faults{}, buckets...)
	return srv
}

// Faults says which requests a Flaky handler fails. Requests are numbered
// from 1 in the order they arrive; retries are new requests.
type Faults struct {
	// Every503 answers every n-th request "503 SlowDown" (0: never).
	Every503 int
	// EveryDrop resets the connection of every n-th request without an
	// answer (0: never), as a crashed proxy or a lost node would.
	EveryDrop int
	// Rate503 and RateDrop fail that share (0..1) of the numbered
	// requests at random, answered 503 SlowDown or reset, drawn from a
	// generator seeded with Seed: the same requests in the same order get
	// the same faults. With Key set, each request's draw is fixed by
	// Seed, its key and its number among the key's requests instead, so
	// a key's faults do not depend on the order of other keys' requests.
	Rate503, RateDrop float64
	Seed              uint64
	// Latency delays the answer to every request (faults and clean ones,
	// matching Match or not) while Off is not set: an object store tens of
	// milliseconds away.
	Latency time.Duration
	// Match, when set, limits faults to the requests it accepts; only
	// those are numbered.
	Match func(*http.Request) bool
	// MaxInFlight, when positive, answers "503 SlowDown" to a numbered
	// request arriving while that many are already being served: the
	// request-rate limit a store applies (S3 per prefix), which a client
	// meets by sending fewer requests at once, not by retrying harder.
	MaxInFlight int
	// Key and Script, when both set, give each numbered request the fault
	// Script(key, n) of its key (an object, say) and its number n among
	// the numbered requests of that key, from 1; the rates and cadences
	// apply to the requests it passes. Every503 and EveryDrop number
	// requests in one sequence of arrival, so which request meets a fault
	// depends on how concurrent requests interleave; a script's faults of
	// a key do not: a client's reads of one object meet the same number
	// of faults however its reads of other objects are scheduled. Which of
	// the key's own requests is its n-th still follows their arrival (a
	// band's windows are read at once); key on the path and Range header
	// to fix that too.
	Key    func(*http.Request) string
	Script func(key string, n int) Fault
}

// Fault is what a Flaky handler does to one request.
type Fault int

const (
	// Pass serves the request.
	Pass Fault = iota
	// SlowDown answers "503 SlowDown".
	SlowDown
	// Reset resets the connection without an answer.
	Reset
)

// Flaky is an http.Handler that fails requests as its Faults say and
// passes the others to the wrapped handler.
type Flaky struct {
	h      http.Handler
	f      Faults
	mu     sync.Mutex
	rng    *rand.Rand
	n      atomic.Int64
	byKey  map[string]int // numbered requests by Faults.Key, under mu
	failed atomic.Int64
	busy   atomic.Int64 // numbered requests being served (MaxInFlight)
	peak   atomic.Int64 // the most of them at once (PeakInFlight)
	drops  atomic.Int64
	sent   atomic.Int64
	// Off disables fault injection while set (to upload fixtures).
	Off atomic.Bool
}

// NewFlaky wraps h.
func NewFlaky(h http.Handler, f Faults) *Flaky {
	return &Flaky{h: h, f: f, rng: rand.New(rand.NewPCG(f.Seed, 0x5eed)), byKey: map[string]int{}}
}

// fault returns the fault of the n-th numbered request r: by its key's
// script, by rate, then by cadence.
func (fl *Flaky) fault(r *http.Request, n int64) Fault {
	var k string
	var i int
	if fl.f.Key != nil {
		k = fl.f.Key(r)
		fl.mu.Lock()
		fl.byKey[k]++
		i = fl.byKey[k]
		fl.mu.Unlock()
	}
	if fl.f.Key != nil && fl.f.Script != nil {
		if f := fl.f.Script(k, i); f != Pass {
			return f
		}
	}
	if fl.f.Rate503 > 0 || fl.f.RateDrop > 0 {
		var u float64
		if fl.f.Key != nil {
			u = keyedDraw(fl.f.Seed, k, i)
		} else {
			fl.mu.Lock()
			u = fl.rng.Float64()
			fl.mu.Unlock()
		}
		switch {
		case u < fl.f.Rate503:
			return SlowDown
		case u < fl.f.Rate503+fl.f.RateDrop:
			return Reset
		}
	}
	switch {
	case fl.f.Every503 > 0 && n%int64(fl.f.Every503) == 0:
		return SlowDown
	case fl.f.EveryDrop > 0 && n%int64(fl.f.EveryDrop) == 0:
		return Reset
	}
	return Pass
}

// keyedDraw is a uniform draw in [0, 1) fixed by the seed, a key and the
// request's number among the key's: the same whatever other keys'
// requests came between.
func keyedDraw(seed uint64, key string, n int) float64 {
	h := fnv.New64a()
	_ = binary.Write(h, binary.LittleEndian, [2]uint64{seed, uint64(n)})
	h.Write([]byte(key))
	return rand.New(rand.NewPCG(h.Sum64(), seed)).Float64()
}

// Requests returns the number of requests numbered (faults on, matching).
func (fl *Flaky) Requests() int64 { return fl.n.Load() }

// Failed503 returns the number of requests answered 503.
func (fl *Flaky) Failed503() int64 { return fl.failed.Load() }

// BodyBytes returns the bytes of the response bodies sent to numbered
// requests that were not failed.
func (fl *Flaky) BodyBytes() int64 { return fl.sent.Load() }

// countingWriter counts the body bytes written through it.
type countingWriter struct {
	http.ResponseWriter
	n *atomic.Int64
}

func (c countingWriter) Write(p []byte) (int, error) {
	n, err := c.ResponseWriter.Write(p)
	c.n.Add(int64(n))
	return n, err
}

// PeakInFlight returns the most numbered requests that were being served
// at once (from their arrival, Latency included, to their answer).
func (fl *Flaky) PeakInFlight() int64 { return fl.peak.Load() }

// Dropped returns the number of connections reset without an answer.
func (fl *Flaky) Dropped() int64 { return fl.drops.Load() }

// ServeHTTP implements http.Handler.
func (fl *Flaky) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if fl.Off.Load() {
		fl.h.ServeHTTP(w, r)
		return
	}
	numbered := fl.f.Match == nil || fl.f.Match(r)
	overLimit := false
	if numbered {
		n := fl.busy.Add(1)
		defer fl.busy.Add(-1)
		for p := fl.peak.Load(); n > p && !fl.peak.CompareAndSwap(p, n); p = fl.peak.Load() {
		}
		overLimit = fl.f.MaxInFlight > 0 && n > int64(fl.f.MaxInFlight)
	}
	if fl.f.Latency > 0 {
		t := time.NewTimer(fl.f.Latency)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return
		}
	}
	if !numbered {
		fl.h.ServeHTTP(w, r)
		return
	}
	fault := fl.fault(r, fl.n.Add(1))
	if overLimit || fault == SlowDown {
		fl.slowDown(w)
		return
	}
	if fault == Reset {
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				fl.drops.Add(1)
				if tc, ok := conn.(*net.TCPConn); ok {
					_ = tc.SetLinger(0) // RST instead of FIN
				}
				_ = conn.Close()
				return
			}
		}
	}
	fl.h.ServeHTTP(countingWriter{w, &fl.sent}, r)
}

// slowDown answers 503 SlowDown as S3 does, and counts it.
func (fl *Flaky) slowDown(w http.ResponseWriter) {
	fl.failed.Add(1)
	w.Header().Set("Content-Type", "application/xml")
	w.Header().Set("Retry-After", "0")
	w.WriteHeader(http.StatusServiceUnavailable)
	_, _ = w.Write([]byte(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>`))
}

// StartFlakyS3 is StartS3 with a server that fails requests as f says. The
// returned Flaky counts what it injected; set its Off while uploading
// fixtures.
func StartFlakyS3(tb testing.TB, f Faults, buckets ...string) (*httptest.Server, *Flaky) {
	tb.Helper()
	backend := s3mem.New()
	for _, b := range buckets {
		if err := backend.CreateBucket(b); err != nil {
			tb.Fatalf("create bucket %s: %v", b, err)
		}
	}
	fl := NewFlaky(gofakes3.New(backend).Server(), f)
	srv := httptest.NewServer(fl)
	tb.Cleanup(srv.Close)
	tb.Setenv("AWS_ENDPOINT_URL", srv.URL)
	tb.Setenv("AWS_ACCESS_KEY_ID", "test")
	tb.Setenv("AWS_SECRET_ACCESS_KEY", "testsecret")
	tb.Setenv("AWS_REGION", "us-east-1")
	tb.Setenv("AWS_S3_USE_PATH_STYLE", "true")
	tb.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	// GDAL reads its settings from the environment: set them for this
	// server (an earlier test's server may have left others behind).
	for k, v := range storage.GDALConfig() {
		tb.Setenv(k, v)
	}
	storage.ResetClient()
	tb.Cleanup(storage.ResetClient)
	return srv, fl
}

// Download copies every object under prefix (an s3:// prefix or a local
// folder) into the local folder dir, keeping relative paths, and returns
// dir: tests compare an output written to S3 with one written locally.
func Download(ctx context.Context, prefix, dir string) (string, error) {
	fsys, err := storage.FS(ctx, prefix)
	if err != nil {
		return "", err
	}
	if err := os.CopyFS(dir, fsys); err != nil {
		return "", fmt.Errorf("download %s: %w", prefix, err)
	}
	return dir, nil
}
