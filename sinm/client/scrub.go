package client

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
)

// Caps on what a server's answer may put into the outcomes, the ledger and
// its Parquet copy (issue 27 D5: one 1.5 MB problem detail made a ledger
// line no reader took).
const (
	// MaxMessageBytes caps one message; a longer one is cut at a character
	// boundary and says how many bytes were cut.
	MaxMessageBytes = 1024
	// MaxMessages caps the messages kept of one answer (Problem fields,
	// racional indicators); the last one kept says how many more there were.
	MaxMessages = 32
)

// secrets are values no message may carry: the client secret and id and
// every token obtained. A server may echo any of them back (issue 27 D2,
// D3); replace removes them whatever the server wrapped them in.
type secrets struct {
	mu   sync.Mutex
	vals []string // longest first, so a value inside another goes after it
}

// add registers values ("" is ignored).
func (s *secrets) add(vals ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, v := range vals {
		if v != "" && !slices.Contains(s.vals, v) {
			s.vals = append(s.vals, v)
		}
	}
	slices.SortFunc(s.vals, func(a, b string) int { return len(b) - len(a) })
}

// replace returns msg with every registered value, raw or escaped as a
// form, a path or a JSON string would carry it, replaced by "[redacted]".
func (s *secrets) replace(msg string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, v := range s.vals {
		msg = replaceForms(msg, v, "[redacted]")
	}
	return msg
}

// replaceForms replaces v in msg, in each of the spellings a server may
// echo it in, by with.
func replaceForms(msg, v, with string) string {
	if v == "" {
		return msg
	}
	j, _ := json.Marshal(v)
	for _, f := range []string{v, url.QueryEscape(v), url.PathEscape(v), strings.Trim(string(j), `"`)} {
		msg = strings.ReplaceAll(msg, f, with)
	}
	return msg
}

// clean returns s as it may leave this package: the client secret, the
// client id and every token replaced by "[redacted]", key shown as its
// Redact prefix, runs of CPF/CNPJ-like digits scrubbed (Scrub), and the
// whole made valid UTF-8 and cut to MaxMessageBytes. It is the one filter every message passes
// on its way to an Outcome, the ledger, a status row, a log line or a
// returned error; c may be nil (a dry run).
func (c *Client) clean(s, key string) string {
	return capMessage(c.scrubAll(s, key))
}

// scrubAll applies the replacements of clean until none applies, so that
// no replacement can leave behind a value it made by joining what was
// around it. A pass that does not shorten the text (a value shorter than
// its replacement) ends the loop.
func (c *Client) scrubAll(s, key string) string {
	for {
		next := s
		if c != nil && c.Tokens != nil {
			next = c.Tokens.secrets.replace(next)
		}
		if key != "" {
			next = replaceForms(next, key, Redact(key))
		}
		next = Scrub(next)
		if len(next) >= len(s) {
			return next
		}
		s = next
	}
}

// cleanAll cleans msgs and keeps at most MaxMessages of them.
func (c *Client) cleanAll(msgs []string, key string) []string {
	if len(msgs) == 0 {
		return nil
	}
	n := min(len(msgs), MaxMessages)
	out := make([]string, 0, n)
	for _, m := range msgs[:n] {
		out = append(out, c.clean(m, key))
	}
	if len(msgs) > MaxMessages {
		out[n-1] = fmt.Sprintf("… and %d more message(s) not kept", len(msgs)-MaxMessages+1)
	}
	return out
}

// capMessage cuts s to MaxMessageBytes at a character boundary, after
// replacing invalid UTF-8 (a server's bytes, or a replacement inside a
// character) by U+FFFD.
func capMessage(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= MaxMessageBytes {
		return s
	}
	cut := MaxMessageBytes
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… [%d bytes cut]", s[:cut], len(s)-cut)
}

// cleanError is an error whose text went through Client.clean; errors.Is
// still sees the sentinels of the original (ErrForbidden, ErrCredentials,
// ErrRedirect, context.Canceled), but the original text cannot be reached.
type cleanError struct {
	text string
	err  error
}

func (e *cleanError) Error() string        { return e.text }
func (e *cleanError) Is(target error) bool { return errors.Is(e.err, target) }

// cleanErr returns err with its text cleaned (nil stays nil).
func (c *Client) cleanErr(err error, key string) error {
	if err == nil {
		return nil
	}
	if t := c.clean(err.Error(), key); t != err.Error() {
		return &cleanError{text: t, err: err}
	}
	return err
}
