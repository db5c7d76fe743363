package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/manejo/manejo/sinm/client"
	"github.com/manejo/manejo/sinm/client/clienttest"
)

const (
	clientID = "11222333000181" // the operator's CNPJ is its Keycloak client id
	secret   = "s3cr3t-value-never-shown"
	cpf      = "52998224725"
	cnpj     = "11444777000161"
)

// payload returns a valid payload (the schema example with a CPF and a
// CNPJ) whose declividadeMedia is slope, so tests can change it.
func payload(t *testing.T, slope int) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "example-complete.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	m["declividadeMedia"] = slope
	m["cpfProdutor"] = cpf
	m["cnpjPropriedade"] = cnpj
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// rig is a fake SINM, a client of it that records its waits and log lines,
// and a ledger in a temporary folder.
type rig struct {
	fake   *clienttest.Fake
	c      *client.Client
	ledger string
	mu     sync.Mutex
	waits  []time.Duration
	logs   []string
}

func newRig(t *testing.T, keys ...string) *rig {
	t.Helper()
	r := &rig{fake: clienttest.New(clientID, secret), ledger: filepath.Join(t.TempDir(), "sinm", "submissions.jsonl")}
	t.Cleanup(r.fake.Close)
	for _, k := range keys {
		r.fake.Keys[k] = true
	}
	r.c = r.client(nil)
	return r
}

func (r *rig) client(now func() time.Time) *client.Client {
	return &client.Client{
		BaseURL: r.fake.URL,
		Tokens:  &client.Tokens{URL: r.fake.TokenURL(), Creds: client.Credentials{ClientID: clientID, Secret: secret}, Now: now},
		Sleep: func(ctx context.Context, d time.Duration) error {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.waits = append(r.waits, d)
			return ctx.Err()
		},
		Logf: func(format string, args ...any) {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.logs = append(r.logs, fmt.Sprintf(format, args...))
		},
	}
}

func (r *rig) submit(t *testing.T, ctx context.Context, items []client.Item, opt client.SubmitOptions) ([]client.Outcome, error) {
	t.Helper()
	led, err := client.OpenLedger(r.ledger)
	if err != nil {
		t.Fatal(err)
	}
	defer led.Close()
	return client.Submit(ctx, r.c, led, items, opt)
}

// key returns a classification key long enough to be redacted.
func key(n int) string { return fmt.Sprintf("CHAVE-%02d-9f8e7d6c5b4a", n) }

func byField(out []client.Outcome) map[string]client.Outcome {
	m := map[string]client.Outcome{}
	for _, o := range out {
		m[o.FieldID] = o
	}
	return m
}

func TestSubmitRetriesAndReportsFieldErrors(t *testing.T) {
	r := newRig(t, key(1), key(2), key(3), key(4))
	r.fake.Unauthorized()
	r.fake.Fail(key(1), clienttest.Reply{Code: 429, RetryAfter: "3"})
	r.fake.Fail(key(2), clienttest.Reply{Code: 500}, clienttest.Reply{Code: 503})
	r.fake.Fail(key(3), clienttest.Reply{Code: 422, Body: clienttest.Problem422("529.982.247-25")})
	r.fake.Fail(key(4), clienttest.Reply{Reset: true})
	var items []client.Item
	for i := 1; i <= 4; i++ {
		items = append(items, client.Item{FieldID: fmt.Sprint("T", i), Key: key(i), Payload: payload(t, 4)})
	}
	out, err := r.submit(t, context.Background(), items, client.SubmitOptions{Concurrency: 1})
	if err != nil {
		t.Fatal(err)
	}
	got := byField(out)
	for _, id := range []string{"T1", "T2", "T4"} {
		if o := got[id]; o.Code != 201 || o.UUID == "" {
			t.Errorf("%s: %+v, want 201 with a uuid", id, o)
		}
	}
	bad := got["T3"]
	if bad.Code != 422 || len(bad.Errors) != 3 ||
		bad.Errors[1] != "indices[0].ndvi: deve ser menor ou igual a 1" || !strings.Contains(bad.Errors[0], "[redacted]") {
		t.Errorf("T3: %+v, want 422 with the detail scrubbed and two field messages", bad)
	}
	if s := client.Summarise(out); s["sent"] != 3 || s["rejected"] != 1 {
		t.Errorf("summary %v", s)
	}
	// One 401 (token refreshed), one 429, two 5xx, one reset: five retries.
	if n := r.c.Retries(); n != 5 {
		t.Errorf("retries = %d, want 5 (logs %q)", n, r.logs)
	}
	if r.c.Tokens.Fetches() != 2 {
		t.Errorf("token fetches = %d, want 2 (first, after the 401)", r.c.Tokens.Fetches())
	}
	want := []time.Duration{3 * time.Second, time.Second, 2 * time.Second, time.Second}
	if fmt.Sprint(r.waits) != fmt.Sprint(want) {
		t.Errorf("waits %v, want %v (Retry-After 3 s, then backoff 1 s, 2 s; reset 1 s)", r.waits, want)
	}
	for i := 1; i <= 4; i++ {
		if n := len(r.fake.Stored(key(i))); (i == 3 && n != 0) || (i != 3 && n != 1) {
			t.Errorf("SINM holds %d submissions of %s", n, key(i))
		}
	}
	assertNoSecrets(t, r, out, nil)
}

