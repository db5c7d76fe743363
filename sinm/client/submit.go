package client

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"regexp"
	"sync"

	"github.com/manejo/manejo/sinm"
)

// Item is one talhão to deliver: its id, its classification key and its
// payload bytes (sinm/<field>.json of the output folder).
type Item struct {
	FieldID, Key string
	Payload      []byte
}

// Actions of an Outcome.
const (
	ActionNew       = "new"       // never delivered: POST
	ActionChanged   = "changed"   // delivered, payload or key changed since: PUT (or POST)
	ActionResend    = "resend"    // an earlier request's fate is unknown (intent without result)
	ActionUnchanged = "unchanged" // delivered with these bytes and this key: nothing sent
	ActionInvalid   = "invalid"   // fails the schema: nothing sent
	ActionHeld      = "held"      // resend held back (SubmitOptions.HoldUnresolved)
)

// Outcome is what happened to one Item. Errors are scrubbed; the key
// appears only as KeyPrefix.
type Outcome struct {
	FieldID, KeyPrefix string
	Action             string
	Method             string // POST, PUT, "" when nothing was sent
	Code               int    // final HTTP status; 0: none
	UUID               string
	Errors             []string
	Bytes              int
	Counts             PayloadCounts
	Interrupted        bool // cancelled before an answer: the intent stays open
	Planned            bool // dry run: Method is what would be sent
	// Changes say what differs from the payload delivered before
	// (ActionChanged; empty when the ledger predates the summaries).
	Changes []string
}

// Delivered reports a 2xx answer.
func (o Outcome) Delivered() bool { return o.Code >= 200 && o.Code < 300 }

// PayloadCounts are the list lengths of a payload, for reports.
type PayloadCounts struct {
	Indices, Manejo, Cobertura, Cultura int
}

// SubmitOptions configure Submit.
type SubmitOptions struct {
	Concurrency    int  // parallel requests; 0: 1
	DryRun         bool // plan and validate only: no token, no request, no ledger write
	HoldUnresolved bool // do not resend a talhão whose earlier request has no result
	// Report, when set, is called once per Item as it finishes (serialised).
	Report func(Outcome)
}

