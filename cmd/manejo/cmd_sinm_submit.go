package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/manejo/manejo/export"
	"github.com/manejo/manejo/sinm"
	"github.com/manejo/manejo/sinm/client"
	"github.com/manejo/manejo/storage"
)

// sinmFlags are the flags submit and status share.
type sinmFlags struct {
	in, env, apiURL, tokenURL, keys, credentials string
	rate                                         float64
	concurrency                                  int
	dryRun                                       bool
	unresolved                                   string
}

func (f *sinmFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.in, "in", "", "output folder of 'manejo run' (local: the ledger is appended in place) (required)")
	fs.StringVar(&f.env, "env", "", "SINM installation: hml (homologação) or prd (produção)")
	fs.StringVar(&f.apiURL, "api-url", "", "SINM API base URL (instead of --env)")
	fs.StringVar(&f.tokenURL, "token-url", "", "Keycloak token endpoint URL (instead of --env)")
	fs.StringVar(&f.keys, "keys", "", "CSV field_id,chaveClassificacaoNM: classification keys, added to and overriding those the run took from the talhões' property chaveClassificacaoNM (sinm/keys.csv)")
	fs.StringVar(&f.credentials, "credentials", "", "file of SINM_CLIENT_ID=... and SINM_CLIENT_SECRET=... lines (default: the environment)")
	fs.Float64Var(&f.rate, "rate", 5, "at most this many requests per second (0: no limit)")
	fs.IntVar(&f.concurrency, "concurrency", 4, "requests in flight at once")
}

// check refuses what submit and status cannot use, before any credential
// is asked for: an --in that is not a local folder, a negative or
// non-finite --rate.
func (f *sinmFlags) check() error {
	if f.in == "" {
		return usagef("--in is required")
	}
	if _, err := f.ledgerPath(); err != nil {
		return err
	}
	if math.IsNaN(f.rate) || math.IsInf(f.rate, 0) || f.rate < 0 {
		return usagef("--rate %g: want requests per second ≥ 0 (0: no limit)", f.rate)
	}
	return nil
}

// endpoints returns the token and API URLs of the flags.
func (f *sinmFlags) endpoints() (client.Environment, error) {
	switch {
	case f.env != "" && (f.apiURL != "" || f.tokenURL != ""):
		return client.Environment{}, usagef("--env and --api-url/--token-url exclude each other")
	case f.env != "":
		e, ok := client.LookupEnvironment(f.env)
		if !ok {
			return e, usagef("--env must be hml or prd, not %q", f.env)
		}
		return e, nil
	case f.apiURL == "" || f.tokenURL == "":
		return client.Environment{}, usagef("one of --env, or both --api-url and --token-url, is required")
	}
	return client.Environment{TokenURL: f.tokenURL, APIURL: f.apiURL}, nil
}

// newClient builds the SINM client of the flags; log lines go to stderr.
func (f *sinmFlags) newClient(stderr io.Writer) (*client.Client, error) {
	e, err := f.endpoints()
	if err != nil {
		return nil, err
	}
	creds, err := readCredentials(f.credentials)
	if err != nil {
		return nil, err
	}
	hc := &http.Client{Timeout: 2 * time.Minute}
	var mu sync.Mutex
	return &client.Client{
		BaseURL: e.APIURL, HTTP: hc, Rate: f.rate,
		Tokens: &client.Tokens{URL: e.TokenURL, Creds: creds, HTTP: hc},
		Logf: func(format string, args ...any) {
			mu.Lock()
			defer mu.Unlock()
			fmt.Fprintf(stderr, "manejo sinm: "+format+"\n", args...)
		},
	}, nil
}

// readCredentials reads SINM_CLIENT_ID and SINM_CLIENT_SECRET from file
// (KEY=VALUE lines, # comments) or, with file "", the environment. Errors
// never repeat a value.
func readCredentials(file string) (client.Credentials, error) {
	vals := map[string]string{"SINM_CLIENT_ID": os.Getenv("SINM_CLIENT_ID"), "SINM_CLIENT_SECRET": os.Getenv("SINM_CLIENT_SECRET")}
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return client.Credentials{}, fmt.Errorf("read credentials file: %w", err)
		}
		vals = map[string]string{}
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			line := strings.TrimSpace(sc.Text())
			if k, v, ok := strings.Cut(line, "="); ok && !strings.HasPrefix(line, "#") {
				vals[strings.TrimSpace(strings.TrimPrefix(k, "export "))] = strings.Trim(strings.TrimSpace(v), `"'`)
			}
		}
	}
	c := client.Credentials{ClientID: vals["SINM_CLIENT_ID"], Secret: vals["SINM_CLIENT_SECRET"]}
	if c.ClientID == "" || c.Secret == "" {
		return c, usagef("SINM credentials missing: set SINM_CLIENT_ID and SINM_CLIENT_SECRET (or --credentials FILE)")
	}
	return c, nil
}

