package client

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// Redact shows a classification key (a capability: whoever holds it reads
// the result) as its first four characters and an ellipsis.
func Redact(key string) string {
	r := []rune(key)
	if len(r) <= 8 {
		return "…"
	}
	return string(r[:4]) + "…"
}

// KeyHash is the hex sha256 of a key, kept in the ledger instead of the key.
func KeyHash(key string) string {
	h := sha256.Sum256([]byte(key))
	return hex.EncodeToString(h[:])
}

// digitRun matches 11 or more digits, possibly punctuated as CPFs and CNPJs
// are (". - / space").
var digitRun = regexp.MustCompile(`\d(?:[.\-/ ]?\d){10,}`)

// Scrub replaces, in a message from SINM or Keycloak, every run of 11 or
// more digits (a CPF, a CNPJ, the client id) by "[redacted]".
func Scrub(s string) string {
	return digitRun.ReplaceAllString(s, "[redacted]")
}

// Problem is an RFC 7807 Problem Details answer of SINM.
type Problem struct {
	Type       string       `json:"type"`
	CodigoErro any          `json:"codigoErro"`
	Title      string       `json:"title"`
	Detail     string       `json:"detail"`
	Instance   string       `json:"instance"`
	Fields     []FieldError `json:"fields"`
	Errors     []FieldError `json:"errors"`
}

// FieldError is one field message of a Problem. SINM versions name the
// parts differently; every spelling seen is accepted.
type FieldError struct {
	Field    string `json:"field"`
	Name     string `json:"name"`
	Campo    string `json:"campo"`
	Message  string `json:"message"`
	Mensagem string `json:"mensagem"`
	Detail   string `json:"detail"`
}

// UnmarshalJSON accepts an object or a bare string.
func (f *FieldError) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		f.Message = s
		return nil
	}
	type plain FieldError
	return json.Unmarshal(b, (*plain)(f))
}

// Messages returns the Problem as short lines, scrubbed of CPF/CNPJ digits
// and of key: the detail (or title) first, then "field: message" per field.
func (p Problem) Messages(key string) []string {
	clean := func(s string) string {
		if key != "" {
			s = strings.ReplaceAll(s, key, Redact(key))
		}
		return Scrub(s)
	}
	var out []string
	if head := strings.TrimSpace(p.Detail); head != "" {
		out = append(out, clean(head))
	} else if p.Title != "" {
		out = append(out, clean(p.Title))
	}
	for _, f := range append(append([]FieldError(nil), p.Fields...), p.Errors...) {
		name := firstNonEmpty(f.Field, f.Name, f.Campo)
		msg := firstNonEmpty(f.Message, f.Mensagem, f.Detail)
		if name != "" {
			msg = name + ": " + msg
		}
		out = append(out, clean(msg))
	}
	return out
}

// parseProblem decodes a Problem Details body; a body that is not one gives
// the status line alone.
func parseProblem(code int, body []byte, key string) []string {
	var p Problem
	if err := json.Unmarshal(body, &p); err == nil {
		if m := p.Messages(key); len(m) > 0 {
			return m
		}
	}
	return []string{fmt.Sprintf("HTTP %d", code)}
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}
