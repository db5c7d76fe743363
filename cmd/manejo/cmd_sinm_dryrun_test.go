package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/manejo/manejo/sinm"
	"github.com/manejo/manejo/sinm/client/clienttest"
)

// TestSINMSubmitOperatorLines (issue 28 point 10): wrong credentials no
// longer print "POST (new) 0 uuid : 1059 B" (as if delivered, uuid empty)
// but say nothing was delivered; a dry run after a payload changed names
// what changed (never the personal data's values), and prints its lines
// in talhão order every time.
func TestSINMSubmitOperatorLines(t *testing.T) {
	dir, keys := sinmOutput(t)
	fake := clienttest.New("11222333000181", "the-secret")
	defer fake.Close()
	fake.Keys["KEY-AAAA-0001-secret"], fake.Keys["KEY-BBBB-0002-secret"] = true, true
	t.Setenv("SINM_CLIENT_ID", "11222333000181")
	t.Setenv("SINM_CLIENT_SECRET", "wrong")
	args := []string{"sinm", "submit", "--in", dir, "--keys", keys, "--api-url", fake.URL, "--token-url", fake.TokenURL()}
	_, stdout, _ := runCLI(t, args...)
	if !strings.Contains(stdout, "A key KEY-…: POST (new) not delivered, no answer from SINM: 1059 B") || strings.Contains(stdout, "uuid") {
		t.Errorf("wrong credentials:\n%s", stdout)
	}
	t.Setenv("SINM_CLIENT_SECRET", "the-secret")
	if code, stdout, stderr := runCLI(t, args...); !strings.Contains(stdout, "A key KEY-…: POST (new) delivered, HTTP 201, uuid ") {
		t.Fatalf("submit: exit %d\n%s%s", code, stdout, stderr)
	}
	// B's payload changes: its slope and one index, and the producer's CPF.
	p := filepath.Join(dir, filepath.FromSlash(sinm.PayloadName("B")))
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Replace(string(b), `"declividadeMedia": 4`, `"declividadeMedia": 6`, 1)
	s = strings.Replace(s, "52998224725", "11144477735", 1)
	if s == string(b) || !strings.Contains(string(b), `"declividadeMedia": 4`) {
		t.Fatalf("fixture: payload B has no declividadeMedia 4:\n%s", b)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	dry := append(args, "--dry-run", "--concurrency", "4")
	_, first, _ := runCLI(t, dry...)
	for range 3 {
		if _, again, _ := runCLI(t, dry...); again != first {
			t.Fatalf("dry run output differs between runs:\n%s\n---\n%s", first, again)
		}
	}
	if want := "B key KEY-…: would PUT (changed): 1059 B, 2 indices, 1 manejo, 3 cobertura, 1 cultura\n  B: changed: declividadeMedia 4 → 6\n"; !strings.Contains(first, want) {
		t.Errorf("dry run lacks %q:\n%s", want, first)
	}
	if strings.Index(first, "A key") > strings.Index(first, "B key") || strings.Contains(first, "11144477735") || strings.Contains(first, "52998224725") {
		t.Errorf("dry run out of order or showing a CPF:\n%s", first)
	}
	// Only the CPF changes: said as such, without its value.
	if err := os.WriteFile(p, []byte(strings.Replace(string(b), "52998224725", "11144477735", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, out, _ := runCLI(t, dry...); !strings.Contains(out, "B: changed: personal data (cpfProdutor, cnpjPropriedade or cnpjEmpresaSensoriamento)") {
		t.Errorf("dry run, CPF changed:\n%s", out)
	}
}
