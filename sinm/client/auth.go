package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// Role is the Keycloak role a client needs to register remote-sensing data.
const Role = "OPERADOR_SENSORIAMENTO_REMOTO"

// Environment is one SINM installation: its Keycloak token endpoint and its
// API base.
type Environment struct {
	TokenURL, APIURL string
}

// LookupEnvironment returns the public SINM installation named name: hml
// (homologação, realm zarcnm-h) or prd (produção, realm zarcnm); false
// for any other name.
func LookupEnvironment(name string) (Environment, bool) {
	switch name {
	case "hml":
		return Environment{
			TokenURL: "https://www.keycloak.cnptia.embrapa.br/realms/zarcnm-h/protocol/openid-connect/token",
			APIURL:   "https://www.zarcnm-h.cnptia.embrapa.br",
		}, true
	case "prd":
		return Environment{
			TokenURL: "https://www.keycloak.cnptia.embrapa.br/realms/zarcnm/protocol/openid-connect/token",
			APIURL:   "https://www.zarcnm.cnptia.embrapa.br",
		}, true
	}
	return Environment{}, false
}

// ErrCredentials is Keycloak refusing the client (a 4xx from the token
// endpoint: wrong id or secret, client disabled). It stops a run.
var ErrCredentials = errors.New("sinm: Keycloak refused the client credentials")

// Credentials are the operator's Keycloak client: the company CNPJ digits
// and the client secret. String hides both.
type Credentials struct {
	ClientID, Secret string
}

// String never shows the values.
func (Credentials) String() string { return "Credentials{redacted}" }

// GoString never shows the values.
func (c Credentials) GoString() string { return c.String() }

// Tokens obtains and caches a client_credentials access token, refreshing it
// before it expires (a tenth of its life early, at most 30 s) and when the
// API refuses it (Invalidate).
type Tokens struct {
	URL   string
	Creds Credentials
	HTTP  *http.Client
	Now   func() time.Time // nil: time.Now

	mu      sync.Mutex
	token   string
	refresh time.Time // fetch again from this instant on
	fetches int
	secrets secrets // the secret, the id and every token: never in a message
}

// Fetches returns how many tokens were obtained.
func (t *Tokens) Fetches() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.fetches
}

func (t *Tokens) now() time.Time {
	if t.Now != nil {
		return t.Now()
	}
	return time.Now()
}

// Token returns a valid access token, fetching one when none is cached or
// the cached one is about to expire.
func (t *Tokens) Token(ctx context.Context) (string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.token != "" && t.now().Before(t.refresh) {
		return t.token, nil
	}
	tok, life, err := t.fetch(ctx)
	if err != nil {
		return "", err
	}
	early := min(life/10, 30*time.Second)
	t.token, t.refresh = tok, t.now().Add(life-early)
	t.fetches++
	return tok, nil
}

// Invalidate drops token if it is still the cached one, so the next Token
// call fetches a new one.
func (t *Tokens) Invalidate(token string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.token == token {
		t.token = ""
	}
}

// fetch runs the client_credentials grant (no scope).
func (t *Tokens) fetch(ctx context.Context) (string, time.Duration, error) {
	if t.Creds.ClientID == "" || t.Creds.Secret == "" {
		return "", 0, fmt.Errorf("%w: none given (set SINM_CLIENT_ID and SINM_CLIENT_SECRET)", ErrCredentials)
	}
	t.secrets.add(t.Creds.Secret, t.Creds.ClientID)
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {t.Creds.ClientID}, "client_secret": {t.Creds.Secret}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.URL, strings.NewReader(form.Encode()))
	if err != nil {
		return "", 0, fmt.Errorf("sinm token: %w", err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	resp, err := do(t.HTTP, req)
	if errors.Is(err, ErrRedirect) {
		return "", 0, fmt.Errorf("sinm token: %w", err)
	}
	if err != nil {
		return "", 0, fmt.Errorf("sinm token: %s", t.scrub(err.Error()))
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error       string `json:"error"`
			Description string `json:"error_description"`
		}
		_ = json.Unmarshal(body, &e)
		err := fmt.Errorf("sinm token: Keycloak answered %d %s %s", resp.StatusCode, t.scrub(e.Error), t.scrub(e.Description))
		if resp.StatusCode >= 400 && resp.StatusCode < 500 && resp.StatusCode != http.StatusTooManyRequests {
			err = fmt.Errorf("%w: %w", ErrCredentials, err)
		}
		return "", 0, err
	}
	var tr struct {
		AccessToken string `json:"access_token"`
		ExpiresIn   int    `json:"expires_in"`
	}
	if err := json.Unmarshal(body, &tr); err != nil || tr.AccessToken == "" {
		return "", 0, fmt.Errorf("sinm token: Keycloak answer has no access_token")
	}
	t.secrets.add(tr.AccessToken)
	if tr.ExpiresIn <= 0 {
		tr.ExpiresIn = 300 // Keycloak's default
	}
	return tr.AccessToken, time.Duration(tr.ExpiresIn) * time.Second, nil
}

// scrub cleans a message of Keycloak's: the secret, the id and the tokens
// replaced, digit runs scrubbed, cut to MaxMessageBytes.
func (t *Tokens) scrub(s string) string { return (&Client{Tokens: t}).clean(s, "") }
