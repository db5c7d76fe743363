package main

import (
	"maps"
	"slices"
	"strings"
	"testing"
)

// helpBlocks runs `manejo <args> --help` and returns each flag's block of
// the help text (its "-name type" line and its usage lines) by name.
func helpBlocks(t *testing.T, args ...string) map[string]string {
	t.Helper()
	code, _, stderr := runCLI(t, append(args, "--help")...)
	if code != exitOK || !strings.Contains(stderr, "Flags:") {
		t.Fatalf("%v --help: exit %d, stderr %q", args, code, stderr)
	}
	blocks := map[string]string{}
	name := ""
	for _, line := range strings.Split(stderr, "\n") {
		if rest, ok := strings.CutPrefix(line, "  -"); ok {
			name, _, _ = strings.Cut(rest, " ")
			blocks[name] = line
		} else if name != "" && strings.HasPrefix(line, "    \t") {
			blocks[name] += "\n" + line
		}
	}
	return blocks
}

// TestOneFlagVocabulary checks issue 29's CLI vocabulary on the help of
// every command: a flag that several commands declare (the talhões file,
// its id property, the parallelism, the read rules, the catalog, the DEM)
// has one type, one default and one help text everywhere; parallelism is
// --workers in every command; --fields is always the talhões file.
func TestOneFlagVocabulary(t *testing.T) {
	t.Parallel()
	invocations := [][]string{{"analyse"}, {"cache", "inspect"}, {"cache", "prune"}, {"catalog", "search"},
		{"classify"}, {"grid"}, {"inspect"}, {"report"}, {"run"}, {"series"}, {"sinm", "validate"},
		{"sinm", "submit"}, {"sinm", "status"}, {"slope"}, {"synth"}, {"version"}}
	var covered []string
	for _, inv := range invocations {
		covered = append(covered, inv[0])
	}
	for _, name := range slices.Sorted(maps.Keys(commands)) {
		if !slices.Contains(covered, name) {
			t.Errorf("command %s is not in this test's list: add it", name)
		}
	}
	shared := []string{"fields", "id-field", "workers", "allow-missing-qa", "allow-href-prefix", "catalog", "dem",
		"season", "agri-year-start", "as-of", "satellite-codes", "satellite-codes-file", "cnpj-empresa-sensoriamento",
		"undeclared-practices-as-zero", "sowing", "force", "to", "tillage-k", "tillage-min-cells", "straw-max-ndvi", "bare-ndti", "straw-ndti"}
	first := map[string]string{} // flag → the first command declaring it
	want := map[string]string{}  // flag → its help block there
	for _, inv := range invocations {
		cmd := strings.Join(inv, " ")
		blocks := helpBlocks(t, inv...)
		for _, bad := range []string{"jobs", "j", "threads", "parallel", "concurrency-talhoes"} {
			if _, ok := blocks[bad]; ok {
				t.Errorf("%s declares --%s: parallelism is --workers", cmd, bad)
			}
		}
		for _, f := range shared {
			b, ok := blocks[f]
			switch {
			case !ok:
			case want[f] == "":
				first[f], want[f] = cmd, b
			case b != want[f]:
				t.Errorf("--%s of %s:\n%s\ndiffers from that of %s:\n%s", f, cmd, b, first[f], want[f])
			}
		}
	}
	for _, f := range shared {
		if want[f] == "" {
			t.Errorf("no command declares --%s", f)
		}
	}
	if !strings.Contains(want["fields"], "talhões: ") || !strings.Contains(want["id-field"], `(default "id")`) {
		t.Errorf("--fields %q, --id-field %q: want the talhões file and the default id", want["fields"], want["id-field"])
	}
	if !strings.HasPrefix(want["allow-missing-qa"], "  -allow-missing-qa value") {
		t.Errorf("--allow-missing-qa %q: want a list of collections", want["allow-missing-qa"])
	}
}
