package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/manejo/manejo/sinm"
	"github.com/manejo/manejo/storage"
)

func init() {
	register(&command{name: "sinm", synopsis: "check SINM payloads against the schema: sinm validate FILE|DIR...", run: runSINM})
}

const sinmUsage = `sinm validate FILE|DIR...

Checks SINM remote-sensing payloads (one JSON document per talhão) against
the embedded monitoramento-satelite.schema.json (JSON Schema 2020-12). A DIR
is searched for *.json files; a 'manejo run' output folder is searched in its
sinm/ subfolder. Local paths or s3:// locations.

Prints "FILE: ok" or one line per violation, "FILE: $.json.path: message".
Exit status: 0 all valid, 3 some payloads invalid (each is listed), 1 a file
could not be read or no payload was found, 2 bad command line.`

func runSINM(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprintf(stderr, "Usage: manejo %s\n", sinmUsage)
		return usagef("missing subcommand (validate)")
	}
	switch args[0] {
	case "validate":
		return runSINMValidate(ctx, args[1:], stdout, stderr)
	case "-h", "-help", "--help", "help":
		fmt.Fprintf(stderr, "Usage: manejo %s\n", sinmUsage)
		return nil
	}
	return usagef("unknown subcommand %q (want validate)", args[0])
}

func runSINMValidate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("sinm validate", sinmUsage, stderr)
	quiet := fs.Bool("quiet", false, "print only invalid payloads and the summary")
	// Flags may come before or after the paths (all of its flags are booleans).
	var flags, locs []string
	for _, a := range args {
		if strings.HasPrefix(a, "-") {
			flags = append(flags, a)
		} else {
			locs = append(locs, a)
		}
	}
	if err := parseFlags(fs, flags); err != nil {
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
		b, err := readLoc(ctx, f)
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

// payloadFiles expands one argument into payload files: a file as is, a
// directory into its *.json files (or those of its sinm/ subfolder).
func payloadFiles(ctx context.Context, loc string) ([]string, error) {
	if storage.KindOf(loc) != storage.Local {
		if strings.HasSuffix(loc, ".json") {
			return []string{loc}, nil
		}
		all, err := storage.List(ctx, strings.TrimSuffix(loc, "/")+"/")
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", loc, err)
		}
		var direct, sub []string
		base := strings.TrimSuffix(loc, "/") + "/"
		for _, l := range all {
			if !strings.HasSuffix(l, ".json") {
				continue
			}
			rel := strings.TrimPrefix(l, base)
			switch {
			case !strings.Contains(rel, "/"):
				direct = append(direct, l)
			case path.Dir(rel) == "sinm":
				sub = append(sub, l)
			}
		}
		if len(sub) > 0 {
			direct = sub // an output folder: its run.json is not a payload
		}
		sort.Strings(direct)
		return direct, nil
	}
	st, err := os.Stat(loc)
	if err != nil {
		return nil, fmt.Errorf("validate %s: %w", loc, err)
	}
	if !st.IsDir() {
		return []string{loc}, nil
	}
	if st, err := os.Stat(filepath.Join(loc, "sinm")); err == nil && st.IsDir() {
		loc = filepath.Join(loc, "sinm")
	}
	files, err := filepath.Glob(filepath.Join(loc, "*.json"))
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", loc, err)
	}
	sort.Strings(files)
	return files, nil
}

func readLoc(ctx context.Context, loc string) ([]byte, error) {
	if storage.KindOf(loc) == storage.Local {
		b, err := os.ReadFile(loc)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", loc, err)
		}
		return b, nil
	}
	return storage.ReadFile(ctx, loc)
}
