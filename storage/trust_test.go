package storage

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/manejo/manejo/internal/testkit"
)

// TestReadDeadline: an https:// server that accepts and never answers makes
// ReadFile fail (as a transient error, retried, then given up) instead of
// hanging: every request has a deadline.
func TestReadDeadline(t *testing.T) {
	addr := testkit.SilentServer(t)
	c := newHTTPClient(200*time.Millisecond, 200*time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	t0 := time.Now()
	_, err := openHTTP(ctx, c, "https://"+addr+"/catalog.json")
	if err == nil || !isTransient(err) {
		t.Fatalf("openHTTP from a silent server = %v, want a transient error", err)
	}
	if d := time.Since(t0); d > 5*time.Second {
		t.Fatalf("openHTTP took %s, want about the 200 ms deadline", d)
	}
	// Cancelling the context stops the retries at once.
	cctx, ccancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, ccancel)
	t0 = time.Now()
	if _, err := readFile(cctx, c, "https://"+addr+"/catalog.json"); err == nil {
		t.Fatal("ReadFile from a silent server succeeded")
	}
	if d := time.Since(t0); d > 3*time.Second {
		t.Fatalf("ReadFile went on %s after cancel", d)
	}
}

func TestGDALTimeouts(t *testing.T) {
	got := GDALConfig()
	if got["GDAL_HTTP_CONNECTTIMEOUT"] != "10" || got["GDAL_HTTP_TIMEOUT"] != "60" {
		t.Fatalf("GDALConfig timeouts = %q / %q, want 10 / 60", got["GDAL_HTTP_CONNECTTIMEOUT"], got["GDAL_HTTP_TIMEOUT"])
	}
	tr := sdkHTTPClient().GetTransport()
	if tr.ResponseHeaderTimeout != RequestTimeout || tr.TLSHandshakeTimeout != ConnectTimeout {
		t.Fatalf("SDK transport timeouts %s / %s", tr.ResponseHeaderTimeout, tr.TLSHandshakeTimeout)
	}
}

// TestNoInstanceMetadata: with no credentials configured, S3 requests are
// unsigned (GDAL and SDK never ask the instance metadata service) unless
// the operator allows the instance role.
func TestNoInstanceMetadata(t *testing.T) {
	home := t.TempDir()
	for _, k := range []string{"AWS_ACCESS_KEY_ID", "AWS_PROFILE", "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
		"AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_SHARED_CREDENTIALS_FILE", "AWS_CONFIG_FILE", "AWS_NO_SIGN_REQUEST",
		"MANEJO_ALLOW_INSTANCE_METADATA"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	t.Setenv("HOME", home)
	t.Setenv("AWS_EC2_METADATA_DISABLED", "")
	os.Unsetenv("AWS_EC2_METADATA_DISABLED")
	if !unsigned() || GDALConfig()["AWS_NO_SIGN_REQUEST"] != "YES" {
		t.Fatal("no credentials: requests are signed (the SDK or GDAL would ask the instance metadata service)")
	}
	// A config file with a region only is no credential source.
	if err := os.MkdirAll(filepath.Join(home, ".aws"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".aws", "config"), []byte("[default]\nregion = sa-east-1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if !unsigned() {
		t.Fatal("a config file with a region only counts as credentials")
	}
	t.Setenv("MANEJO_ALLOW_INSTANCE_METADATA", "true")
	if unsigned() {
		t.Fatal("MANEJO_ALLOW_INSTANCE_METADATA=true: still unsigned")
	}
	os.Unsetenv("MANEJO_ALLOW_INSTANCE_METADATA")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "false")
	if unsigned() {
		t.Fatal("AWS_EC2_METADATA_DISABLED=false: still unsigned")
	}
	os.Unsetenv("AWS_EC2_METADATA_DISABLED")
	t.Setenv("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "/v2/credentials/x")
	if unsigned() {
		t.Fatal("container credentials configured: unsigned")
	}
	if err := os.WriteFile(filepath.Join(home, ".aws", "credentials"), []byte("[default]\naws_access_key_id = A\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Unsetenv("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI")
	if unsigned() || strings.Contains(GDALConfig()["AWS_NO_SIGN_REQUEST"], "YES") {
		t.Fatal("shared credentials file: unsigned")
	}
}
