package client_test

// Issue 27's attacks on SINM delivery (D1–D6, D20), each against the fake
// Keycloak and SINM on loopback and, for redirects, a second loopback
// server (another origin) that records what it gets.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/manejo/manejo/sinm/client"
	"github.com/manejo/manejo/sinm/client/clienttest"
)

// nastySecret needs escaping in a form, a path and JSON: a server echoing
// it may spell it in any of those ways.
const nastySecret = `p@ss/w+rd&x=ü "q" <tag>`

func items3(t *testing.T) []client.Item {
	var items []client.Item
	for i := 1; i <= 3; i++ {
		items = append(items, client.Item{FieldID: fmt.Sprint("T", i), Key: key(i), Payload: payload(t, 4)})
	}
	return items
}

// TestRedirectToAnotherHostRefused reproduces D1 (the token endpoint
// answers 307/308 to another host: the form with the secret was re-posted
// there, 180 times) and D4 (SINM answers 307 to another host: the payload
// and the key reached it). Now nothing reaches the other host, the run
// stops at the first refusal without retrying, and a redirect within the
// same origin is still followed.
func TestRedirectToAnotherHostRefused(t *testing.T) {
	for _, tc := range []struct {
		name  string
		token bool // redirect the token request, else the first POST
		code  int
	}{{"token 307", true, 307}, {"token 308", true, 308}, {"token 302", true, 302}, {"api 307", false, 307}, {"api 308", false, 308}, {"api 303", false, 303}} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, key(1), key(2), key(3))
			thief := clienttest.NewThief()
			defer thief.Close()
			if tc.token {
				r.fake.FailToken(clienttest.Reply{Code: tc.code, Location: thief.URL + clienttest.TokenPath + "?client_secret=" + url.QueryEscape(secret)})
			} else {
				r.fake.Fail(key(1), clienttest.Reply{Code: tc.code, Location: thief.URL + "/api/v1/sensoriamentos-remotos/" + key(1)})
			}
			out, err := r.submit(t, context.Background(), items3(t), client.SubmitOptions{Concurrency: 1})
			if got := thief.Requests(); len(got) != 0 {
				t.Fatalf("the other host received %d request(s): %q", len(got), got)
			}
			if !errors.Is(err, client.ErrRedirect) || !strings.Contains(err.Error(), strings.TrimPrefix(thief.URL, "http://")) {
				t.Errorf("err = %v, want ErrRedirect naming the other host", err)
			}
			wantTokens, wantPosts := 1, 1
			if tc.token {
				wantPosts = 0
			}
			if n := r.fake.Count("TOKEN"); n != wantTokens || r.fake.Count("POST") != wantPosts || len(r.waits) != 0 {
				t.Errorf("%d token requests, %d POSTs, waits %v: want %d, %d, no retry", n, r.fake.Count("POST"), r.waits, wantTokens, wantPosts)
			}
			if o := out[0]; o.Code != 0 || len(o.Errors) != 1 || !strings.Contains(o.Errors[0], "redirect to another host refused") || out[1].FieldID != "" {
				t.Errorf("outcomes %+v: want T1 failed with the refusal, T2 and T3 not started", out)
			}
			led, _ := client.ReadLedger(r.ledger)
			if st := led.State("T1"); st.Last == nil || st.Unresolved != nil || st.Delivered != nil {
				t.Errorf("ledger of T1: %+v, want a failed result", st)
			}
			assertClean(t, r, out, err)
		})
	}
	t.Run("same origin followed", func(t *testing.T) {
		r := newRig(t, key(1), key(2), key(3))
		r.fake.FailToken(clienttest.Reply{Code: 307, Location: r.fake.TokenURL()})
		r.fake.Fail(key(1), clienttest.Reply{Code: 308, Location: r.fake.URL + "/api/v1/sensoriamentos-remotos/" + key(1)})
		out, err := r.submit(t, context.Background(), items3(t), client.SubmitOptions{})
		if err != nil || client.Summarise(out)["sent"] != 3 || len(r.fake.Stored(key(1))) != 1 {
			t.Errorf("same-origin redirects: %v %v, %d stored", client.Summarise(out), err, len(r.fake.Stored(key(1))))
		}
	})
}

