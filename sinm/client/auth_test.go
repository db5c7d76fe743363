package client

import (
	"strings"
	"testing"
)

// TestLookupEnvironment: --env names SINM's two public installations, both
// over HTTPS on Embrapa's hosts, and nothing else.
func TestLookupEnvironment(t *testing.T) {
	for _, name := range []string{"hml", "prd"} {
		e, ok := LookupEnvironment(name)
		if !ok || !strings.HasPrefix(e.APIURL, "https://www.zarcnm") || !strings.HasPrefix(e.TokenURL, "https://www.keycloak.cnptia.embrapa.br/realms/zarcnm") {
			t.Errorf("LookupEnvironment(%q) = %+v, %v: want Embrapa's HTTPS endpoints", name, e, ok)
		}
	}
	if e, ok := LookupEnvironment("dev"); ok {
		t.Errorf("LookupEnvironment(dev) = %+v, true: want false", e)
	}
}
