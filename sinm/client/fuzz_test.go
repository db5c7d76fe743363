package client

import (
	"bytes"
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzParseLedger: any bytes are read without error or panic, lines of
// any length included; every non-blank line is a record or Skipped; the
// records written back by Append's encoding read back the same.
func FuzzParseLedger(f *testing.F) {
	f.Add([]byte(`{"time":"2026-07-01T00:00:00Z","op":"intent","id":"a","field_id":"A","key":"K…","key_sha256":"h","payload_sha256":"p","method":"POST"}` + "\n" +
		`{"time":"2026-07-01T00:00:01Z","op":"result","id":"a","field_id":"A","code":201,"uuid":"u","errors":["x"]}` + "\n"))
	f.Add([]byte(`{"op":"intent","id":"cut`))
	f.Add([]byte("\n\n  \n{}\n[1,2]\n" + `{"id":"x","op":"result","code":422,"errors":["` + strings.Repeat("é", 2000) + `"]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		l := parseLedger(data)
		lines := 0
		for line := range bytes.SplitSeq(data, []byte("\n")) {
			if len(bytes.TrimSpace(line)) > 0 {
				lines++
			}
		}
		if len(l.records)+l.Skipped != lines {
			t.Fatalf("%d records + %d skipped, %d non-blank lines", len(l.records), l.Skipped, lines)
		}
		var again bytes.Buffer
		for _, r := range l.records {
			b, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			again.Write(append(b, '\n'))
		}
		l2 := parseLedger(again.Bytes())
		if l2.Skipped != 0 || len(l2.records) != len(l.records) {
			t.Fatalf("round trip: %d records, %d skipped; want %d, 0", len(l2.records), l2.Skipped, len(l.records))
		}
		for id := range l.state {
			a, b := l.state[id], l2.state[id]
			if (a.Delivered == nil) != (b.Delivered == nil) || (a.Unresolved == nil) != (b.Unresolved == nil) {
				t.Fatalf("field %q: state %+v, after a round trip %+v", id, a, b)
			}
		}
	})
}

// FuzzClean: a secret of 11 bytes or more never survives clean, whatever
// surrounds it and in whichever spelling (raw, form, path, JSON) it comes;
// a message is never longer than MaxMessageBytes and its cut suffix, and
// stays valid UTF-8 when it was.
func FuzzClean(f *testing.F) {
	f.Add("s3cr3t-value-never-shown", "Keycloak: invalid client_secret=", "!", "token-abcdef0123")
	f.Add(`p@ss/w+rd&x=ü "q"`, "d]", "ed]", "ed]p@ss")
	f.Add("d]0123456789ab", "[redacte", "0123456789ab", "")
	f.Fuzz(func(t *testing.T, secret, before, after, token string) {
		if len(secret) < 11 {
			return
		}
		tk := &Tokens{}
		tk.secrets.add(secret, token)
		c := &Client{Tokens: tk}
		j, _ := json.Marshal(secret)
		for _, form := range []string{secret, url.QueryEscape(secret), url.PathEscape(secret), strings.Trim(string(j), `"`)} {
			msg := before + form + after
			got := c.scrubAll(msg, "")
			if strings.Contains(got, secret) {
				t.Fatalf("clean(%q) = %q keeps the secret", msg, got)
			}
			capped := c.clean(msg, "")
			if len(capped) > MaxMessageBytes+len("… [9999999999 bytes cut]") {
				t.Fatalf("clean kept %d bytes", len(capped))
			}
			if utf8.ValidString(msg) && !utf8.ValidString(capped) {
				t.Fatalf("clean(%q) = %q is not UTF-8", msg, capped)
			}
		}
	})
}