func TestTokenRefreshedBeforeExpiry(t *testing.T) {
	var mu sync.Mutex
	now := time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	r := newRig(t)
	r.fake.Now, r.fake.ExpiresIn = clock, 300
	r.c = r.client(clock)
	var items []client.Item
	for i := 1; i <= 6; i++ {
		r.fake.Keys[key(i)] = true
		items = append(items, client.Item{FieldID: fmt.Sprint("T", i), Key: key(i), Payload: payload(t, 4)})
	}
	// Each talhão takes 100 s of the fake clock: the 300 s token must be
	// renewed (at 270 s) before the API would refuse it.
	out, err := r.submit(t, context.Background(), items, client.SubmitOptions{Report: func(client.Outcome) {
		mu.Lock()
		defer mu.Unlock()
		now = now.Add(100 * time.Second)
	}})
	if err != nil {
		t.Fatal(err)
	}
	if s := client.Summarise(out); s["sent"] != 6 {
		t.Errorf("summary %v", s)
	}
	if f := r.c.Tokens.Fetches(); f != 2 {
		t.Errorf("token fetches = %d, want 2 (600 s of work, 270 s per token)", f)
	}
	if n := r.fake.Count("401"); n != 0 {
		t.Errorf("%d requests refused with 401: the token was not renewed in time", n)
	}
}

func TestForbiddenStopsTheRun(t *testing.T) {
	r := newRig(t, key(1), key(2), key(3))
	r.fake.Role = false
	var items []client.Item
	for i := 1; i <= 3; i++ {
		items = append(items, client.Item{FieldID: fmt.Sprint("T", i), Key: key(i), Payload: payload(t, 4)})
	}
	out, err := r.submit(t, context.Background(), items, client.SubmitOptions{Concurrency: 1})
	if !errors.Is(err, client.ErrForbidden) || !strings.Contains(err.Error(), "OPERADOR_SENSORIAMENTO_REMOTO") {
		t.Fatalf("err = %v, want ErrForbidden naming the role", err)
	}
	if n := r.fake.Count("POST"); n != 1 {
		t.Errorf("%d POSTs after a 403, want 1", n)
	}
	assertNoSecrets(t, r, out, err)
}

func TestResubmitSendsOnlyNewOrChanged(t *testing.T) {
	for _, noPut := range []bool{false, true} {
		t.Run(fmt.Sprint("noPut=", noPut), func(t *testing.T) {
			r := newRig(t, key(1), key(2))
			r.fake.NoPut = noPut
			items := []client.Item{{FieldID: "A", Key: key(1), Payload: payload(t, 4)}, {FieldID: "B", Key: key(2), Payload: payload(t, 4)}}
			if _, err := r.submit(t, context.Background(), items, client.SubmitOptions{}); err != nil {
				t.Fatal(err)
			}
			out, err := r.submit(t, context.Background(), items, client.SubmitOptions{})
			if err != nil || client.Summarise(out)["unchanged"] != 2 || r.fake.Count("POST") != 2 {
				t.Fatalf("second submit: %v %v, %d POSTs; want both unchanged, nothing sent", client.Summarise(out), err, r.fake.Count("POST"))
			}
			items[1].Payload = payload(t, 7)
			out, err = r.submit(t, context.Background(), items, client.SubmitOptions{})
			if err != nil {
				t.Fatal(err)
			}
			b := byField(out)["B"]
			if client.Summarise(out)["replaced"] != 1 || b.Action != client.ActionChanged {
				t.Errorf("changed payload: %+v", b)
			}
			stored := r.fake.Stored(key(2))
			if noPut {
				// Without PUT the new payload is POSTed: SINM holds both, the later counts.
				if b.Method != "POST" || len(stored) != 2 || !strings.Contains(string(stored[1].Body), `"declividadeMedia":7`) {
					t.Errorf("no PUT: method %s, %d stored", b.Method, len(stored))
				}
			} else if b.Method != "PUT" || len(stored) != 1 || !strings.Contains(string(stored[0].Body), `"declividadeMedia":7`) || r.fake.Count("PUT") != 1 {
				t.Errorf("PUT: method %s, %d stored, %d PUTs", b.Method, len(stored), r.fake.Count("PUT"))
			}
			if n := len(r.fake.Stored(key(1))); n != 1 {
				t.Errorf("A stored %d times", n)
			}
		})
	}
}

