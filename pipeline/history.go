package pipeline

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/manejo/manejo/classify"
	"github.com/manejo/manejo/coverage"
	"github.com/manejo/manejo/storage"
)

// startCrops starts reading the crop history file; nil when there is none.
func (r *run) startCrops(ctx context.Context) *later[[]byte] {
	if r.cfg.Crops == "" {
		return nil
	}
	return goLater(func() ([]byte, error) { return storage.ReadFile(ctx, r.cfg.Crops) })
}

// readCrops reads the declared crop history, when given (--crops, the
// table `manejo classify --crops` reads, through classify.ReadHistory):
// coverage reads each season's straw with the residue of the crop that
// ended last before its sowing (coverage.AssessHistory). An unreadable
// table is an error; a talhão with a bad row declares nothing (its
// seasons read as without the file) and, like ids that are not talhões
// of the input (known), is a warning in run.json and on the progress
// output. raw is the file's read, started by startCrops.
func (r *run) readCrops(in *inputs, known []string, raw *later[[]byte]) error {
	src := r.cfg.Crops
	if src == "" {
		return nil
	}
	b, err := raw.get()
	if err != nil {
		return fmt.Errorf("read crop history: %w", err)
	}
	in.finger[src] = sha(b)
	h, bad, err := classify.ReadHistory(classify.File{Name: src, R: bytes.NewReader(b)})
	if err != nil {
		return fmt.Errorf("%w: crop history %s: %v", ErrConfig, src, err)
	}
	var warn []string
	for id, msgs := range bad {
		warn = append(warn, fmt.Sprintf("crop history: talhão %q declares no residue (its seasons read as undeclared): %s", id, strings.Join(msgs, "; ")))
		delete(h, id)
	}
	in.history = make(map[string]coverage.History, len(h))
	for id, ps := range h {
		if !slices.Contains(known, id) {
			warn = append(warn, fmt.Sprintf("%s: talhão %q is not among the talhões of the run; its crop history is not used", src, id))
			continue
		}
		in.history[id] = historyOf(ps)
	}
	sort.Strings(warn)
	for _, w := range warn {
		r.m.Warnings = append(r.m.Warnings, w)
		r.logf("%s", w)
	}
	return nil
}

// historyOf is a talhão's crop history as coverage reads it.
func historyOf(ps []classify.Planting) coverage.History {
	h := make(coverage.History, len(ps))
	for i, p := range ps {
		h[i] = coverage.Planting{Crop: p.Crop, Species: p.Species, Purpose: string(p.Purpose), Start: p.Start, End: p.End}
	}
	return h
}
