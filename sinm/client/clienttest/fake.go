// Package clienttest is a fake of SINM and its Keycloak on one
// httptest.Server (real HTTP on loopback), built from the shapes the public
// integrator client shows: the client_credentials token endpoint, POST and
// PUT of sensoriamentos-remotos, GET of classificacoes and their racional,
// Problem Details errors. Tests script failures per key (Fail).
package clienttest

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// TokenPath is the token endpoint of the fake realm.
const TokenPath = "/realms/zarcnm-h/protocol/openid-connect/token"

// Reply is a scripted answer.
type Reply struct {
	Code       int
	RetryAfter string // Retry-After header, "" for none
	Body       string // JSON; "" for a generic Problem
	Reset      bool   // close the connection without answering
	Location   string // Location header (a redirect: Code 301, 302, 303, 307 or 308)
	Echo       bool   // the body echoes the request: path, Authorization, form and body (see Echo)
}

// Submission is one payload SINM holds.
type Submission struct {
	UUID, Key string
	Body      []byte
}

// Fake is the fake Keycloak + SINM. Set its fields before the first request.
type Fake struct {
	*httptest.Server
	ClientID, Secret string
	ExpiresIn        int              // token life in seconds; 0: 300
	Now              func() time.Time // nil: time.Now
	Role             bool             // the client has OPERADOR_SENSORIAMENTO_REMOTO
	NoPut            bool             // an older SINM: PUT answers 405
	Keys             map[string]bool  // registered classification keys

	mu             sync.Mutex
	tokens         map[string]time.Time
	fail           map[string][]Reply // by key (POST, GET) or uuid (PUT); TokenPath for the token endpoint
	issued         []string           // every token handed out
	unauthOnce     bool
	held           map[string]chan struct{} // POSTs that block until released
	Subs           []Submission
	Requests       map[string]int // "POST", "PUT", "GET", "TOKEN", "401", "429", "5xx"
	Classification map[string]string
	Racional       map[string]string
}

// New starts a fake with one client (id, secret) holding the role.
func New(id, secret string) *Fake {
	f := &Fake{ClientID: id, Secret: secret, Role: true, Keys: map[string]bool{},
		tokens: map[string]time.Time{}, fail: map[string][]Reply{}, held: map[string]chan struct{}{},
		Requests: map[string]int{}, Classification: map[string]string{}, Racional: map[string]string{}}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	return f
}

// TokenURL is the full token URL.
func (f *Fake) TokenURL() string { return f.URL + TokenPath }

// Fail queues replies for the next requests naming key (or uuid).
func (f *Fake) Fail(key string, r ...Reply) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fail[key] = append(f.fail[key], r...)
}

// FailToken queues replies for the next token requests.
func (f *Fake) FailToken(r ...Reply) { f.Fail(TokenPath, r...) }

// Issued returns every token the fake handed out.
func (f *Fake) Issued() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.issued...)
}

// Unauthorized makes the next API request answer 401 whatever its token.
func (f *Fake) Unauthorized() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.unauthOnce = true
}

// Hold makes POSTs for key block until the client goes away, storing
// nothing (a request cut before SINM committed it); it returns a channel
// closed when the first such POST arrived.
func (f *Fake) Hold(key string) <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	ch := make(chan struct{})
	f.held[key] = ch
	return ch
}

// Count returns the count of a Requests entry.
func (f *Fake) Count(what string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.Requests[what]
}

// Stored returns the submissions held for key.
func (f *Fake) Stored(key string) []Submission {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []Submission
	for _, s := range f.Subs {
		if s.Key == key {
			out = append(out, s)
		}
	}
	return out
}

func (f *Fake) now() time.Time {
	if f.Now != nil {
		return f.Now()
	}
	return time.Now()
}

func (f *Fake) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == TokenPath {
		f.token(w, r)
		return
	}
	f.mu.Lock()
	f.Requests[r.Method]++
	ok := f.authorised(r)
	f.mu.Unlock()
	if !ok {
		f.count("401")
		problem(w, http.StatusUnauthorized, "Unauthorized", "token missing, expired or invalid", nil)
		return
	}
	if !f.Role {
		problem(w, http.StatusForbidden, "Forbidden", "Access Denied", nil)
		return
	}
	rest, found := strings.CutPrefix(r.URL.EscapedPath(), "/api/v1/")
	if !found {
		problem(w, http.StatusNotFound, "Not Found", "no such path", nil)
		return
	}
	parts := strings.Split(rest, "/")
	for i, p := range parts { // a key may hold escaped '/' or spaces
		if u, err := url.PathUnescape(p); err == nil {
			parts[i] = u
		}
	}
	if f.scripted(w, r, parts) {
		return
	}
	switch {
	case r.Method == http.MethodPost && len(parts) == 2 && parts[0] == "sensoriamentos-remotos":
		f.post(w, r, parts[1])
	case r.Method == http.MethodPut && len(parts) == 2 && parts[0] == "sensoriamentos-remotos":
		f.put(w, r, parts[1])
	case r.Method == http.MethodGet && len(parts) >= 2 && parts[0] == "classificacoes":
		f.get(w, parts[1], len(parts) == 3 && parts[2] == "racional")
	default:
		problem(w, http.StatusNotFound, "Not Found", "no such path", nil)
	}
}

func (f *Fake) count(what string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.Requests[what]++
}

// authorised checks the bearer token (f.mu held).
func (f *Fake) authorised(r *http.Request) bool {
	if f.unauthOnce {
		f.unauthOnce = false
		return false
	}
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	exp, known := f.tokens[tok]
	return ok && known && f.now().Before(exp)
}