// loadKeys returns the classification keys: those the run took from the
// talhões' property chaveClassificacaoNM (sinm/keys*.csv in --in), added
// to and overridden by --keys, each override of a different key named on
// stderr (keys redacted). No key at all is a usage error.
func (f *sinmFlags) loadKeys(ctx context.Context, fsys fs.FS, stderr io.Writer) (map[string]string, error) {
	keys, err := client.RunKeys(fsys)
	if err != nil {
		return nil, err
	}
	if f.keys != "" {
		kb, err := storage.ReadFile(ctx, f.keys)
		if err != nil {
			return nil, fmt.Errorf("read --keys: %w", err)
		}
		csv, err := client.ReadKeys(bytes.NewReader(kb))
		if err != nil {
			return nil, err
		}
		var conflicts []client.KeyConflict
		keys, conflicts = client.MergeKeys(keys, csv)
		for _, c := range conflicts {
			fmt.Fprintf(stderr, "manejo sinm: talhão %s: --keys gives key %s, the talhões file %s; --keys is used\n", c.FieldID, c.Override, c.Run)
		}
	}
	if len(keys) == 0 {
		return nil, usagef("no classification keys: %s has no %s (no talhão declared chaveClassificacaoNM) and --keys was not given", f.in, sinm.KeysName(""))
	}
	return keys, nil
}

// loadItems reads the keys and the payloads of the output folder.
func (f *sinmFlags) loadItems(ctx context.Context, stderr io.Writer) ([]client.Item, []string, error) {
	fsys, err := openOutput(ctx, f.in)
	if err != nil {
		return nil, nil, err
	}
	keys, err := f.loadKeys(ctx, fsys, stderr)
	if err != nil {
		return nil, nil, err
	}
	items, missing, unkeyed, err := client.Items(fsys, keys)
	if err != nil {
		return nil, nil, err
	}
	if unkeyed > 0 {
		fmt.Fprintf(stderr, "manejo sinm: %d payload(s) in %s have no key (neither chaveClassificacaoNM nor --keys) and are not sent\n", unkeyed, f.in)
	}
	return items, missing, nil
}

// ledgerPath is the ledger of a local output folder.
func (f *sinmFlags) ledgerPath() (string, error) {
	if storage.KindOf(f.in) != storage.Local {
		return "", usagef("--in must be a local folder: the ledger %s is appended in place", client.LedgerName)
	}
	return filepath.Join(f.in, filepath.FromSlash(client.LedgerName)), nil
}

const sinmSubmitUsage = "sinm submit --in DIR (--env hml|prd | --api-url U --token-url T) [--keys keys.csv] [--dry-run] [--rate R] [--concurrency N] [--unresolved resend|hold]"

func parseSINMSubmit(args []string, stderr io.Writer) (sinmFlags, error) {
	fs := newFlagSet("sinm submit", sinmSubmitUsage, stderr)
	var f sinmFlags
	f.register(fs)
	fs.BoolVar(&f.dryRun, "dry-run", false, "validate every payload and print what would be sent; no network, no ledger write")
	fs.StringVar(&f.unresolved, "unresolved", "resend", "a talhão whose earlier request has no recorded answer: resend it, or hold it back")
	if err := parseFlags(fs, args); err != nil {
		return f, err
	}
	if err := f.check(); err != nil {
		return f, err
	}
	switch {
	case f.unresolved != "resend" && f.unresolved != "hold":
		return f, usagef("--unresolved must be resend or hold")
	case f.concurrency < 1:
		return f, usagef("--concurrency must be at least 1")
	}
	return f, nil
}

