package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/manejo/manejo/cache"
)

func init() {
	register(&command{name: "cache", synopsis: "the observation cache of scheduled runs: inspect it, prune it", run: runCache})
}

const cacheUsage = `cache inspect --cache DIR|s3://bucket/prefix/
       manejo cache prune --cache DIR|s3://bucket/prefix/ [--older-than 90d] [--fields F [--id-field id]] [--dry-run]

inspect prints one line per talhão partition: the talhão, its scenes and
observations, first and last scene date, when it was written, its size, or
why it cannot be trusted (a run reads such a talhão whole and rebuilds it).

prune removes the partitions written more than --older-than ago (90d, or
a Go duration such as 2160h), those of talhões not in the --fields
portfolio (refused when no feature of it has the --id-field), and always
the corrupt ones and the temporary files of interrupted writes. It removes
only files manejo writes (talhao=<hash>.parquet in observations-v1/): any
other file there is listed and left alone. A run needing a removed
partition reads its talhão whole. See docs/cache.md.`

func runCache(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprintf(stderr, "Usage: manejo %s\n", cacheUsage)
		return usagef("missing subcommand (inspect or prune)")
	}
	switch args[0] {
	case "inspect":
		return runCacheInspect(ctx, args[1:], stdout, stderr)
	case "prune":
		return runCachePrune(ctx, args[1:], stdout, stderr)
	case "-h", "-help", "--help", "help":
		fmt.Fprintf(stderr, "Usage: manejo %s\n", cacheUsage)
		return nil
	}
	return usagef("unknown subcommand %q (want inspect or prune)", args[0])
}

func runCacheInspect(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("cache inspect", cacheUsage, stderr)
	loc := fs.String("cache", "", "the cache: local folder or s3://bucket/prefix/ (required)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := cacheLocation(*loc); err != nil {
		return err
	}
	parts, err := cache.Inspect(ctx, *loc)
	if err != nil {
		return err
	}
	var bytes int64
	bad, foreign := 0, 0
	for _, p := range parts {
		bytes += p.Bytes
		switch {
		case errors.Is(p.Err, cache.ErrForeign):
			foreign++
			fmt.Fprintf(stdout, "%s: %v\n", printable(p.Location), p.Err)
			continue
		case p.Err != nil:
			bad++
			fmt.Fprintf(stdout, "%s: %s\n", printable(p.Location), printable(p.Err.Error()))
			continue
		}
		m := p.Meta
		fmt.Fprintf(stdout, "%s: %d scenes %s..%s, %d observations, version %s, written %s, %d bytes (%s)\n",
			printable(m.FieldID), len(m.Items), p.First, p.Last, m.Rows, m.Version, m.WrittenAt.Format(time.RFC3339), p.Bytes, p.Location)
	}
	fmt.Fprintf(stdout, "%d partitions (%d not usable), %d bytes", len(parts)-foreign, bad, bytes)
	if foreign > 0 {
		fmt.Fprintf(stdout, "; %d other file(s) manejo did not write, left alone", foreign)
	}
	fmt.Fprintln(stdout)
	return nil
}

// cacheLocation checks --cache: required, a local folder or s3://.
func cacheLocation(loc string) error {
	if loc == "" {
		return usagef("--cache is required")
	}
	return writableLoc("--cache", loc)
}

func runCachePrune(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("cache prune", cacheUsage, stderr)
	loc := fs.String("cache", "", "the cache: local folder or s3://bucket/prefix/ (required)")
	older := fs.String("older-than", "", "remove partitions written longer ago than this: days (90d) or a Go duration (2160h)")
	var o cache.PruneOptions
	talhoesFlags(fs, &o.Fields, &o.IDField)
	fs.BoolVar(&o.DryRun, "dry-run", false, "list what would be removed, remove nothing")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := cacheLocation(*loc); err != nil {
		return err
	}
	if *older != "" {
		d, err := parseAge(*older)
		if err != nil {
			return usagef("--older-than %q: %v", *older, err)
		}
		o.OlderThan = d
	}
	if o.Fields != "" {
		if err := checkIDField(o.IDField); err != nil {
			return err
		}
		if err := inputExists(ctx, "--fields", o.Fields); err != nil {
			return err
		}
	}
	o.Now = time.Now()
	res, err := cache.Prune(ctx, *loc, o)
	if errors.Is(err, cache.ErrPortfolio) {
		return usagef("%v", err)
	}
	printPruned(stdout, res, o.DryRun)
	return err
}

// printPruned prints one line per removed partition, naming its talhão
// when it has one, one per file left alone, and the counts.
func printPruned(w io.Writer, res cache.Pruned, dry bool) {
	verb := "removed"
	if dry {
		verb = "would remove"
	}
	for _, r := range res.Removed {
		if r.FieldID != "" {
			fmt.Fprintf(w, "%s talhão %s (%s): %s\n", verb, printable(r.FieldID), printable(path.Base(filepath.ToSlash(r.Location))), printable(r.Reason))
			continue
		}
		fmt.Fprintf(w, "%s %s: %s\n", verb, printable(r.Location), printable(r.Reason))
	}
	for _, f := range res.Foreign {
		fmt.Fprintf(w, "left alone %s: %v\n", printable(f), cache.ErrForeign)
	}
	fmt.Fprintf(w, "%s %d partitions", verb, len(res.Removed))
	if len(res.Foreign) > 0 {
		fmt.Fprintf(w, "; %d other file(s) manejo did not write left alone", len(res.Foreign))
	}
	fmt.Fprintln(w)
}

// parseAge reads days ("90d") or a Go duration ("2160h"); it must be
// positive. A bare number is refused with the hint: it has no unit.
func parseAge(s string) (time.Duration, error) {
	var d time.Duration
	if n, ok := strings.CutSuffix(s, "d"); ok {
		days, err := strconv.Atoi(n)
		if err != nil {
			return 0, fmt.Errorf("want a number of days, e.g. 90d")
		}
		d = time.Duration(days) * 24 * time.Hour
	} else if _, err := strconv.ParseFloat(s, 64); err == nil {
		return 0, fmt.Errorf("no unit: write %sd for %s days, or a Go duration such as 2160h", s, s)
	} else if d, err = time.ParseDuration(s); err != nil {
		return 0, fmt.Errorf("%v: want days (90d) or a Go duration (2160h)", err)
	}
	if d <= 0 {
		return 0, fmt.Errorf("want a positive age")
	}
	return d, nil
}
