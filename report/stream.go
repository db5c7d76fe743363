package report

import (
	"context"
	"errors"
	"io/fs"

	"github.com/manejo/manejo/export"
)

// group is the observations of one talhão from one part file.
type group struct {
	id   string
	rows []export.ObsRow
	err  error
}

// obsStreams walks the observation part files in parallel, one talhão at a
// time per file. Each part is sorted by field id, and a talhão lives in one
// part only (shards split by talhão), so asking for ids in increasing order
// visits every row once with one talhão per part in memory.
type obsStreams struct {
	heads  []*group
	chans  []chan group
	cancel context.CancelFunc
}

func openObsStreams(ctx context.Context, fsys fs.FS) (*obsStreams, error) {
	files, err := export.DatasetFiles(fsys, "observations")
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return &obsStreams{cancel: func() {}}, nil
		}
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	s := &obsStreams{cancel: cancel}
	for _, name := range files {
		ch := make(chan group, 1)
		s.chans = append(s.chans, ch)
		s.heads = append(s.heads, nil)
		go scanPart(ctx, fsys, name, ch)
	}
	return s, nil
}

// scanPart sends the groups of one part file on ch, then closes it.
func scanPart(ctx context.Context, fsys fs.FS, name string, ch chan<- group) {
	defer close(ch)
	var cur group
	send := func() bool {
		if cur.id == "" && len(cur.rows) == 0 {
			return true
		}
		select {
		case ch <- cur:
			return true
		case <-ctx.Done():
			return false
		}
	}
	err := export.ScanFS(fsys, name, 8192, func(rows []export.ObsRow) error {
		for _, r := range rows {
			if r.FieldID != cur.id && (cur.id != "" || len(cur.rows) > 0) {
				if !send() {
					return ctx.Err()
				}
				cur = group{}
			}
			cur.id = r.FieldID
			cur.rows = append(cur.rows, r)
		}
		return nil
	})
	if err != nil {
		select {
		case ch <- group{err: err}:
		case <-ctx.Done():
		}
		return
	}
	send()
}

// next returns the observations of talhão id; ids must come in increasing
// order. Groups of smaller ids (talhões without an indicator row) are
// skipped.
func (s *obsStreams) next(id string) ([]export.ObsRow, error) {
	var out []export.ObsRow
	for i, ch := range s.chans {
		for {
			if s.heads[i] == nil {
				g, ok := <-ch
				if !ok {
					break
				}
				if g.err != nil {
					return nil, g.err
				}
				s.heads[i] = &g
			}
			h := s.heads[i]
			if h.id < id {
				s.heads[i] = nil
				continue
			}
			if h.id == id {
				out = append(out, h.rows...)
				s.heads[i] = nil
			}
			break
		}
	}
	return out, nil
}

func (s *obsStreams) close() { s.cancel() }
