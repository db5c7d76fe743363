package pipeline

import (
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/manejo/manejo/export"
	"github.com/manejo/manejo/internal/num"
)

// Progress is a snapshot of a run, passed to Config.OnProgress when the run
// starts computing, after every batch and when it ends.
type Progress struct {
	Shard   Shard
	Phase   string // "start", "batch" or "done"
	Batch   int    // batches finished (computed or resumed)
	Batches int    // batches of this shard
	Done    int    // talhões finished
	Total   int    // talhões of this shard
	OK      int
	Partial int
	Failed  int
	// ScenesRead counts scene reads (a scene read by two batches counts
	// twice), and Observations the cell observations sampled.
	ScenesRead   int64
	Observations int64
	Incomplete   int // talhões lacking scenes that failed transiently
	// BytesRead is what GDAL received from object stores for the batches
	// computed by this run; MBps is BytesRead per second of their wall time
	// (MB = 10⁶ bytes). Local files are not counted.
	BytesRead int64
	MBps      float64
	Resumed   bool          // the last batch came from a previous run
	Elapsed   time.Duration // since Run started
	// Rate is talhões per second over the batches computed by this run
	// (resumed batches are free and left out); ETA follows from it.
	Rate float64
	ETA  time.Duration
}

// tracker turns batch results into Progress snapshots.
type tracker struct {
	start       time.Time
	computed    int           // talhões computed (not resumed) by this run
	computeTime time.Duration // wall time spent on computed batches
	p           Progress
}

func (t *tracker) batch(n int, took time.Duration, resumed bool) {
	t.p.Batch++
	t.p.Done += n
	t.p.Resumed = resumed
	if !resumed {
		t.computed += n
		t.computeTime += took
	}
	t.update()
}

func (t *tracker) update() {
	t.p.Elapsed = time.Since(t.start)
	t.p.Rate, t.p.ETA = 0, 0
	if t.computeTime > 0 {
		t.p.MBps = float64(t.p.BytesRead) / 1e6 / t.computeTime.Seconds()
	}
	if t.computed > 0 && t.computeTime > 0 {
		t.p.Rate = float64(t.computed) / t.computeTime.Seconds()
		t.p.ETA = time.Duration(float64(t.p.Total-t.p.Done) / t.p.Rate * float64(time.Second)).Round(time.Second)
	}
}

// LogProgress returns an OnProgress function that writes structured records
// (log/slog): one per batch at level INFO with shard, batch, batches, done,
// total, ok, partial, failed, scenes_read, rate (talhões/s) and eta
// (seconds), and a final "run finished" summary.
func LogProgress(l *slog.Logger) func(Progress) {
	return func(p Progress) {
		attrs := []any{
			slog.String("shard", p.Shard.String()),
			slog.Int("batch", p.Batch), slog.Int("batches", p.Batches),
			slog.Int("done", p.Done), slog.Int("total", p.Total),
			slog.Int("ok", p.OK), slog.Int("partial", p.Partial), slog.Int("failed", p.Failed),
			slog.Int64("scenes_read", p.ScenesRead), slog.Int64("observations", p.Observations),
			slog.Int("incomplete", p.Incomplete), slog.Int64("bytes_read", p.BytesRead), slog.Float64("mb_per_s", num.Round(p.MBps, 2)),
			slog.Float64("rate", num.Round(p.Rate, 2)), slog.Float64("eta", p.ETA.Seconds()),
			slog.Float64("elapsed", num.Round(p.Elapsed.Seconds(), 2)),
		}
		switch p.Phase {
		case "start":
			l.Info("run started", attrs...)
		case "done":
			l.Info("run finished", attrs...)
		default:
			l.Info("progress", append(attrs, slog.Bool("resumed", p.Resumed))...)
		}
	}
}

// Bar is a one-line progress bar for a terminal, redrawn in place with a
// carriage return: talhões done/total, scene reads, rate and ETA. Text
// written to the Bar (log lines) is printed above it. Close it when the run
// ends.
type Bar struct {
	mu     sync.Mutex
	w      io.Writer
	last   Progress
	at     time.Time
	shown  bool
	width  int // columns of the last line drawn
	stop   chan struct{}
	closed sync.Once
	wg     sync.WaitGroup
}

// NewBar starts a bar on w (a terminal) that also refreshes its elapsed
// time and ETA every second.
func NewBar(w io.Writer) *Bar {
	b := &Bar{w: w, stop: make(chan struct{})}
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-b.stop:
				return
			case <-t.C:
				b.mu.Lock()
				if b.shown {
					b.draw()
				}
				b.mu.Unlock()
			}
		}
	}()
	return b
}

// Update is the OnProgress function of the bar.
func (b *Bar) Update(p Progress) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.last, b.at, b.shown = p, time.Now(), true
	b.draw()
	if p.Phase == "done" {
		fmt.Fprintln(b.w)
		b.shown, b.width = false, 0
	}
}

// Write prints log lines above the bar.
func (b *Bar) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.width > 0 {
		fmt.Fprintf(b.w, "\r%s\r", strings.Repeat(" ", b.width))
	}
	n, err := b.w.Write(p)
	if b.shown {
		b.draw()
	}
	return n, err
}

// Close stops the refresh and ends the bar's line.
func (b *Bar) Close() {
	b.closed.Do(func() {
		close(b.stop)
		b.wg.Wait()
		b.mu.Lock()
		if b.shown {
			fmt.Fprintln(b.w)
			b.shown = false
		}
		b.mu.Unlock()
	})
}

// draw writes the bar; b.mu is held.
func (b *Bar) draw() {
	line := barLine(b.last, time.Since(b.at))
	pad := ""
	if n := b.width - len([]rune(line)); n > 0 {
		pad = strings.Repeat(" ", n)
	}
	fmt.Fprintf(b.w, "\r%s%s", line, pad)
	b.width = len([]rune(line))
}

// barLine renders a snapshot taken since ago.
func barLine(p Progress, since time.Duration) string {
	const cols = 24
	frac := 0.0
	if p.Total > 0 {
		frac = float64(p.Done) / float64(p.Total)
	}
	full := int(frac * cols)
	bar := strings.Repeat("█", full) + strings.Repeat("░", cols-full)
	eta := "—"
	if p.Rate > 0 && p.Done < p.Total {
		eta = max(p.ETA-since, 0).Round(time.Second).String()
	} else if p.Done >= p.Total {
		eta = "0s"
	}
	s := fmt.Sprintf("shard %s %s %3.0f%% %d/%d talhões · %d scenes read · %.1f MB/s · %.2f talhões/s · ETA %s · %s",
		p.Shard, bar, 100*frac, p.Done, p.Total, p.ScenesRead, p.MBps, p.Rate, eta, (p.Elapsed + since).Round(time.Second))
	if p.Failed > 0 {
		s += fmt.Sprintf(" · %d failed", p.Failed)
	}
	if p.Incomplete > 0 {
		s += fmt.Sprintf(" · %d incomplete", p.Incomplete)
	}
	return s
}

// ioBytes is the bytes received over every collection.
func ioBytes(io map[string]export.IO) int64 {
	var n int64
	for _, v := range io {
		n += v.Bytes
	}
	return n
}
