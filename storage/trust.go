package storage

import (
	"context"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
)

// Deadlines of every network read (docs/security.md). A server that
// accepts a connection and never answers must not hang a run: each request
// of the SDK, of Open/ReadFile and of GDAL's /vsicurl/ and /vsis3/ gives up
// after these, and is then retried like any transient failure.
const (
	// ConnectTimeout bounds a TCP connect and a TLS handshake
	// (GDAL_HTTP_CONNECTTIMEOUT).
	ConnectTimeout = 10 * time.Second
	// RequestTimeout bounds one GDAL HTTP request as a whole
	// (GDAL_HTTP_TIMEOUT: a COG range read), and, for the SDK and
	// Open/ReadFile, the wait for response headers and any single read of a
	// body (a body may stream for longer while it keeps coming).
	RequestTimeout = 60 * time.Second
)

// gdalTimeouts are the GDAL options of the deadlines, in seconds.
func gdalTimeouts() map[string]string {
	return map[string]string{
		"GDAL_HTTP_CONNECTTIMEOUT": strconv.Itoa(int(ConnectTimeout / time.Second)),
		"GDAL_HTTP_TIMEOUT":        strconv.Itoa(int(RequestTimeout / time.Second)),
	}
}

// deadlineConn sets a read deadline before each read, so that a body that
// stops coming fails instead of blocking.
type deadlineConn struct {
	net.Conn
	d time.Duration
}

func (c deadlineConn) Read(p []byte) (int, error) {
	if err := c.Conn.SetReadDeadline(time.Now().Add(c.d)); err != nil {
		return 0, err
	}
	return c.Conn.Read(p)
}

// httpClient is the client of Open and ReadFile for http(s):// locations
// (one connection pool for the process; set once, never reassigned).
var httpClient = newHTTPClient(ConnectTimeout, RequestTimeout)

// newHTTPClient is an HTTP client whose connects and TLS handshakes give up
// after connect, and whose wait for headers and each body read give up
// after request.
func newHTTPClient(connect, request time.Duration) *http.Client {
	return &http.Client{Transport: &http.Transport{
		Proxy: http.ProxyFromEnvironment,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := (&net.Dialer{Timeout: connect, KeepAlive: 30 * time.Second}).DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return deadlineConn{c, request}, nil
		},
		TLSHandshakeTimeout:   connect,
		ResponseHeaderTimeout: request,
		IdleConnTimeout:       90 * time.Second,
		ForceAttemptHTTP2:     true,
	}}
}

// sdkHTTPClient is the SDK's HTTP client with the same deadlines.
func sdkHTTPClient() *awshttp.BuildableClient {
	return awshttp.NewBuildableClient().
		WithDialerOptions(func(d *net.Dialer) { d.Timeout = ConnectTimeout }).
		WithTransportOptions(func(t *http.Transport) {
			t.TLSHandshakeTimeout = ConnectTimeout
			t.ResponseHeaderTimeout = RequestTimeout
		}).
		WithReadTimeout(RequestTimeout)
}

// The credential rule. A catalog names s3:// hrefs; with no credentials
// configured, the SDK and GDAL would walk their credential chains to the
// instance metadata service and sign with the node's own role, so a
// catalog could make the worker read whatever that role can. manejo
// therefore uses the metadata service only when the operator says so:
//
//   - credentials configured (AWS_ACCESS_KEY_ID, AWS_PROFILE, a web
//     identity token as on EKS, a container credentials endpoint as on
//     ECS/Batch, or a shared credentials or config file): used as usual;
//   - otherwise, when MANEJO_ALLOW_INSTANCE_METADATA=true or
//     AWS_EC2_METADATA_DISABLED=false is set, the SDK and GDAL may use the
//     instance role;
//   - otherwise S3 requests are unsigned (AWS_NO_SIGN_REQUEST=YES for
//     GDAL, anonymous credentials for the SDK): public buckets only, and
//     the metadata service is never asked.

// credentialsConfigured reports whether the environment names a credential
// source other than the instance metadata service.
func credentialsConfigured() bool {
	for _, k := range []string{"AWS_ACCESS_KEY_ID", "AWS_PROFILE", "AWS_WEB_IDENTITY_TOKEN_FILE",
		"AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI"} {
		if os.Getenv(k) != "" {
			return true
		}
	}
	files := []string{os.Getenv("AWS_SHARED_CREDENTIALS_FILE"), os.Getenv("AWS_CONFIG_FILE")}
	if home, err := os.UserHomeDir(); err == nil {
		files = append(files, filepath.Join(home, ".aws", "credentials"), filepath.Join(home, ".aws", "config"))
	}
	for _, f := range files {
		if f == "" {
			continue
		}
		if namesCredentials(f) {
			return true
		}
	}
	return false
}

// namesCredentials reports whether a shared credentials or config file
// names a credential source (a config file with a region only does not).
func namesCredentials(f string) bool {
	st, err := os.Stat(f)
	if err != nil || !st.Mode().IsRegular() || st.Size() > 1<<20 {
		return false
	}
	b, err := os.ReadFile(f)
	if err != nil {
		return false
	}
	s := strings.ToLower(string(b))
	for _, k := range []string{"aws_access_key_id", "credential_process", "role_arn", "sso_", "web_identity_token_file", "credential_source"} {
		if strings.Contains(s, k) {
			return true
		}
	}
	return false
}

// instanceMetadataAllowed reports whether the operator allows the instance
// metadata service as a credential source.
func instanceMetadataAllowed() bool {
	if envTrue("MANEJO_ALLOW_INSTANCE_METADATA") {
		return true
	}
	v, set := os.LookupEnv("AWS_EC2_METADATA_DISABLED")
	return set && (v == "false" || v == "FALSE" || v == "0" || v == "no" || v == "NO")
}

// unsigned reports whether S3 requests go without credentials: asked for
// (AWS_NO_SIGN_REQUEST), or no credentials configured and the metadata
// service not allowed.
func unsigned() bool {
	return envTrue("AWS_NO_SIGN_REQUEST") || (!credentialsConfigured() && !instanceMetadataAllowed())
}