func TestKillAndRestartNeitherLosesNorDoubles(t *testing.T) {
	r := newRig(t, key(1), key(2), key(3))
	items := []client.Item{
		{FieldID: "A", Key: key(1), Payload: payload(t, 4)},
		{FieldID: "B", Key: key(2), Payload: payload(t, 4)},
		{FieldID: "C", Key: key(3), Payload: payload(t, 4)},
	}
	held := r.fake.Hold(key(2))
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-held; cancel() }() // the "kill": B's POST is on the wire
	out, err := r.submit(t, ctx, items, client.SubmitOptions{Concurrency: 1})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want cancelled", err)
	}
	if s := client.Summarise(out); s["sent"] != 1 || s["interrupted"] != 1 || s["not started"] != 1 {
		t.Fatalf("first run: %v", s)
	}
	// A kill can also cut the ledger's last line in half.
	f, _ := os.OpenFile(r.ledger, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"time":"2026-07-01T00:00:00Z","op":"intent","id":"cut`)
	f.Close()
	led, err := client.OpenLedger(r.ledger)
	if err != nil {
		t.Fatal(err)
	}
	if led.Skipped != 1 || led.State("B").Unresolved == nil {
		t.Errorf("ledger after the kill: skipped %d, B unresolved %v", led.Skipped, led.State("B").Unresolved)
	}
	led.Close()

	out, err = r.submit(t, context.Background(), items, client.SubmitOptions{Concurrency: 2})
	if err != nil {
		t.Fatal(err)
	}
	got := byField(out)
	if got["A"].Action != client.ActionUnchanged || got["B"].Action != client.ActionResend || got["C"].Action != client.ActionNew {
		t.Errorf("restart actions: A %s, B %s, C %s", got["A"].Action, got["B"].Action, got["C"].Action)
	}
	if s := client.Summarise(out); s["recovered"] != 1 || s["sent"] != 2 {
		t.Errorf("restart: %v", s)
	}
	for i := 1; i <= 3; i++ {
		if n := len(r.fake.Stored(key(i))); n != 1 {
			t.Errorf("%s stored %d times, want 1", key(i), n)
		}
	}
	led, _ = client.ReadLedger(r.ledger)
	for _, id := range []string{"A", "B", "C"} {
		if st := led.State(id); st.Delivered == nil || st.Unresolved != nil {
			t.Errorf("%s: ledger state %+v", id, st)
		}
	}
	// A third run sends nothing.
	out, _ = r.submit(t, context.Background(), items, client.SubmitOptions{})
	if s := client.Summarise(out); s["unchanged"] != 3 {
		t.Errorf("third run: %v", s)
	}
}

func TestHoldUnresolved(t *testing.T) {
	r := newRig(t, key(1))
	items := []client.Item{{FieldID: "A", Key: key(1), Payload: payload(t, 4)}}
	held := r.fake.Hold(key(1))
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-held; cancel() }()
	_, _ = r.submit(t, ctx, items, client.SubmitOptions{})
	out, err := r.submit(t, context.Background(), items, client.SubmitOptions{HoldUnresolved: true})
	if err != nil || out[0].Action != client.ActionHeld || len(r.fake.Stored(key(1))) != 0 {
		t.Errorf("held: %+v %v", out[0], err)
	}
}

func TestBadCredentialsNameNoSecret(t *testing.T) {
	r := newRig(t, key(1))
	r.c.Tokens.Creds.Secret = "wrong-" + secret
	items := []client.Item{{FieldID: "A", Key: key(1), Payload: payload(t, 4)}, {FieldID: "B", Key: key(2), Payload: payload(t, 4)}}
	out, err := r.submit(t, context.Background(), items, client.SubmitOptions{})
	if !errors.Is(err, client.ErrCredentials) || len(out[0].Errors) == 0 || !strings.Contains(out[0].Errors[0], "unauthorized_client") {
		t.Errorf("err %v, errors %q, want Keycloak's refusal", err, out[0].Errors)
	}
	if r.fake.Count("TOKEN") != 1 || len(r.waits) != 0 || out[1].FieldID != "" {
		t.Errorf("%d token requests, waits %v, B %+v: refused credentials must stop the run at once", r.fake.Count("TOKEN"), r.waits, out[1])
	}
	assertNoSecrets(t, r, out, err)
}

