// Command manejo computes the remote-sensing indicators of ZARC Níveis de
// Manejo (IN SPA/MAPA 2/2025, Portaria SPA/MAPA 349/2026) from satellite image
// archives: it grids talhões, samples NDVI/NDTI, finds tillage events (T),
// pre-sowing straw cover (C) and mean slope, and writes Parquet datasets and
// SINM payloads.
//
// Each subcommand lives in its own cmd_<name>.go file and registers itself in
// init; this file only dispatches, prints the error once and sets the exit
// code (see README, "Exit codes").
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"syscall"
	"time"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

// Exit codes, documented in the README.
const (
	exitOK         = 0 // everything finished
	exitFatal      = 1 // the run could not finish
	exitUsage      = 2 // bad command line
	exitPartial    = 3 // finished, but some talhões failed
	exitIncomplete = 4 // run: finished, but some talhões incomplete; run again later
)

// command is one subcommand of manejo.
type command struct {
	name     string
	synopsis string // one line for `manejo help`
	// run parses args (without the command name) and does the work.
	run func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

var commands = map[string]*command{}

func register(c *command) {
	if _, dup := commands[c.name]; dup {
		panic("manejo: command registered twice: " + c.name)
	}
	commands[c.name] = c
}

// usageError is a bad command line: exit code 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, a ...any) error { return usageError{fmt.Sprintf(format, a...)} }

// errPartial reports a command that finished with some talhões (or
// payloads) not ok: exit 3.
var errPartial = errors.New("finished, not every talhão ok")

// finishedError is an errPartial whose message is only its own.
type finishedError struct{ msg string }

func (e finishedError) Error() string { return e.msg }
func (e finishedError) Unwrap() error { return errPartial }

// finished is an errPartial with the message format gives.
func finished(format string, a ...any) error {
	return finishedError{fmt.Sprintf(format, a...)}
}

// partialError is an errPartial counting the talhões that failed.
func partialError(failed, total int) error {
	return finished("%d of %d talhões failed", failed, total)
}

// errIncomplete reports a run that finished with some talhões incomplete
// (a transient fault outlasted the retry budget): exit 4, the code an
// engine retries, since a later run can complete them; it wins over exit
// 3 when some talhões also failed.
var errIncomplete = errors.New("finished, some talhões incomplete")

// incompleteError is an errIncomplete whose message is only its own.
type incompleteError struct{ msg string }

func (e incompleteError) Error() string { return e.msg }
func (e incompleteError) Unwrap() error { return errIncomplete }

// shutdownGrace bounds the time from SIGINT or SIGTERM to the process's
// end. A cancelled run stops between reads and keeps its committed batches
// within a second or two; should something not return (a blocking cgo
// call, a store that does not answer), the process exits 1 anyway after
// this long, well inside a job supervisor's grace period (Kubernetes: 30
// s). Committed batches are on disk or in the store either way; a lease
// left behind expires after its TTL.
const shutdownGrace = 8 * time.Second

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done() // a signal (or the end of runMain, when os.Exit comes first)
		time.Sleep(shutdownGrace)
		fmt.Fprintf(os.Stderr, "manejo: still stopping %s after the signal: exiting now; committed batches are kept\n", shutdownGrace)
		os.Exit(exitFatal)
	}()
	code := runMain(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// runMain dispatches args to a subcommand and maps its error to an exit code.
func runMain(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		printHelp(stderr)
		return exitUsage
	}
	name := args[0]
	switch name {
	case "help", "-h", "-help", "--help":
		if len(args) > 1 {
			if c, ok := commands[args[1]]; ok {
				return exitCode(c.run(ctx, []string{"--help"}, stdout, stderr), stderr, c.name)
			}
		}
		printHelp(stdout)
		return exitOK
	case "-version", "--version":
		name = "version"
	}
	c, ok := commands[name]
	if !ok {
		fmt.Fprintf(stderr, "manejo: unknown command %q\n\n", name)
		printHelp(stderr)
		return exitUsage
	}
	return exitCode(c.run(ctx, args[1:], stdout, stderr), stderr, c.name)
}

func exitCode(err error, stderr io.Writer, name string) int {
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return exitOK
	case errors.As(err, new(usageError)):
		fmt.Fprintf(stderr, "manejo %s: %v\n(see 'manejo %s --help')\n", name, err, name)
		return exitUsage
	case errors.Is(err, errIncomplete):
		fmt.Fprintf(stderr, "manejo %s: finished (exit 4, run again later): %v\n", name, err)
		return exitIncomplete
	case errors.Is(err, errPartial):
		fmt.Fprintf(stderr, "manejo %s: finished (exit 3): %v\n", name, err)
		return exitPartial
	default:
		fmt.Fprintf(stderr, "manejo %s: %v\n", name, err)
		return exitFatal
	}
}

func printHelp(w io.Writer) {
	fmt.Fprintf(w, "manejo %s — ZARC Níveis de Manejo remote-sensing indicators\n\nUsage: manejo <command> [flags]\n\nCommands:\n", version)
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].synopsis)
	}
	fmt.Fprintf(w, "\nRun 'manejo <command> --help' for the flags of a command.\nExit codes: 0 ok, 1 fatal, 2 usage, 3 finished, some talhões failed (run: or no SINM payload),\n4 run: finished, some talhões incomplete (a transient fault outlasted --retry-budget; run again later).\n")
}

// newFlagSet returns a flag set that reports errors instead of exiting and
// prints a usage header naming the command.
func newFlagSet(name, usage string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: manejo %s\n\nFlags:\n", usage)
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses args and turns flag errors into usage errors.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{err.Error()}
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	return nil
}
