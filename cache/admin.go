package cache

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/manejo/manejo/grid"
	"github.com/manejo/manejo/storage"
)

// Partition describes one file of a cache (Inspect).
type Partition struct {
	Location string
	Bytes    int64
	// Meta is the partition's metadata; nil when Err is set.
	Meta *Meta
	// First and Last are the dates of its first and last scene.
	First, Last string
	// Err says why the partition cannot be trusted (a run rebuilds it), or
	// that the file is a temporary one left by an interrupted write.
	Err error
}

// errTemporary marks the temporary files of interrupted local writes.
var errTemporary = errors.New("temporary file of an interrupted write")

// Inspect lists and checks every partition of the cache at loc, in
// location order.
func Inspect(ctx context.Context, loc string) ([]Partition, error) {
	root := storage.Join(loc, dir)
	files, err := storage.List(ctx, root)
	if err != nil {
		return nil, err
	}
	out := make([]Partition, 0, len(files))
	for _, f := range files {
		p := Partition{Location: f}
		base := path.Base(strings.ReplaceAll(f, "\\", "/"))
		if strings.HasPrefix(base, ".") && strings.Contains(base, ".tmp-") {
			p.Err = errTemporary
			out = append(out, p)
			continue
		}
		b, err := storage.ReadFile(ctx, f)
		if err != nil {
			if ctx.Err() != nil {
				return nil, err
			}
			p.Err = err
			out = append(out, p)
			continue
		}
		p.Bytes = int64(len(b))
		e, err := decode(b, "")
		if err == nil && !strings.HasSuffix(base, ".parquet") {
			err = fmt.Errorf("%w: not a partition name", ErrCorrupt)
		}
		if err == nil && path.Base(Open(loc).partition(e.Meta.FieldID)) != base {
			err = fmt.Errorf("%w: it holds talhão %q, whose partition is another file", ErrCorrupt, e.Meta.FieldID)
		}
		if err != nil {
			p.Err = err
		} else {
			p.Meta = &e.Meta
			for _, it := range e.Meta.Items {
				if p.First == "" || it.Date < p.First {
					p.First = it.Date
				}
				p.Last = max(p.Last, it.Date)
			}
		}
		out = append(out, p)
	}
	return out, nil
}

// PruneOptions say which partitions Prune removes. Corrupt or foreign
// partitions and temporary files of interrupted writes are always removed.
type PruneOptions struct {
	// OlderThan removes partitions written more than this long before Now
	// (0: no age limit).
	OlderThan time.Duration
	Now       time.Time
	// Fields, when set, is the portfolio (talhões file, read as by `manejo
	// run`, with IDField): partitions of talhões not in it are removed. A
	// feature that cannot be read but names its id keeps its partition.
	Fields, IDField string
	// DryRun lists what would be removed without removing it.
	DryRun bool
}

// Removed is a partition Prune removed (or would remove), and why.
type Removed struct {
	Location, FieldID, Reason string
}

// Prune removes the partitions o selects from the cache at loc and returns
// them. A run that needs a removed partition reads its talhão whole again.
func Prune(ctx context.Context, loc string, o PruneOptions) ([]Removed, error) {
	var keep map[string]bool
	if o.Fields != "" {
		var err error
		if keep, err = portfolio(ctx, o.Fields, o.IDField); err != nil {
			return nil, err
		}
	}
	parts, err := Inspect(ctx, loc)
	if err != nil {
		return nil, err
	}
	var out []Removed
	for _, p := range parts {
		r := Removed{Location: p.Location}
		switch {
		case p.Err != nil:
			r.Reason = p.Err.Error()
		case keep != nil && !keep[p.Meta.FieldID]:
			r.FieldID, r.Reason = p.Meta.FieldID, "talhão not in "+o.Fields
		case o.OlderThan > 0 && o.Now.Sub(p.Meta.WrittenAt) > o.OlderThan:
			r.FieldID, r.Reason = p.Meta.FieldID, fmt.Sprintf("written %s, more than %s ago", p.Meta.WrittenAt.Format(time.RFC3339), o.OlderThan)
		default:
			continue
		}
		if !o.DryRun {
			if err := storage.Remove(ctx, p.Location); err != nil {
				return out, err
			}
		}
		out = append(out, r)
	}
	return out, nil
}

// portfolio reads the ids of the talhões of a talhões file.
func portfolio(ctx context.Context, src, idField string) (map[string]bool, error) {
	fields, errs := grid.Read(ctx, src, grid.ReadOptions{IDField: idField})
	ids := map[string]bool{}
	for _, e := range errs {
		if errors.Is(e, grid.ErrSource) {
			return nil, e
		}
		var fe *grid.FieldError
		if errors.As(e, &fe) && fe.ID != "" {
			ids[fe.ID] = true
		}
	}
	for _, f := range fields {
		ids[f.ID] = true
	}
	return ids, nil
}