// Submit validates every payload against the schema, then sends what the
// ledger says is new, changed or unresolved, with opt.Concurrency workers.
// Each request is preceded by an intent record and followed by a result
// record in the ledger. A 403 (ErrForbidden), refused credentials
// (ErrCredentials) or a redirect to another host (ErrRedirect) stop the
// run: requests in flight finish, no new one starts; a cancelled ctx stops
// it too, leaving the intents of requests in flight open. Every message in
// the outcomes, the ledger and the returned error has passed one filter
// (no secret, token, full key or CPF/CNPJ; capped, see MaxMessageBytes).
func Submit(ctx context.Context, c *Client, led *Ledger, items []Item, opt SubmitOptions) ([]Outcome, error) {
	out := make([]Outcome, len(items))
	var (
		mu      sync.Mutex
		stopErr error
	)
	stop := make(chan struct{}) // closed on a 403: no new request starts, those in flight finish
	finish := func(i int, o Outcome, err error) {
		mu.Lock()
		defer mu.Unlock()
		out[i] = o
		if opt.Report != nil {
			opt.Report(o)
		}
		if stops(err) && stopErr == nil {
			stopErr = err
			close(stop)
		}
	}
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range max(opt.Concurrency, 1) {
		wg.Go(func() {
			for i := range jobs {
				select {
				case <-stop:
					continue // not started: the next submit sends it
				default:
				}
				o, err := deliver(ctx, c, led, items[i], opt)
				finish(i, o, err)
			}
		})
	}
feed:
	for i := range items {
		select {
		case jobs <- i:
		case <-stop:
			break feed
		case <-ctx.Done():
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	if stopErr != nil {
		return out, c.cleanErr(stopErr, "")
	}
	return out, ctx.Err()
}

// plan decides what to do with it from the ledger.
func plan(led *Ledger, it Item, sum string) (action, method, replaces string) {
	st := led.State(it.FieldID)
	keyHash := KeyHash(it.Key)
	if u := st.Unresolved; u != nil && u.PayloadSHA256 == sum && u.KeySHA256 == keyHash {
		if u.Method == http.MethodPut {
			return ActionResend, http.MethodPut, u.ReplacesUUID // a PUT is idempotent
		}
		return ActionResend, http.MethodPost, u.ReplacesUUID
	}
	d := st.Delivered
	switch {
	case d == nil:
		return ActionNew, http.MethodPost, ""
	case d.PayloadSHA256 == sum && d.KeySHA256 == keyHash:
		return ActionUnchanged, "", ""
	case d.KeySHA256 != keyHash || d.UUID == "":
		return ActionChanged, http.MethodPost, d.UUID // another key is another classification
	}
	return ActionChanged, http.MethodPut, d.UUID
}

// deliver validates, plans and (unless dry run) sends one Item.
func deliver(ctx context.Context, c *Client, led *Ledger, it Item, opt SubmitOptions) (Outcome, error) {
	sum := sha256.Sum256(it.Payload)
	o := Outcome{FieldID: it.FieldID, KeyPrefix: Redact(it.Key), Bytes: len(it.Payload), Counts: countsOf(it.Payload)}
	if v := sinm.ValidatePayload(bytes.NewReader(it.Payload)); len(v) > 0 {
		o.Action = ActionInvalid
		msgs := make([]string, len(v))
		for i, x := range v {
			msgs[i] = x.String()
		}
		o.Errors = c.cleanAll(msgs, it.Key)
		return o, nil
	}
	var replaces string
	o.Action, o.Method, replaces = plan(led, it, hex.EncodeToString(sum[:]))
	if o.Action == ActionResend && opt.HoldUnresolved {
		o.Action, o.Method = ActionHeld, ""
		o.Errors = []string{"an earlier request has no recorded answer; held back (--unresolved hold)"}
	}
	parts := partsOf(it.Payload)
	if o.Action == ActionChanged {
		o.Changes = changes(led.State(it.FieldID).Delivered, KeyHash(it.Key), parts)
	}
	if opt.DryRun || o.Method == "" {
		o.Planned = opt.DryRun && o.Method != ""
		return o, nil
	}
	rec := Record{FieldID: it.FieldID, KeyPrefix: o.KeyPrefix, KeySHA256: KeyHash(it.Key),
		PayloadSHA256: hex.EncodeToString(sum[:]), Bytes: len(it.Payload), Method: o.Method,
		ReplacesUUID: replaces, Recovered: o.Action == ActionResend, Parts: parts}
	err := send(ctx, c, led, it, rec, &o)
	if err == nil && o.Method == http.MethodPut && (o.Code == http.StatusNotFound || o.Code == http.StatusMethodNotAllowed) {
		// This SINM offers no PUT (or lost the uuid): POST the new payload;
		// the latest submission for a key is the one that counts.
		rec.Method, o.Method = http.MethodPost, http.MethodPost
		o.Errors, o.UUID = nil, ""
		err = send(ctx, c, led, it, rec, &o)
	}
	return o, err
}

// send writes the intent, makes the request and writes the result; a
// cancelled ctx leaves the intent open (the process is going away).
func send(ctx context.Context, c *Client, led *Ledger, it Item, rec Record, o *Outcome) error {
	rec.ID, rec.Op = newID(), OpIntent
	if err := led.Append(rec); err != nil {
		o.Errors = append(o.Errors, err.Error())
		return err
	}
	path := "/api/v1/sensoriamentos-remotos/" + url.PathEscape(it.Key)
	if rec.Method == http.MethodPut {
		path = "/api/v1/sensoriamentos-remotos/" + url.PathEscape(rec.ReplacesUUID)
	}
	resp, err := c.request(ctx, rec.Method, path, it.Payload, it.Key)
	if ctx.Err() != nil && !stops(err) {
		o.Interrupted = true
		o.Errors = append(o.Errors, "interrupted before SINM answered; the ledger keeps the intent")
		return ctx.Err()
	}
	o.Code = resp.Code
	var msgs []string
	switch {
	case err != nil:
		msgs = []string{err.Error()}
	case o.Delivered():
		o.UUID = uuidOf(resp.Body)
		if o.UUID == "" && rec.Method == http.MethodPut {
			o.UUID = rec.ReplacesUUID
		}
	default:
		msgs = parseProblem(resp.Code, resp.Body, it.Key)
	}
	// The one place SINM's words enter the outcome and the ledger.
	o.Errors = append(o.Errors, c.cleanAll(msgs, it.Key)...)
	rec.Op, rec.Code, rec.UUID, rec.Errors = OpResult, o.Code, o.UUID, o.Errors
	if lerr := led.Append(rec); lerr != nil {
		return lerr
	}
	return err
}

// uuidOf reads the submission id of a 201 answer: uuid, or
// uuidSensoriamentoRemoto in some versions. An id that is not a plain
// token (uuidPattern) is not kept: it would go into the ledger and, for a
// later PUT, into a request path.
func uuidOf(body []byte) string {
	var r struct {
		UUID   string `json:"uuid"`
		UUIDSR string `json:"uuidSensoriamentoRemoto"`
	}
	_ = json.Unmarshal(body, &r)
	if u := cmp.Or(r.UUID, r.UUIDSR); uuidPattern.MatchString(u) {
		return u
	}
	return ""
}

// uuidPattern is what a submission id may look like.
var uuidPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// countsOf counts the lists of a payload (zero when it is not JSON).
func countsOf(b []byte) PayloadCounts {
	var p sinm.Payload
	if json.Unmarshal(b, &p) != nil {
		return PayloadCounts{}
	}
	return PayloadCounts{len(p.Indices), len(p.InterpretacoesManejo), len(p.InterpretacoesCoberturaSolo), len(p.InterpretacoesCultura)}
}

// Summarise counts outcomes by what happened: sent, replaced, unchanged,
// rejected (4xx), failed (no answer or 5xx after retries), invalid, held,
// interrupted, recovered (resent after an open intent).
func Summarise(out []Outcome) map[string]int {
	m := map[string]int{}
	for _, o := range out {
		switch {
		case o.FieldID == "":
			m["not started"]++
		case o.Interrupted:
			m["interrupted"]++
		case o.Action == ActionInvalid, o.Action == ActionHeld, o.Action == ActionUnchanged:
			m[o.Action]++
		case o.Planned:
			m["would send "+o.Action]++
		case o.Delivered() && o.Action == ActionChanged:
			m["replaced"]++
		case o.Delivered():
			m["sent"]++
		case o.Code >= 400 && o.Code < 500:
			m["rejected"]++
		default:
			m["failed"]++
		}
		if o.Action == ActionResend && o.Delivered() {
			m["recovered"]++
		}
	}
	return m
}

// stops reports the errors that end a run: every further request would
// fail the same way.
func stops(err error) bool {
	return errors.Is(err, ErrForbidden) || errors.Is(err, ErrCredentials) || errors.Is(err, ErrRedirect)
}