// TestEchoedSecretsScrubbed reproduces D2 (Keycloak 400/500 whose body
// echoes the form: the secret reached stderr, the ledger and its Parquet
// copy) and D3 (a SINM 422 echoing the Authorization header: the token
// reached them too). The secret needs escaping, so the echo spells it
// encoded as well as raw.
func TestEchoedSecretsScrubbed(t *testing.T) {
	for _, tc := range []struct {
		name    string
		setup   func(r *rig)
		wantErr error
	}{
		{"keycloak 400", func(r *rig) { r.fake.FailToken(clienttest.Reply{Code: 400, Echo: true}) }, client.ErrCredentials},
		{"keycloak 500", func(r *rig) {
			r.c.MaxAttempts = 2
			r.fake.FailToken(clienttest.Reply{Code: 500, Echo: true}, clienttest.Reply{Code: 500, Echo: true})
		}, nil},
		{"sinm 422", func(r *rig) { r.fake.Fail(key(1), clienttest.Reply{Code: 422, Echo: true}) }, nil},
		{"sinm 403", func(r *rig) { r.fake.Fail(key(1), clienttest.Reply{Code: 403, Echo: true}) }, client.ErrForbidden},
		{"sinm 500", func(r *rig) {
			r.c.MaxAttempts = 2
			r.fake.Fail(key(1), clienttest.Reply{Code: 500, Echo: true}, clienttest.Reply{Code: 503, Echo: true})
		}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, key(1), key(2), key(3))
			r.fake.Secret, r.c.Tokens.Creds.Secret = nastySecret, nastySecret
			tc.setup(r)
			out, err := r.submit(t, context.Background(), items3(t), client.SubmitOptions{Concurrency: 1})
			if tc.wantErr != nil && !errors.Is(err, tc.wantErr) || tc.wantErr == nil && err != nil {
				t.Errorf("err = %v, want %v", err, tc.wantErr)
			}
			if len(out[0].Errors) == 0 {
				t.Errorf("T1: %+v, want the server's answer reported", out[0])
			}
			assertClean(t, r, out, err)
		})
	}
}

// assertClean checks every output of a rig — log lines, outcomes, the
// error, the ledger and its Parquet rows — for the secrets (the test's and
// nastySecret, raw and escaped), every token the fake issued, the client
// id, the CPF and CNPJs (bare and punctuated) and full keys.
func assertClean(t *testing.T, r *rig, out []client.Outcome, err error) {
	t.Helper()
	assertNoSecrets(t, r, out, err)
	ledger, _ := os.ReadFile(r.ledger)
	var rows string
	if led, lerr := client.ReadLedger(r.ledger); lerr == nil {
		rows = fmt.Sprintf("%+v", led.Rows())
	}
	text := strings.Join(r.logs, "\n") + fmt.Sprintf("%+v %v", out, err) + string(ledger) + rows
	forbidden := []string{"11.222.333/0001-81", "114.447.770/00161", "11.444.777/0001-61"}
	for _, s := range []string{secret, nastySecret, key(1), key(2), key(3)} {
		forbidden = append(forbidden, s, url.QueryEscape(s), url.PathEscape(s))
	}
	forbidden = append(forbidden, r.fake.Issued()...)
	for _, s := range forbidden {
		if strings.Contains(text, s) {
			t.Errorf("output contains %q", s)
		}
	}
}

