// Package jsonstream reads large JSON documents one value at a time with a
// bound on the size of each value, so that memory grows with the largest
// value, not with the document: the talhões file (grid) and STAC catalogs
// (series) are read through it (issue 19 defect 12).
//
// Whitespace outside strings is squeezed to one byte before the decoder
// sees it, so a document padded with megabytes of whitespace costs nothing,
// whatever the position of the padding.
package jsonstream

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// ErrTooLarge is the error of a value larger than the decoder's limit.
var ErrTooLarge = errors.New("jsonstream: value larger than the limit")

// Decoder reads a JSON stream token by token, or value by value.
type Decoder struct {
	dec *json.Decoder
	br  *boundedReader
}

// NewDecoder returns a decoder of r whose Value refuses a value of more
// than about limit bytes (after whitespace squeezing; bytes the decoder had
// already buffered, at most twice the largest earlier value, count as
// free). Numbers decode as json.Number.
func NewDecoder(r io.Reader, limit int64) *Decoder {
	br := &boundedReader{r: &squeezer{r: r}, limit: limit}
	d := json.NewDecoder(br)
	d.UseNumber()
	return &Decoder{dec: d, br: br}
}

// Token returns the next token (see json.Decoder.Token).
func (d *Decoder) Token() (json.Token, error) { return d.dec.Token() }

// More reports whether the current array or object has another element.
func (d *Decoder) More() bool { return d.dec.More() }

// Value reads the next value whole; what names it in the error of a value
// over the limit.
func (d *Decoder) Value(what string) (json.RawMessage, error) {
	d.br.mark = d.dec.InputOffset()
	var raw json.RawMessage
	err := d.dec.Decode(&raw)
	d.br.mark = d.br.n
	if d.br.over {
		return nil, fmt.Errorf("%s: %w (%d MiB)", what, ErrTooLarge, d.br.limit>>20)
	}
	return raw, err
}

// Expect reads one delimiter token and fails on anything else.
func (d *Decoder) Expect(want json.Delim) error {
	tok, err := d.dec.Token()
	if err != nil {
		return err
	}
	if tok != want {
		return fmt.Errorf("%v where %v was expected", tok, want)
	}
	return nil
}

// ReadErr returns the error of the underlying reader (ErrTooLarge for a
// value over the limit), nil while it has only returned data or io.EOF: it
// tells a failed read from malformed JSON.
func (d *Decoder) ReadErr() error { return d.br.err }

// End fails unless only whitespace is left in the stream.
func (d *Decoder) End() error {
	if _, err := d.dec.Token(); err != io.EOF {
		return errors.New("data after the top-level value")
	}
	return nil
}

// boundedReader fails a read once more than limit bytes have been read
// since mark: the JSON decoder buffers one value at a time, so this bounds
// its buffer to the limit and one read.
type boundedReader struct {
	r       io.Reader
	n, mark int64
	limit   int64
	over    bool
	err     error // first read error other than io.EOF
}

func (b *boundedReader) Read(p []byte) (int, error) {
	if b.n-b.mark > b.limit {
		b.over = true
		b.err = ErrTooLarge
		return 0, ErrTooLarge
	}
	k, err := b.r.Read(p)
	b.n += int64(k)
	if err != nil && err != io.EOF && b.err == nil {
		b.err = err
	}
	return k, err
}

// squeezer turns every run of JSON whitespace outside strings into one
// space. Inside strings (escapes included) bytes pass unchanged; invalid
// JSON stays invalid.
type squeezer struct {
	r                 io.Reader
	inString, escaped bool
	lastSpace         bool
	buf               []byte
}

func (s *squeezer) Read(p []byte) (int, error) {
	if len(s.buf) < len(p) {
		s.buf = make([]byte, len(p))
	}
	for {
		k, err := s.r.Read(s.buf[:len(p)])
		n := 0
		for _, c := range s.buf[:k] {
			switch {
			case s.inString:
				switch {
				case s.escaped:
					s.escaped = false
				case c == '\\':
					s.escaped = true
				case c == '"':
					s.inString = false
				}
			case c == ' ' || c == '\t' || c == '\n' || c == '\r':
				if s.lastSpace {
					continue
				}
				s.lastSpace = true
				c = ' '
			default:
				s.lastSpace = false
				s.inString = c == '"'
			}
			p[n] = c
			n++
		}
		if n > 0 || err != nil {
			return n, err
		}
	}
}
