package pipeline

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/manejo/manejo/storage"
)

// TestInputDeadlines (issue 19 item d): a talhões file or a DEM that never
// answers — here a FIFO nobody writes, which blocks its open forever and
// which no GDAL HTTP timeout covers — ends the run at storage.CallTimeout
// with an error naming the input, instead of hanging it. The DEM's is a
// configuration error (exit 2).
func TestInputDeadlines(t *testing.T) {
	dir := archive(t)
	old := storage.CallTimeout
	storage.CallTimeout = 300 * time.Millisecond
	defer func() { storage.CallTimeout = old }()
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