func runSINMSubmit(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	f, err := parseSINMSubmit(args, stderr)
	if err != nil {
		return err
	}
	var c *client.Client
	if !f.dryRun {
		if c, err = f.newClient(stderr); err != nil {
			return err
		}
	}
	lp, err := f.ledgerPath()
	if err != nil {
		return err
	}
	items, missing, err := f.loadItems(ctx, stderr)
	if err != nil {
		return err
	}
	for _, id := range missing {
		fmt.Fprintf(stdout, "%s: no payload in %s (the run failed it or does not know it)\n", id, f.in)
	}
	open := client.OpenLedger
	if f.dryRun {
		open = client.ReadLedger
	}
	led, err := open(lp)
	if err != nil {
		return err
	}
	defer led.Close()
	if led.Skipped > 0 {
		fmt.Fprintf(stderr, "manejo sinm: %d unreadable line(s) in the ledger ignored (a line cut by a kill)\n", led.Skipped)
	}
	opt := client.SubmitOptions{Concurrency: f.concurrency, DryRun: f.dryRun, HoldUnresolved: f.unresolved == "hold",
		Report: func(o client.Outcome) { printOutcome(stdout, o, f.dryRun) }}
	if f.dryRun {
		opt.Report = nil // printed below in talhão order: a rehearsal reads the same every time
	}
	out, err := client.Submit(ctx, c, led, items, opt)
	if f.dryRun {
		sorted := slices.Clone(out)
		slices.SortStableFunc(sorted, func(a, b client.Outcome) int { return strings.Compare(a.FieldID, b.FieldID) })
		for _, o := range sorted {
			if o.FieldID != "" {
				printOutcome(stdout, o, true)
			}
		}
	}
	if !f.dryRun && ctx.Err() == nil {
		if werr := writeDataset(ctx, f.in, export.SINMSubmissions, led.Rows()); werr != nil {
			fmt.Fprintf(stderr, "manejo sinm: %v\n", werr)
		}
	}
	return submitSummary(stdout, c, out, len(missing), err)
}

// printOutcome prints one talhão's line, and its errors indented below.
func printOutcome(w io.Writer, o client.Outcome, dry bool) {
	size := fmt.Sprintf("%d B, %d indices, %d manejo, %d cobertura, %d cultura", o.Bytes, o.Counts.Indices, o.Counts.Manejo, o.Counts.Cobertura, o.Counts.Cultura)
	switch {
	case o.Action == client.ActionInvalid || o.Action == client.ActionUnchanged || o.Action == client.ActionHeld:
		fmt.Fprintf(w, "%s key %s: %s\n", o.FieldID, o.KeyPrefix, o.Action)
	case dry:
		fmt.Fprintf(w, "%s key %s: would %s (%s): %s\n", o.FieldID, o.KeyPrefix, o.Method, o.Action, size)
	case o.Interrupted:
		fmt.Fprintf(w, "%s key %s: %s interrupted\n", o.FieldID, o.KeyPrefix, o.Method)
	case o.Code == 0:
		fmt.Fprintf(w, "%s key %s: %s (%s) not delivered, no answer from SINM: %s\n", o.FieldID, o.KeyPrefix, o.Method, o.Action, size)
	case !o.Delivered():
		fmt.Fprintf(w, "%s key %s: %s (%s) not delivered, HTTP %d: %s\n", o.FieldID, o.KeyPrefix, o.Method, o.Action, o.Code, size)
	default:
		fmt.Fprintf(w, "%s key %s: %s (%s) delivered, HTTP %d, uuid %s: %s\n", o.FieldID, o.KeyPrefix, o.Method, o.Action, o.Code, o.UUID, size)
	}
	for _, c := range o.Changes {
		fmt.Fprintf(w, "  %s: %s\n", o.FieldID, c)
	}
	for _, e := range o.Errors {
		fmt.Fprintf(w, "  %s: %s\n", o.FieldID, e)
	}
}

// submitSummary prints the counts and turns them into the exit status.
func submitSummary(w io.Writer, c *client.Client, out []client.Outcome, missing int, err error) error {
	sum := client.Summarise(out)
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(sum)) {
		parts = append(parts, fmt.Sprintf("%s %d", k, sum[k]))
	}
	if missing > 0 {
		parts = append(parts, fmt.Sprintf("no payload %d", missing))
	}
	line := fmt.Sprintf("%d talhão(ões): %s", len(out)+missing, strings.Join(parts, ", "))
	if c != nil {
		line += fmt.Sprintf("; %d retries, %d token(s)", c.Retries(), c.Tokens.Fetches())
	} else {
		n := 0
		for _, o := range out {
			if o.Planned {
				n += o.Bytes
			}
		}
		line += fmt.Sprintf("; dry run: %d B would be sent, nothing was", n)
	}
	fmt.Fprintln(w, line)
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return fmt.Errorf("interrupted: requests in flight stay open in the ledger and are resolved by the next submit: %w", err)
		}
		return err
	}
	bad := sum["rejected"] + sum["failed"] + sum["invalid"] + sum["held"] + sum["interrupted"] + missing
	if bad > 0 {
		return partialError(bad, len(out)+missing)
	}
	return nil
}