// scripted answers with the next queued Reply for the request's key.
func (f *Fake) scripted(w http.ResponseWriter, r *http.Request, parts []string) bool {
	if len(parts) < 2 {
		return false
	}
	return f.scriptedFor(w, r, parts[1])
}

// scriptedFor answers with the next Reply queued under name, if any.
func (f *Fake) scriptedFor(w http.ResponseWriter, r *http.Request, name string) bool {
	f.mu.Lock()
	q := f.fail[name]
	if len(q) == 0 {
		f.mu.Unlock()
		return false
	}
	rep := q[0]
	f.fail[name] = q[1:]
	f.mu.Unlock()
	f.reply(w, r, rep)
	return true
}

// reply writes a scripted Reply to r.
func (f *Fake) reply(w http.ResponseWriter, r *http.Request, rep Reply) {
	f.mu.Lock()
	switch {
	case rep.Code == http.StatusTooManyRequests:
		f.Requests["429"]++
	case rep.Code >= 500 || rep.Reset:
		f.Requests["5xx"]++
	}
	f.mu.Unlock()
	if rep.Reset {
		if hj, ok := w.(http.Hijacker); ok {
			if c, _, err := hj.Hijack(); err == nil {
				c.Close()
				return
			}
		}
	}
	if rep.RetryAfter != "" {
		w.Header().Set("Retry-After", rep.RetryAfter)
	}
	if rep.Location != "" {
		w.Header().Set("Location", rep.Location)
	}
	switch {
	case rep.Echo && r.URL.Path == TokenPath:
		writeJSON(w, rep.Code, map[string]string{"error": "invalid_request " + Echo(r), "error_description": Echo(r)})
	case rep.Echo:
		problem(w, rep.Code, Echo(r), Echo(r), []map[string]string{{"field": "Authorization", "message": r.Header.Get("Authorization")}, {"field": "echo", "message": Echo(r)}})
	case rep.Body == "":
		problem(w, rep.Code, http.StatusText(rep.Code), "scripted failure", nil)
	default:
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(rep.Code)
		io.WriteString(w, rep.Body)
	}
}

func (f *Fake) token(w http.ResponseWriter, r *http.Request) {
	f.count("TOKEN")
	if f.scriptedFor(w, r, TokenPath) {
		return
	}
	if err := r.ParseForm(); err != nil || r.PostForm.Get("grant_type") != "client_credentials" {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "unsupported_grant_type"})
		return
	}
	if r.PostForm.Get("client_id") != f.ClientID || r.PostForm.Get("client_secret") != f.Secret {
		// Keycloak names the client in its description: a CNPJ.
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "unauthorized_client",
			"error_description": "Invalid client or Invalid client credentials for " + r.PostForm.Get("client_id")})
		return
	}
	life := f.ExpiresIn
	if life == 0 {
		life = 300
	}
	tok := randomHex(16)
	f.mu.Lock()
	f.tokens[tok] = f.now().Add(time.Duration(life) * time.Second)
	f.issued = append(f.issued, tok)
	f.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"access_token": tok, "expires_in": life, "token_type": "Bearer"})
}

func (f *Fake) post(w http.ResponseWriter, r *http.Request, key string) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	held, isHeld := f.held[key]
	registered := f.Keys[key]
	f.mu.Unlock()
	if isHeld {
		f.mu.Lock()
		delete(f.held, key)
		f.mu.Unlock()
		close(held)
		<-r.Context().Done()
		return
	}
	if !registered {
		problem(w, http.StatusNotFound, "Not Found", "chaveClassificacaoNM "+key+" not found", nil)
		return
	}
	if !json.Valid(body) {
		problem(w, http.StatusBadRequest, "Bad Request", "malformed JSON", nil)
		return
	}
	s := Submission{UUID: randomHex(16), Key: key, Body: body}
	f.mu.Lock()
	f.Subs = append(f.Subs, s)
	f.mu.Unlock()
	writeJSON(w, http.StatusCreated, map[string]string{"uuid": s.UUID})
}

func (f *Fake) put(w http.ResponseWriter, r *http.Request, uuid string) {
	if f.NoPut {
		problem(w, http.StatusMethodNotAllowed, "Method Not Allowed", "PUT not supported", nil)
		return
	}
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := range f.Subs {
		if f.Subs[i].UUID == uuid {
			f.Subs[i].Body = body
			writeJSON(w, http.StatusOK, map[string]string{"uuid": uuid})
			return
		}
	}
	problem(w, http.StatusNotFound, "Not Found", "sensoriamento remoto "+uuid+" not found", nil)
}

func (f *Fake) get(w http.ResponseWriter, key string, racional bool) {
	f.mu.Lock()
	src := f.Classification
	if racional {
		src = f.Racional
	}
	body, ok := src[key]
	f.mu.Unlock()
	if !ok {
		problem(w, http.StatusNotFound, "Not Found", "classificação não concluída", nil)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, body)
}

// problem writes an RFC 7807 answer in SINM's shape.
func problem(w http.ResponseWriter, code int, title, detail string, fields []map[string]string) {
	p := map[string]any{"type": "about:blank", "codigoErro": strconv.Itoa(code), "title": title, "detail": detail, "instance": "/api/v1"}
	if fields != nil {
		p["fields"] = fields
	}
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(p)
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Problem422 is a Problem Details body with field errors, whose detail
// repeats a CPF (as a careless server might).
func Problem422(cpf string) string {
	return fmt.Sprintf(`{"type":"about:blank","codigoErro":"VAL-001","title":"Unprocessable Entity","detail":"cpfProdutor %s inválido","instance":"/api/v1/sensoriamentos-remotos","fields":[{"field":"indices[0].ndvi","message":"deve ser menor ou igual a 1"},{"field":"declividadeMedia","message":"não deve ser nulo"}]}`, cpf)
}
