package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/manejo/manejo/export"
	"github.com/manejo/manejo/storage"
)

// TestInputDeadlines (issue 19 item d): a talhões file or a DEM that never
// answers — here a FIFO nobody writes, which blocks its open forever and
// which no GDAL HTTP timeout covers — ends the run at storage.CallTimeout
// with an error naming the input, instead of hanging it. The DEM's is a
// configuration error (exit 2).
func TestInputDeadlines(t *testing.T) {
	dir := archive(t)
	for _, which := range []string{"fields", "dem"} {
		t.Run(which, func(t *testing.T) {
			fifo := filepath.Join(t.TempDir(), map[string]string{"fields": "talhoes.geojson", "dem": "dem.tif"}[which])
			if err := syscall.Mkfifo(fifo, 0o644); err != nil {
				t.Skip("no FIFO:", err)
			}
			defer func() { // let the abandoned open return
				if w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
					w.Close()
				}
			}()
			cfg := baseConfig(t, dir, t.TempDir())
			cfg.callTimeout = 300 * time.Millisecond
			if which == "fields" {
				cfg.Fields = fifo
			} else {
				cfg.DEM = fifo
			}
			t0 := time.Now()
			_, err := Run(context.Background(), cfg)
			if !errors.Is(err, storage.ErrDeadline) && !strings.Contains(fmtErr(err), storage.ErrDeadline.Error()) {
				t.Fatalf("run with a %s that never answers: %v, want a deadline error", which, err)
			}
			if !strings.Contains(err.Error(), fifo) || time.Since(t0) > 30*time.Second {
				t.Errorf("error %q after %s: want the input named, within seconds", err, time.Since(t0))
			}
			if which == "dem" && !errors.Is(err, ErrConfig) {
				t.Errorf("DEM deadline: %v, want a configuration error", err)
			}
		})
	}
}

func fmtErr(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestDEMReadDeadline (issue 19 item d): a DEM that opens and then stops
// answering — an HTTP server that serves the GeoTIFF's header and never
// the tiles — leaves each talhão's slope unread with the deadline as its
// reason instead of hanging the run: the first reads end at
// storage.CallTimeout, the talhões after them skip the DEM (the abandoned
// read still holds it), and the run finishes. Those talhões are
// incomplete (review #6: a transient DEM failure; exit 4, run again), not
// partial as before.
func TestDEMReadDeadline(t *testing.T) {
	dir := archive(t)
	dem, err := os.ReadFile(filepath.Join(dir, "dem.tif"))
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var from int
		if rg := r.Header.Get("Range"); rg != "" {
			fmt.Sscanf(rg, "bytes=%d-", &from)
		}
		if from >= 16384 { // past the header: the tiles never come
			select {
			case <-release:
			case <-r.Context().Done():
			}
			return
		}
		http.ServeContent(w, r, "dem.tif", time.Time{}, bytes.NewReader(dem))
	}))
	defer srv.Close()
	defer close(release)
	cfg := baseConfig(t, dir, t.TempDir())
	cfg.callTimeout = 5 * time.Second // the open (header only, loopback) must fit in it on a loaded machine
	cfg.DEM = srv.URL + "/dem.tif"
	t0 := time.Now()
	sum, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	m, err := readManifest(context.Background(), filepath.Join(cfg.Out, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	deadline, skipped := 0, 0
	for _, f := range m.Failures {
		switch {
		case strings.Contains(f.Reason, "slope: read the DEM window: "+storage.ErrDeadline.Error()):
			deadline++
		case strings.Contains(f.Reason, "slope: the DEM stopped answering"):
			skipped++
		default:
			continue
		}
		if f.Status != export.StatusIncomplete || f.Stage != "slope" {
			t.Errorf("%s: %s at stage %q (%s); want incomplete for its slope", f.FieldID, f.Status, f.Stage, f.Reason)
		}
	}
	if sum.Incomplete != deadline+skipped {
		t.Errorf("%d talhões incomplete, want the %d the DEM failed", sum.Incomplete, deadline+skipped)
	}
	t.Logf("%s: %d talhões at the deadline, %d skipping the DEM, %d in all", time.Since(t0).Round(time.Millisecond), deadline, skipped, sum.Total)
	if deadline == 0 || deadline > cfg.Workers || deadline+skipped < sum.Total-sum.Failed || time.Since(t0) > 2*time.Minute {
		t.Errorf("after %s: %d talhões at the deadline, %d skipping the DEM, of %d (%d failed); want at most %d at the deadline and every other skipping (failures %+v)",
			time.Since(t0), deadline, skipped, sum.Total, sum.Failed, cfg.Workers, m.Failures)
	}
}
