package cache

import (
	"context"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/manejo/manejo/grid"
	"github.com/manejo/manejo/storage"
)

// Partition describes one file under a cache's partition folder (Inspect).
type Partition struct {
	Location string
	Bytes    int64
	// Meta is the partition's metadata; nil when Err is set.
	Meta *Meta
	// First and Last are the dates of its first and last scene.
	First, Last string
	// Err says why the partition cannot be trusted (a run rebuilds it), or
	// that the file is a temporary one left by an interrupted write, or
	// (ErrForeign) that manejo did not write it.
	Err error
}

// errTemporary marks the temporary files of interrupted local writes.
var errTemporary = errors.New("temporary file of an interrupted write")

// ErrForeign marks a file under the partition folder that manejo does not
// write: not named as a partition (talhao=<32 hex digits>.parquet) or the
// temporary file of one, or in a sub-folder. Prune leaves it alone.
var ErrForeign = errors.New("not a file manejo writes: left alone")

// ErrPortfolio is returned (wrapped) by Prune for a --fields portfolio that
// cannot select partitions: no feature of it has an id.
var ErrPortfolio = errors.New("cache: unusable portfolio")

// Names of the files manejo writes in the partition folder: partitions
// (Cache.partition) and the temporary files of their local writes
// (storage.CreateTemp: ".<name>.tmp-<random>").
var (
	partitionName = regexp.MustCompile(`^talhao=[0-9a-f]{32}\.parquet$`)
	temporaryName = regexp.MustCompile(`^\.talhao=[0-9a-f]{32}\.parquet\.tmp-[0-9]+$`)
)

// Inspect lists every file under the partition folder of the cache at loc,
// in location order, and checks those manejo writes (the others are
// flagged ErrForeign, unread).
func Inspect(ctx context.Context, loc string) ([]Partition, error) {
	root := storage.Join(loc, dir)
	files, err := storage.List(ctx, root)
	if err != nil {
		return nil, err
	}
	out := make([]Partition, 0, len(files))
	for _, f := range files {
		p := Partition{Location: f}
		switch name := relName(root, f); {
		case temporaryName.MatchString(name):
			p.Err = errTemporary
		case !partitionName.MatchString(name):
			p.Err = ErrForeign
		default:
			if err := inspectPartition(ctx, loc, name, &p); err != nil {
				return nil, err
			}
		}
		out = append(out, p)
	}
	return out, nil
}

// relName is the name of file f relative to the folder root, with "/"
// separators (a file in a sub-folder has one).
func relName(root, f string) string {
	rel := strings.TrimPrefix(f, root)
	if storage.KindOf(root) == storage.Local {
		if r, err := filepath.Rel(root, f); err == nil {
			rel = r
		}
	}
	return strings.TrimPrefix(filepath.ToSlash(rel), "/")
}

// inspectPartition reads and checks the partition p named name; the error
// is a cancelled context, anything else is recorded in p.Err.
func inspectPartition(ctx context.Context, loc, name string, p *Partition) error {
	b, err := storage.ReadFile(ctx, p.Location)
	if err != nil {
		if ctx.Err() != nil {
			return err
		}
		p.Err = err
		return nil
	}
	p.Bytes = int64(len(b))
	e, err := decode(b, "")
	if err == nil && path.Base(Open(loc).partition(e.Meta.FieldID)) != name {
		err = fmt.Errorf("%w: it holds talhão %q, whose partition is another file", ErrCorrupt, e.Meta.FieldID)
	}
	if err != nil {
		p.Err = err
		return nil
	}
	p.Meta = &e.Meta
	for _, it := range e.Meta.Items {
		if p.First == "" || it.Date < p.First {
			p.First = it.Date
		}
		p.Last = max(p.Last, it.Date)
	}
	return nil
}

// PruneOptions say which partitions Prune removes. Corrupt partitions and
// temporary files of interrupted writes are always removed; files manejo
// does not write (ErrForeign) never are.
type PruneOptions struct {
	// OlderThan removes partitions written more than this long before Now
	// (0: no age limit).
	OlderThan time.Duration
	Now       time.Time
	// Fields, when set, is the portfolio (talhões file, read as by `manejo
	// run`, with IDField): partitions of talhões not in it are removed. A
	// feature that cannot be read but names its id keeps its partition. A
	// file in which no feature has an id is refused (ErrPortfolio).
	Fields, IDField string
	// DryRun lists what would be removed without removing it.
	DryRun bool
}

// Removed is a partition Prune removed (or would remove), and why; FieldID
// is "" when the file names no talhão (corrupt, temporary).
type Removed struct {
	Location, FieldID, Reason string
}

// Pruned is what Prune did: the files it removed (or would remove) and
// the files under the partition folder it left alone because manejo does
// not write them (ErrForeign).
type Pruned struct {
	Removed []Removed
	Foreign []string
}

// Prune removes the partitions o selects from the cache at loc. A run that
// needs a removed partition reads its talhão whole again. On a failed
// removal it returns what it did until then, and the error.
func Prune(ctx context.Context, loc string, o PruneOptions) (Pruned, error) {
	var out Pruned
	var keep map[string]bool
	if o.Fields != "" {
		var err error
		if keep, err = portfolio(ctx, o.Fields, o.IDField); err != nil {
			return out, err
		}
	}
	parts, err := Inspect(ctx, loc)
	if err != nil {
		return out, err
	}
	for _, p := range parts {
		r := Removed{Location: p.Location}
		switch {
		case errors.Is(p.Err, ErrForeign):
			out.Foreign = append(out.Foreign, p.Location)
			continue
		case p.Err != nil:
			r.Reason = p.Err.Error()
		case keep != nil && !keep[p.Meta.FieldID]:
			r.FieldID, r.Reason = p.Meta.FieldID, "talhão not in "+o.Fields
		case o.OlderThan > 0 && o.Now.Sub(p.Meta.WrittenAt) > o.OlderThan:
			r.FieldID, r.Reason = p.Meta.FieldID, fmt.Sprintf("written %s, more than %s ago", p.Meta.WrittenAt.Format(time.RFC3339), age(o.OlderThan))
		default:
			continue
		}
		if !o.DryRun {
			if err := storage.Remove(ctx, p.Location); err != nil {
				return out, err
			}
		}
		out.Removed = append(out.Removed, r)
	}
	return out, nil
}

// age writes a duration of whole days as days ("90 days"), any other as Go
// does.
func age(d time.Duration) string {
	const day = 24 * time.Hour
	if d%day == 0 {
		return fmt.Sprintf("%d days", d/day)
	}
	return d.String()
}

// portfolio reads the ids of the talhões of a talhões file. A file that
// gives no id at all (no feature, or none with idField) would select every
// partition for removal: it is refused.
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
	if len(ids) == 0 {
		return nil, fmt.Errorf("%w: --fields %s: no feature has an id in property %q (--id-field; %d features, none with it): pruning by it would remove every partition",
			ErrPortfolio, src, idField, len(fields)+len(errs))
	}
	return ids, nil
}
