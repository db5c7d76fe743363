package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"

	"github.com/manejo/manejo/sinm"
	"github.com/manejo/manejo/storage"
)

func init() {
	register(&command{name: "sinm", synopsis: "SINM payloads: validate against the schema, submit to SINM, read back SINM's status", run: runSINM})
}

const sinmUsage = `sinm validate FILE|DIR...
       manejo sinm submit --in DIR (--env hml|prd | --api-url U --token-url T) [--keys keys.csv] [--dry-run] [--rate R] [--concurrency N]
       manejo sinm status --in DIR (--env hml|prd | --api-url U --token-url T) [--keys keys.csv]

submit delivers the payloads of a 'manejo run' output folder to SINM and
keeps the ledger DIR/sinm/submissions.jsonl; status reads SINM's
classification back. The keys are the talhões' chaveClassificacaoNM, which
the run wrote to DIR/sinm/keys.csv; --keys adds and overrides. See
docs/sinm.md. Credentials: SINM_CLIENT_ID and SINM_CLIENT_SECRET, or
--credentials FILE.

validate checks SINM remote-sensing payloads (one JSON document per talhão)
against the embedded monitoramento-satelite.schema.json (JSON Schema
2020-12) and the check digits of their CPF/CNPJ. A DIR
is searched for *.json files; a 'manejo run' output folder is searched in its
sinm/ subfolder. Local paths or s3:// locations.

Prints "FILE: ok" or one line per violation, "FILE: $.json.path: message".
Exit status: 0 all valid, 3 some payloads invalid (each is listed), 1 a file
could not be read or no payload was found, 2 bad command line.`

func runSINM(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprintf(stderr, "Usage: manejo %s\n", sinmUsage)
		return usagef("missing subcommand (validate, submit or status)")
	}
	switch args[0] {
	case "validate":
		return runSINMValidate(ctx, args[1:], stdout, stderr)
	case "submit":
		return runSINMSubmit(ctx, args[1:], stdout, stderr)
	case "status":
		return runSINMStatus(ctx, args[1:], stdout, stderr)
	case "-h", "-help", "--help", "help":
		fmt.Fprintf(stderr, "Usage: manejo %s\n", sinmUsage)
		return nil
	}
	return usagef("unknown subcommand %q (want validate, submit or status)", args[0])
}

func runSINMValidate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	flags := newFlagSet("sinm validate", sinmUsage, stderr)
	quiet := flags.Bool("quiet", false, "print only invalid payloads and the summary")
	// Flags may come before or after the paths (all of its flags are booleans).
	var opts, locs []string
	for _, a := range args {
		if strings.HasPrefix(a, "-") {
			opts = append(opts, a)
		} else {
			locs = append(locs, a)
		}
	}
	if err := parseFlags(flags, opts); err != nil {
		return err
	}
	if len(locs) == 0 {
		return usagef("missing FILE or DIR")
	}
	var files []string
	for _, a := range locs {
		f, err := payloadFiles(ctx, a)
		if err != nil {
			return err
		}
		files = append(files, f...)
	}
	if len(files) == 0 {
		return fmt.Errorf("no *.json payload under %s", strings.Join(locs, ", "))
	}
	invalid := 0
	for _, f := range files {
		b, err := storage.ReadFile(ctx, f)
		if err != nil {
			return err
		}
		v := sinm.ValidatePayload(bytes.NewReader(b))
		if len(v) == 0 {
			if !*quiet {
				fmt.Fprintf(stdout, "%s: ok\n", f)
			}
			continue
		}
		invalid++
		for _, x := range v {
			fmt.Fprintf(stdout, "%s: %s\n", f, x)
		}
	}
	fmt.Fprintf(stdout, "%d payload(s): %d valid, %d invalid\n", len(files), len(files)-invalid, invalid)
	if invalid > 0 {
		return partialError(invalid, len(files))
	}
	return nil
}

// payloadFiles expands one argument, local or s3://, into payload files: a
// file as is, a folder into its *.json files (or those of its sinm/
// subfolder: a 'manejo run' output, whose run.json is not a payload).
func payloadFiles(ctx context.Context, loc string) ([]string, error) {
	if storage.KindOf(loc) == storage.HTTP {
		return []string{loc}, nil // a URL names one file: it cannot be listed
	}
	fsys, err := storage.FS(ctx, loc)
	if err != nil {
		if ok, _ := storage.Exists(ctx, loc); ok {
			return []string{loc}, nil // a file, not a folder
		}
		return nil, fmt.Errorf("validate %s: %w", loc, err)
	}
	dir := "."
	if st, err := fs.Stat(fsys, "sinm"); err == nil && st.IsDir() {
		dir = "sinm"
	}
	names, err := fs.Glob(fsys, path.Join(dir, "*.json"))
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", loc, err)
	}
	files := make([]string, len(names))
	for i, n := range names {
		files[i] = storage.Join(loc, n)
	}
	return files, nil
}
