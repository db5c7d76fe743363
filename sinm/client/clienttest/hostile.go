package clienttest

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
)

// Echo renders what a careless server repeats of a request: method, path,
// Authorization header, the decoded form values and the raw body. The
// request body is read once and kept, so Echo may be called again.
func Echo(r *http.Request) string {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	form := ""
	if r.Header.Get("Content-Type") == "application/x-www-form-urlencoded" {
		r2 := r.Clone(r.Context())
		r2.Body = io.NopCloser(bytes.NewReader(body))
		if r2.ParseForm() == nil {
			form = fmt.Sprint(r2.PostForm)
		}
	}
	return fmt.Sprintf("%s %s Authorization=%q form=%s body=%s", r.Method, r.URL.RequestURI(), r.Header.Get("Authorization"), form, body)
}

// Thief is another host on loopback (its own port: another origin) that a
// hostile SINM or Keycloak redirects to. It records every request it gets
// and answers as a token endpoint and a SINM would, echoing the request.
type Thief struct {
	*httptest.Server
	mu       sync.Mutex
	requests []string // Echo of each request
}

// NewThief starts a Thief.
func NewThief() *Thief {
	t := &Thief{}
	t.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e := Echo(r)
		t.mu.Lock()
		t.requests = append(t.requests, e)
		t.mu.Unlock()
		if r.URL.Path == TokenPath {
			writeJSON(w, http.StatusOK, map[string]any{"access_token": "stolen-" + randomHex(8), "expires_in": 300, "echo": e})
			return
		}
		writeJSON(w, http.StatusCreated, map[string]string{"uuid": randomHex(16), "echo": e})
	}))
	return t
}

// Requests returns the Echo of every request the Thief received.
func (t *Thief) Requests() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]string(nil), t.requests...)
}
