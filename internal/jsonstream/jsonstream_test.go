package jsonstream

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// Squeezing keeps the JSON value: strings (with escaped quotes, backslashes
// and whitespace inside) unchanged, whitespace runs outside them one byte.
func TestSqueezeKeepsValue(t *testing.T) {
	doc := "{ \"a\\\" b\" :\n\n\t [ 1 ,   \"x  \\\\\"  , {\"k\":\"  \"}\r\n ] ,\"t\":true}   \n"
	got, err := io.ReadAll(iotest.OneByteReader(&squeezer{r: strings.NewReader(doc)}))
	if err != nil {
		t.Fatal(err)
	}
	var a, b any
	if err := json.Unmarshal([]byte(doc), &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(got, &b); err != nil {
		t.Fatalf("squeezed %q: %v", got, err)
	}
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if !bytes.Equal(ja, jb) || strings.Contains(string(got), "  ]") || !strings.Contains(string(got), `"x  \\"`) {
		t.Errorf("squeezed %q: value %s, want %s", got, jb, ja)
	}
}

// A value over the limit is ErrTooLarge naming it; values under it, and any
// amount of whitespace between them, pass.
func TestValueLimit(t *testing.T) {
	pad := strings.Repeat(" \n", 1<<20)
	doc := "[" + pad + `"small"` + pad + "," + pad + `"` + strings.Repeat("x", 1<<17) + `"` + pad + "]"
	d := NewDecoder(strings.NewReader(doc), 4096)
	if err := d.Expect('['); err != nil {
		t.Fatal(err)
	}
	if v, err := d.Value("first"); err != nil || string(v) != `"small"` {
		t.Fatalf("first = %s, %v", v, err)
	}
	if _, err := d.Value("second"); !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "second") {
		t.Errorf("second = %v, want ErrTooLarge naming it", err)
	}
	d = NewDecoder(strings.NewReader(`{"a":1} x`), 1<<20)
	if _, err := d.Value("doc"); err != nil {
		t.Fatal(err)
	}
	if err := d.End(); err == nil {
		t.Error("trailing data accepted")
	}
}
