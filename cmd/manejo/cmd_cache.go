package main

import (
	"context"
	"fmt"
	"io"
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

prune removes the partitions written more than --older-than ago, those of
talhões not in the --fields portfolio, and always the corrupt ones and the
temporary files of interrupted writes. A run needing a removed partition
reads its talhão whole. See docs/cache.md.`

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
	if *loc == "" {
		return usagef("--cache is required")
	}
	parts, err := cache.Inspect(ctx, *loc)
	if err != nil {
		return err
	}
	var bytes int64
	bad := 0
	for _, p := range parts {
		bytes += p.Bytes
		if p.Err != nil {
			bad++
			fmt.Fprintf(stdout, "%s: %s\n", p.Location, printable(p.Err.Error()))
			continue
		}
		m := p.Meta
		fmt.Fprintf(stdout, "%s: %d scenes %s..%s, %d observations, version %s, written %s, %d bytes (%s)\n",
			printable(m.FieldID), len(m.Items), p.First, p.Last, m.Rows, m.Version, m.WrittenAt.Format(time.RFC3339), p.Bytes, p.Location)
	}
	fmt.Fprintf(stdout, "%d partitions (%d not usable), %d bytes\n", len(parts), bad, bytes)
	return nil
}

func runCachePrune(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("cache prune", cacheUsage, stderr)
	loc := fs.String("cache", "", "the cache: local folder or s3://bucket/prefix/ (required)")
	older := fs.String("older-than", "", "remove partitions written longer ago than this: a Go duration (2160h) or days (90d)")
	var o cache.PruneOptions
	fs.StringVar(&o.Fields, "fields", "", "the portfolio's talhões file: partitions of other talhões are removed")
	fs.StringVar(&o.IDField, "id-field", "id", "property holding the talhão id in --fields")
	fs.BoolVar(&o.DryRun, "dry-run", false, "list what would be removed, remove nothing")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *loc == "" {
		return usagef("--cache is required")
	}
	if *older != "" {
		d, err := parseAge(*older)
		if err != nil {
			return usagef("--older-than %q: %v", *older, err)
		}
		o.OlderThan = d
	}
	o.Now = time.Now()
	removed, err := cache.Prune(ctx, *loc, o)
	verb := "removed"
	if o.DryRun {
		verb = "would remove"
	}
	for _, r := range removed {
		fmt.Fprintf(stdout, "%s %s: %s\n", verb, r.Location, printable(r.Reason))
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s %d partitions\n", verb, len(removed))
	return nil
}

// parseAge reads "90d" (days) or a Go duration; it must be positive.
func parseAge(s string) (time.Duration, error) {
	var d time.Duration
	if n, ok := strings.CutSuffix(s, "d"); ok {
		days, err := strconv.Atoi(n)
		if err != nil {
			return 0, fmt.Errorf("want a number of days, e.g. 90d")
		}
		d = time.Duration(days) * 24 * time.Hour
	} else {
		var err error
		if d, err = time.ParseDuration(s); err != nil {
			return 0, err
		}
	}
	if d <= 0 {
		return 0, fmt.Errorf("want a positive age")
	}
	return d, nil
}
