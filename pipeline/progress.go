package pipeline

import (
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/manejo/manejo/internal/num"
	"github.com/manejo/manejo/storage"
)

// Progress is a snapshot of a run, passed to Config.OnProgress when the run
// starts computing, at least every Config.ProgressEvery while the read
// pass or a batch runs, after every batch and at the end.
type Progress struct {
	Shard Shard
	// Phase is "start", "read" (the read pass), "batch" (between and
	// during batches) or "done".
	Phase   string
	Batch   int // batches finished (computed or resumed)
	Batches int // batches of this shard
	Done    int // talhões finished
	Total   int // talhões of this shard
	OK      int
	Partial int
	Failed  int
	// ScenesRead counts scene reads (a scene read by two batches counts
	// twice), and Observations the cell observations sampled.
	ScenesRead   int64
	Observations int64
	Incomplete   int // talhões lacking scenes that failed transiently
	// BytesRead is what GDAL has received from object stores since this
	// run started (scenes and DEM, read pass and batches; live: GDAL's
	// network statistics), MBps is BytesRead per second since then (MB =
	// 10⁶ bytes). Local files are not counted.
	BytesRead int64
	MBps      float64
	// ReadDone and ReadTotal are the talhões whose scenes the read pass has
	// read and is to read (0 and 0 without a read pass).
	ReadDone, ReadTotal int
	Resumed             bool          // the last batch came from a previous run
	Elapsed             time.Duration // since Run started
	// Rate is talhões per second over the batches computed by this run
	// (resumed batches are free and left out); ETA follows from it.
	Rate float64
	ETA  time.Duration
}

// tracker turns the run's steps into Progress snapshots. Its fields are
// guarded by mu: the ticker (run.tickProgress) reads them while the run
// goes on.
type tracker struct {
	mu          sync.Mutex
	start       time.Time
	net0        int64         // GDAL's bytes received when the run started
	computed    int           // talhões computed (not resumed) by this run
	computeTime time.Duration // wall time spent on computed batches
	// since is when the running batch, or the read pass, began (zero
	// between batches); readFrac is the share of the current read group
	// read so far, readGroup its talhões.
	since     time.Time
	readFrac  func() float64
	readGroup int
	// liveScenes counts the scenes of the read under way (the read pass),
	// not yet in p.ScenesRead.
	liveScenes func() int64
	p          Progress
}

func newTracker(start time.Time, p Progress) *tracker {
	return &tracker{start: start, net0: netBytes(), p: p}
}

// netBytes is what GDAL has received from remote files since the process
// started.
func netBytes() int64 {
	var n int64
	for _, s := range storage.GDALNetStats() {
		n += s.Bytes
	}
	return n
}

func (t *tracker) batch(n int, took time.Duration, resumed bool) {
	t.p.Batch++
	t.p.Done += n
	t.p.Resumed = resumed
	if !resumed {
		t.computed += n
		t.computeTime += took
	}
	t.since = time.Time{}
	t.update()
}

// update refreshes the live figures: elapsed time, bytes, rate and ETA.
// During the read pass the rate is talhões read per second and the ETA
// that of the read pass; during the batches, talhões computed per second
// of computed batches and the ETA of the rest, less the time the running
// batch has already taken.
func (t *tracker) update() {
	t.p.Elapsed = time.Since(t.start)
	t.p.BytesRead = max(netBytes()-t.net0, 0)
	t.p.Rate, t.p.ETA, t.p.MBps = 0, 0, 0
	if s := t.p.Elapsed.Seconds(); s > 0 {
		t.p.MBps = float64(t.p.BytesRead) / 1e6 / s
	}
	if t.p.Phase == "read" && !t.since.IsZero() {
		done := float64(t.p.ReadDone)
		if t.readFrac != nil {
			done += t.readFrac() * float64(t.readGroup)
		}
		if took := time.Since(t.since).Seconds(); done > 0 && took > 0 {
			t.p.Rate = done / took
			t.p.ETA = time.Duration((float64(t.p.ReadTotal) - done) / t.p.Rate * float64(time.Second)).Round(time.Second)
		}
		return
	}
	if t.computed > 0 && t.computeTime > 0 {
		t.p.Rate = float64(t.computed) / t.computeTime.Seconds()
		left := float64(t.p.Total-t.p.Done) / t.p.Rate
		if !t.since.IsZero() {
			left -= time.Since(t.since).Seconds()
		}
		t.p.ETA = time.Duration(max(left, 0) * float64(time.Second)).Round(time.Second)
	}
}

// snapshot returns the live Progress.
func (t *tracker) snapshot() Progress {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.update()
	p := t.p
	if p.Phase == "read" && t.liveScenes != nil {
		p.ScenesRead += t.liveScenes()
	}
	return p
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
			slog.String("phase", p.Phase), slog.Int("read_done", p.ReadDone), slog.Int("read_total", p.ReadTotal),
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
	done, total, what := p.Done, p.Total, "talhões"
	if p.Phase == "read" && p.ReadTotal > 0 {
		done, total, what = p.ReadDone, p.ReadTotal, "talhões read ahead"
	}
	if total > 0 {
		frac = float64(done) / float64(total)
	}
	full := int(frac * cols)
	bar := strings.Repeat("█", full) + strings.Repeat("░", cols-full)
	eta := "—"
	if p.Rate > 0 && done < total {
		eta = max(p.ETA-since, 0).Round(time.Second).String()
	} else if done >= total {
		eta = "0s"
	}
	s := fmt.Sprintf("shard %s %s %3.0f%% %d/%d %s · %d scenes read · %.1f MB/s · %.2f talhões/s · ETA %s · %s",
		p.Shard, bar, 100*frac, done, total, what, p.ScenesRead, p.MBps, p.Rate, eta, (p.Elapsed + since).Round(time.Second))
	if p.Failed > 0 {
		s += fmt.Sprintf(" · %d failed", p.Failed)
	}
	if p.Incomplete > 0 {
		s += fmt.Sprintf(" · %d incomplete", p.Incomplete)
	}
	return s
}

// tickProgress reports the live progress every Config.ProgressEvery until
// the returned function is called: to OnProgress when set, else as a line
// on Progress and Log.
func (r *run) tickProgress() func() {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(r.cfg.ProgressEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				p := r.tr.snapshot()
				if r.cfg.OnProgress != nil {
					r.cfg.OnProgress(p)
					continue
				}
				what := fmt.Sprintf("running batch %d of %d: %d/%d talhões done", p.Batch+1, p.Batches, p.Done, p.Total)
				if p.Phase == "read" {
					what = fmt.Sprintf("read pass: scenes of %d/%d talhões read", p.ReadDone, p.ReadTotal)
				}
				r.logf("%s, %d scenes read, %.1f MB read (%.1f MB/s), %.2f talhões/s, eta %s", what, p.ScenesRead, float64(p.BytesRead)/1e6, p.MBps, p.Rate, p.ETA)
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}