// assertNoSecrets checks the log lines, outcomes, error and ledger for the
// secret, the client id (a CNPJ), the CPF, the property CNPJ and full keys.
func assertNoSecrets(t *testing.T, r *rig, out []client.Outcome, err error) {
	t.Helper()
	ledger, _ := os.ReadFile(r.ledger)
	text := strings.Join(r.logs, "\n") + fmt.Sprintf("%+v %v", out, err) + string(ledger) + fmt.Sprintf("%v %+v %#v", r.c.Tokens.Creds, r.c.Tokens.Creds, r.c.Tokens.Creds)
	for _, s := range []string{secret, clientID, cpf, "529.982.247-25", cnpj, key(1), key(2), key(3), key(4)} {
		if strings.Contains(text, s) {
			t.Errorf("output contains %q", s)
		}
	}
}

func TestServerErrorsExhaustRetriesThenNextRunSends(t *testing.T) {
	r := newRig(t, key(1))
	r.c.MaxAttempts = 3
	r.fake.Fail(key(1), clienttest.Reply{Code: 500}, clienttest.Reply{Code: 502}, clienttest.Reply{Code: 503, RetryAfter: "7"})
	items := []client.Item{{FieldID: "A", Key: key(1), Payload: payload(t, 4)}}
	out, err := r.submit(t, context.Background(), items, client.SubmitOptions{})
	if err != nil || out[0].Code != 503 || client.Summarise(out)["failed"] != 1 || !strings.Contains(out[0].Errors[0], "gave up after 3 attempts") {
		t.Fatalf("first run: %+v %v", out[0], err)
	}
	if fmt.Sprint(r.waits) != "[1s 2s]" {
		t.Errorf("waits %v, want [1s 2s] (no wait after the last attempt)", r.waits)
	}
	out, _ = r.submit(t, context.Background(), items, client.SubmitOptions{})
	if out[0].Action != client.ActionNew || out[0].Code != 201 || len(r.fake.Stored(key(1))) != 1 {
		t.Errorf("second run: %+v", out[0])
	}
}

func TestDryRunSendsNothingAndValidates(t *testing.T) {
	r := newRig(t, key(1), key(2))
	bad := strings.Replace(string(payload(t, 4)), `"declividadeMedia":4`, `"declividadeMedia":400`, 1)
	items := []client.Item{{FieldID: "A", Key: key(1), Payload: payload(t, 4)}, {FieldID: "B", Key: key(2), Payload: []byte(bad)}}
	led, err := client.ReadLedger(r.ledger)
	if err != nil {
		t.Fatal(err)
	}
	out, err := client.Submit(context.Background(), nil, led, items, client.SubmitOptions{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	got := byField(out)
	if !got["A"].Planned || got["A"].Method != "POST" || got["A"].Counts.Indices != 2 || got["B"].Action != client.ActionInvalid ||
		len(got["B"].Errors) == 0 || !strings.HasPrefix(got["B"].Errors[0], "$.declividadeMedia") {
		t.Errorf("dry run: %+v", out)
	}
	if r.fake.Count("TOKEN")+r.fake.Count("POST") != 0 {
		t.Error("dry run used the network")
	}
	if _, err := os.Stat(r.ledger); err == nil {
		t.Error("dry run wrote the ledger")
	}
}

func TestKeysNeedingEscapesStayRedacted(t *testing.T) {
	odd := "chave/com espaço?" + key(9)
	r := newRig(t)
	r.c.MaxAttempts = 2
	r.fake.Fail(odd, clienttest.Reply{Reset: true}, clienttest.Reply{Reset: true})
	out, _ := r.submit(t, context.Background(), []client.Item{{FieldID: "A", Key: odd, Payload: payload(t, 4)}}, client.SubmitOptions{})
	if len(out[0].Errors) == 0 || !strings.Contains(out[0].Errors[0], "gave up") {
		t.Errorf("resets: %+v", out[0])
	}
	out2, _ := r.submit(t, context.Background(), []client.Item{{FieldID: "A", Key: odd, Payload: payload(t, 4)}}, client.SubmitOptions{})
	if out2[0].Code != 404 {
		t.Errorf("unregistered key: %+v", out2[0])
	}
	text := fmt.Sprintf("%+v %+v %q", out, out2, r.logs)
	for _, s := range []string{odd, url.PathEscape(odd), key(9)} {
		if strings.Contains(text, s) {
			t.Errorf("output contains the key as %q:\n%s", s, text)
		}
	}
}