// TestHugeProblemCapped reproduces D5: a 1.5 MB problem detail (and
// 100,000 field messages) gave the ledger a 1.5 MB line, and every later
// submit and status failed with "bufio.Scanner: token too long". Stored
// messages are now capped, and the next submit reads the ledger.
func TestHugeProblemCapped(t *testing.T) {
	r := newRig(t, key(1), key(2))
	var fields strings.Builder
	for i := range 100000 {
		fmt.Fprintf(&fields, `{"field":"f%d","message":"bad"},`, i)
	}
	huge := fmt.Sprintf(`{"title":"Unprocessable","detail":%q,"fields":[%s{"field":"x","message":"y"}]}`, strings.Repeat("á", 750000), fields.String())
	r.fake.Fail(key(1), clienttest.Reply{Code: 422, Body: huge})
	items := []client.Item{{FieldID: "A", Key: key(1), Payload: payload(t, 4)}, {FieldID: "B", Key: key(2), Payload: payload(t, 4)}}
	out, err := r.submit(t, context.Background(), items, client.SubmitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	a := out[0]
	if a.Code != 422 || len(a.Errors) != client.MaxMessages || !strings.Contains(a.Errors[0], "bytes cut]") ||
		a.Errors[client.MaxMessages-1] != fmt.Sprintf("… and %d more message(s) not kept", 100002-client.MaxMessages+1) {
		t.Errorf("A: %d errors, first %.60q, last %q", len(a.Errors), a.Errors[0], a.Errors[len(a.Errors)-1])
	}
	for _, e := range a.Errors {
		if len(e) > client.MaxMessageBytes+32 {
			t.Errorf("a message of %d bytes kept", len(e))
		}
	}
	ledger, _ := os.ReadFile(r.ledger)
	for i, line := range bytes.Split(ledger, []byte("\n")) {
		if len(line) > 64<<10 {
			t.Errorf("ledger line %d is %d bytes", i+1, len(line))
		}
	}
	r.fake.Fail(key(1)) // nothing queued: the next POST of A is accepted
	out, err = r.submit(t, context.Background(), items, client.SubmitOptions{})
	if err != nil || out[0].Code != 201 || out[1].Action != client.ActionUnchanged {
		t.Errorf("next submit: %+v %v", out, err)
	}
}

// TestLedgerReadsLongLines: a ledger written before the caps, with a
// 1.5 MB line, is read (submit and status went on failing on it).
func TestLedgerReadsLongLines(t *testing.T) {
	r := newRig(t, key(1))
	os.MkdirAll(strings.TrimSuffix(r.ledger, "/submissions.jsonl"), 0o755)
	long := fmt.Sprintf(`{"time":"2026-07-01T00:00:00Z","op":"result","id":"a1","field_id":"A","key":"CHAV…","key_sha256":"%s","payload_sha256":"p","method":"POST","code":422,"errors":[%q]}`,
		client.KeyHash(key(1)), strings.Repeat("x", 1500000))
	ok := fmt.Sprintf(`{"time":"2026-07-02T00:00:00Z","op":"result","id":"b2","field_id":"A","key":"CHAV…","key_sha256":"%s","payload_sha256":"p","method":"POST","code":201,"uuid":"u1"}`, client.KeyHash(key(1)))
	if err := os.WriteFile(r.ledger, []byte(long+"\n"+ok+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, open := range []func(string) (*client.Ledger, error){client.ReadLedger, client.OpenLedger} {
		led, err := open(r.ledger)
		if err != nil {
			t.Fatalf("%v", err)
		}
		if st := led.State("A"); led.Skipped != 0 || st.Delivered == nil || st.Delivered.UUID != "u1" || len(led.Rows()) != 2 {
			t.Errorf("state %+v, skipped %d, %d rows", st, led.Skipped, len(led.Rows()))
		}
		led.Close()
	}
}

// TestLedgerLock reproduces D6 at the library's level: while one submit
// holds the ledger, a second open of it is refused at once, and taken
// again once the first closes.
func TestLedgerLock(t *testing.T) {
	r := newRig(t, key(1))
	first, err := client.OpenLedger(r.ledger)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.OpenLedger(r.ledger); !errors.Is(err, client.ErrLedgerBusy) || !strings.Contains(err.Error(), r.ledger) {
		t.Errorf("second open: %v, want ErrLedgerBusy naming the ledger", err)
	}
	if _, err := client.ReadLedger(r.ledger); err != nil {
		t.Errorf("reading a held ledger: %v", err)
	}
	first.Close()
	second, err := client.OpenLedger(r.ledger)
	if err != nil {
		t.Fatalf("after the first closed: %v", err)
	}
	second.Close()
}

// TestStatusUnreadableLevel reproduces D20: a classification whose level
// manejo cannot read was "complete" with no level and no warning. It is now
// an error naming what SINM sent; the racional is still read.
func TestStatusUnreadableLevel(t *testing.T) {
	r := newRig(t, key(1), key(2), key(3))
	if _, err := r.submit(t, context.Background(), items3(t), client.SubmitOptions{}); err != nil {
		t.Fatal(err)
	}
	r.fake.Classification[key(1)], r.fake.Racional[key(1)] = `{"nivelManejo": "NMX"}`, racional(3, 4)
	r.fake.Classification[key(2)] = `{"nivel": 7, "cpf": "52998224725"}`
	r.fake.Classification[key(3)] = `{"resultado": "` + key(3) + ` 52998224725"}`
	led, _ := client.ReadLedger(r.ledger)
	rows, err := client.Status(context.Background(), r.c, led, map[string]string{"T1": key(1), "T2": key(2), "T3": key(3)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`(nivelManejo: "NMX")`, `(nivel: 7)`, `(none of nivelManejo, nivel, nivelManejoFinal, nivelFinal, classificacao)`}
	for i, row := range rows {
		if row.Status != client.StatusError || row.Level != nil || !strings.Contains(row.Error, "no level manejo can read "+want[i]) {
			t.Errorf("%s: %s %q, want error naming %s", row.FieldID, row.Status, row.Error, want[i])
		}
	}
	if len(rows[0].Indicators) != 4 {
		t.Errorf("T1 racional not read: %q", rows[0].Indicators)
	}
	assertClean(t, r, nil, fmt.Errorf("%+v", rows))
}
