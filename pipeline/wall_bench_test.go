package pipeline

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/manejo/manejo/storage/s3test"
)

// wallSizes are the batch sizes BenchmarkDefaultWall compares: the
// default (64), a smaller one and one batch for the whole portfolio.
var wallSizes = []int{64, 16, 400}

// BenchmarkDefaultWall is issue 26's wall-time target: the default run of
// the dense portfolio (every input on a loopback S3 server, the read pass
// on, as BenchmarkReadOnce's after/ cases) within 1.2× of the best batch
// size. One untimed run warms the process up (GDAL, PROJ, the S3 server's
// first answers), then each round runs every batch size of wallSizes, the
// order rotating from round to round so that none always runs first;
// MANEJO_WALL_ROUNDS rounds (default 3). It reports each size's median
// wall time (the upper one for an even count of rounds) and the ratio of
// the default's median to the best median (and of the least to the
// least); run.json's timings of each run are logged, to tell the read
// pass (the same work at every batch size) from the batches. Runs of one
// batch size must write the same files, byte for byte.
func BenchmarkDefaultWall(b *testing.B) {
	dir := benchArchiveDir(b, denseArchive)
	var cnt cogCounter
	serveArchive(b, s3test.Faults{Match: cnt.match}, "dense", dir)
	rounds := 3
	if v, err := strconv.Atoi(os.Getenv("MANEJO_WALL_ROUNDS")); err == nil && v > 0 {
		rounds = v
	}
	outs := b.TempDir()
	walls := map[int][]time.Duration{}
	refs := map[int]string{}
	for range b.N {
		runDense(b, readCase{"warm-up", 0, 1, ReadPassAuto, ShardBySpace}, &cnt, "s3://dense/archive", filepath.Join(outs, "warm"))
		os.RemoveAll(filepath.Join(outs, "warm"))
		for round := range rounds {
			for k := range wallSizes {
				size := wallSizes[(k+round)%len(wallSizes)]
				name := fmt.Sprintf("batch=%d/round=%d", size, round+1)
				out := filepath.Join(outs, fmt.Sprintf("b%d-r%d", size, round))
				r := runDense(b, readCase{name, size, 1, ReadPassAuto, ShardBySpace}, &cnt, "s3://dense/archive", out)
				walls[size] = append(walls[size], r.wall)
				b.Logf("%s: %.2f s, %.0f MB, %d GETs", name, r.wall.Seconds(), float64(r.bytes)/1e6, r.requests)
				if refs[size] == "" {
					refs[size] = out
				} else {
					sameOutputs(b, name, refs[size], out)
					os.RemoveAll(out)
				}
			}
		}
	}
	med, least := map[int]time.Duration{}, map[int]time.Duration{}
	for _, size := range wallSizes {
		w := slices.Clone(walls[size])
		slices.Sort(w)
		med[size], least[size] = w[len(w)/2], w[0]
	}
	bestMed, bestLeast := med[wallSizes[0]], least[wallSizes[0]]
	for _, size := range wallSizes {
		bestMed, bestLeast = min(bestMed, med[size]), min(bestLeast, least[size])
		b.ReportMetric(med[size].Seconds(), fmt.Sprintf("s_median/batch=%d", size))
		b.Logf("batch size %3d: walls %v, median %.2f s", size, walls[size], med[size].Seconds())
	}
	def := wallSizes[0]
	b.ReportMetric(med[def].Seconds()/bestMed.Seconds(), "default/best_median")
	b.ReportMetric(least[def].Seconds()/bestLeast.Seconds(), "default/best_least")
	b.Logf("default (batch %d) / best: %.2f× (medians), %.2f× (least)", def, med[def].Seconds()/bestMed.Seconds(), least[def].Seconds()/bestLeast.Seconds())
}
