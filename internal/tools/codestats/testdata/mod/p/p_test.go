package p

import (
	"flag"
	"os"
	"testing"
)

var (
	slow = flag.Bool("slow", false, "run the slow test")
	out  = flag.String("out", "", "a folder")
)

var fast bool

func init() { flag.BoolVar(&fast, "fast", true, "run the fast test") }

func needSlow(t *testing.T) {
	if !*slow {
		t.Skip("no -slow")
	}
}

func TestSlow(t *testing.T) { needSlow(t) }

func TestOut(t *testing.T) {
	if *out == "" {
		t.Skip("no -out")
	}
}

func TestFast(t *testing.T) {
	if !fast {
		t.Skip("runs by default")
	}
}

func TestEnv(t *testing.T) {
	dir := os.Getenv("P_DIR")
	if dir == "" || testing.Short() {
		t.Skip("P_DIR not set")
	}
}

func TestShort(t *testing.T) {
	if testing.Short() {
		t.Skip("make test does not pass -short")
	}
}
