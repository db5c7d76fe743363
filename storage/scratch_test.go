package storage

import (
	"bufio"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
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
// by the next NewScratch of its prefix and reported with its bytes; a live
// process's folder, this process's own, a folder without a lock file,
// another prefix's folder, a symbolic link to a dead folder, a folder whose
// lock is a link and one whose lock is a FIFO (whose open(2) would block
// the sweep for ever) are kept. $TMPDIR holds glob metacharacters: the
// candidates are listed, not matched as a pattern.
func TestScratchSweepsDeadOwners(t *testing.T) {
	tmp := filepath.Join(t.TempDir(), "tmp[1]")
	if err := os.Mkdir(tmp, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", tmp)
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

	odd := oddScratches(t, prefix)

	// All alive: a new Scratch removes nothing.
	s := newScratchWithin(t, prefix)
	if len(s.Reclaimed) != 0 {
		t.Fatalf("reclaimed %v while every owner lives", s.Reclaimed)
	}
	s.Close()
	for _, d := range append([]string{deadDir, liveDir, own.Dir, legacy, other}, odd...) {
		if _, err := os.Stat(d); err != nil {
			t.Fatalf("%s removed while its owner lives (or it has no lock): %v", d, err)
		}
	}
	if _, err := os.Stat(s.Dir); !os.IsNotExist(err) {
		t.Fatalf("Close left %s: %v", s.Dir, err)
	}

	dead.Process.Kill()
	dead.Wait()
	s = newScratchWithin(t, prefix)
	defer s.Close()
	if _, err := os.Stat(deadDir); !os.IsNotExist(err) {
		t.Fatalf("the killed owner's folder %s is still there (%v)", deadDir, err)
	}
	// "spilled" holds 1 byte, the lock file none.
	if want := []Reclaimed{{Dir: deadDir, Bytes: 1}}; !reflect.DeepEqual(s.Reclaimed, want) {
		t.Fatalf("reclaimed %v, want %v", s.Reclaimed, want)
	}
	if r := s.Report(); len(r) != 1 || r[0] != "reclaimed a dead worker's scratch "+deadDir+" (1 bytes)" {
		t.Fatalf("report %q", r)
	}
	for _, d := range append([]string{liveDir, own.Dir, legacy, other, s.Dir}, odd...) {
		if _, err := os.Lstat(d); err != nil {
			t.Fatalf("%s removed: %v", d, err)
		}
	}
}

// TestScratchKeepsForeignOwners: a dead worker's folder owned by another
// user is not this worker's to judge, and the sweep leaves it; given back
// to this user, the same folder is reclaimed (the owner was the only
// reason it stayed). Changing an owner takes root: skipped otherwise.
func TestScratchKeepsForeignOwners(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to give a folder to another user")
	}
	t.Setenv("TMPDIR", t.TempDir())
	const prefix = "manejo-scratch-foreign-"
	dead, deadDir := scratchChild(t, prefix)
	if err := os.WriteFile(filepath.Join(deadDir, "spilled"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	dead.Process.Kill()
	dead.Wait()
	const nobody = 65534
	chownTree(t, deadDir, nobody)

	s := newScratchWithin(t, prefix)
	s.Close()
	if len(s.Reclaimed) != 0 {
		t.Fatalf("reclaimed %v: another user's folder", s.Reclaimed)
	}
	if _, err := os.Stat(filepath.Join(deadDir, "spilled")); err != nil {
		t.Fatalf("another user's dead folder was touched: %v", err)
	}

	chownTree(t, deadDir, os.Getuid())
	s = newScratchWithin(t, prefix)
	defer s.Close()
	if want := []Reclaimed{{Dir: deadDir, Bytes: 1}}; !reflect.DeepEqual(s.Reclaimed, want) {
		t.Fatalf("given back to this user, reclaimed %v, want %v", s.Reclaimed, want)
	}
}

// chownTree gives dir and everything in it to uid (links not followed).
func chownTree(t *testing.T, dir string, uid int) {
	t.Helper()
	err := filepath.WalkDir(dir, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, uid, uid)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// newScratchWithin is NewScratch failing the test if it takes over 10 s
// (a sweep blocked on a FIFO never returns).
func newScratchWithin(t *testing.T, prefix string) *Scratch {
	t.Helper()
	type result struct {
		s   *Scratch
		err error
	}
	done := make(chan result, 1)
	go func() {
		s, err := NewScratch(prefix)
		done <- result{s, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			t.Fatal(r.err)
		}
		return r.s
	case <-time.After(10 * time.Second):
		t.Fatal("NewScratch blocked for 10 s")
		return nil
	}
}

// oddScratches makes, under os.TempDir, entries of prefix that no sweep
// may remove, each with an unheld regular lock somewhere behind it: a
// symbolic link to a dead folder, a folder whose "lock" is a link to an
// unheld lock file, and a folder whose "lock" is a FIFO. It returns their
// paths and the link's target.
func oddScratches(t *testing.T, prefix string) []string {
	t.Helper()
	target := t.TempDir()
	for _, name := range []string{scratchLock, "spilled"} {
		if err := os.WriteFile(filepath.Join(target, name), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(os.TempDir(), prefix+"symlink")
	linkedLock := filepath.Join(os.TempDir(), prefix+"linked-lock")
	fifo := filepath.Join(os.TempDir(), prefix+"fifo")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{linkedLock, fifo} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(target, scratchLock), filepath.Join(linkedLock, scratchLock)); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(fifo, scratchLock), 0o600); err != nil {
		t.Fatal(err)
	}
	return []string{link, linkedLock, fifo, filepath.Join(target, "spilled")}
}

// TestScratchWithoutFlock: on a file system that refuses flock (ENOLCK on
// NFS without lockd), NewScratch still gives a folder, without a "lock"
// file, so no later NewScratch removes it; Report says so once.
func TestScratchWithoutFlock(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	const prefix = "manejo-scratch-nolock-"
	s, err := newScratch(prefix, func(*os.File) error { return syscall.ENOLCK })
	if err != nil {
		t.Fatalf("NewScratch failed on a file system without flock: %v", err)
	}
	defer s.Close()
	if !errors.Is(s.NoLock, syscall.ENOLCK) {
		t.Fatalf("NoLock = %v, want ENOLCK", s.NoLock)
	}
	if _, err := os.Lstat(filepath.Join(s.Dir, scratchLock)); !os.IsNotExist(err) {
		t.Fatalf("an unlocked folder has a %q file (%v): the next sweep would remove it", scratchLock, err)
	}
	if r := s.Report(); len(r) != 1 || !strings.Contains(r[0], "no flock") || !strings.Contains(r[0], s.Dir) {
		t.Fatalf("report %q", r)
	}
	s2 := newScratchWithin(t, prefix)
	defer s2.Close()
	if _, err := os.Stat(s.Dir); err != nil || len(s2.Reclaimed) != 0 {
		t.Fatalf("the unlocked folder was swept (%v, %v)", err, s2.Reclaimed)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(s.Dir); !os.IsNotExist(err) {
		t.Fatalf("Close left %s: %v", s.Dir, err)
	}
}
