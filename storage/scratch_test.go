package storage

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestScratchHelperProcess is the child of TestScratchSweepsDeadOwners: it
// creates a Scratch, prints its folder and waits to be killed.
func TestScratchHelperProcess(t *testing.T) {
	prefix := os.Getenv("MANEJO_SCRATCH_PREFIX")
	if prefix == "" {
		t.Skip("helper process only")
	}
	s, err := NewScratch(prefix)
	if err != nil {
		t.Fatal(err)
	}
	os.Stdout.WriteString(s.Dir + "\n")
	time.Sleep(time.Minute)
	s.Close()
}

// scratchChild starts TestScratchHelperProcess and returns it with its
// Scratch's folder, which it holds until killed.
func scratchChild(t *testing.T, prefix string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestScratchHelperProcess$")
	cmd.Env = append(os.Environ(), "MANEJO_SCRATCH_PREFIX="+prefix)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("the child printed no folder: %v", err)
	}
	return cmd, strings.TrimSpace(line)
}

// TestScratchSweepsDeadOwners: the folder of a SIGKILLed process is removed
// by the next NewScratch of its prefix; a live process's folder, this
// process's own, a folder without a lock file and another prefix's folder
// are kept.
func TestScratchSweepsDeadOwners(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	const prefix = "manejo-scratch-test-"
	dead, deadDir := scratchChild(t, prefix)
	_, liveDir := scratchChild(t, prefix)
	own, err := NewScratch(prefix)
	if err != nil {
		t.Fatal(err)
	}
	defer own.Close()
	legacy := filepath.Join(os.TempDir(), prefix+"legacy")
	other := filepath.Join(os.TempDir(), "manejo-other-1")
	for _, d := range []string{legacy, other} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(other, scratchLock), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(deadDir, "spilled"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}

	// All alive: a new Scratch removes nothing.
	s, err := NewScratch(prefix)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	for _, d := range []string{deadDir, liveDir, own.Dir, legacy, other} {
		if _, err := os.Stat(d); err != nil {
			t.Fatalf("%s removed while its owner lives (or it has no lock): %v", d, err)
		}
	}
	if _, err := os.Stat(s.Dir); !os.IsNotExist(err) {
		t.Fatalf("Close left %s: %v", s.Dir, err)
	}

	dead.Process.Kill()
	dead.Wait()
	s, err = NewScratch(prefix)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := os.Stat(deadDir); !os.IsNotExist(err) {
		t.Fatalf("the killed owner's folder %s is still there (%v)", deadDir, err)
	}
	for _, d := range []string{liveDir, own.Dir, legacy, other, s.Dir} {
		if _, err := os.Stat(d); err != nil {
			t.Fatalf("%s removed: %v", d, err)
		}
	}
}
