// Package storage is manejo's platform: it reads and writes the objects
// manejo handles itself — talhões, catalogs, Parquet datasets, SINM
// payloads, manifests — at a location on local disk, S3 (s3://bucket/key) or
// HTTP(S) (location.go), serves a folder or S3 prefix as an fs.FS read by
// range (FS), maps the same locations to GDAL virtual file systems (/vsis3/,
// /vsicurl/) for rasters, initialises GDAL once for the process (InitGDAL),
// owns the retry policy of every request (retry.go), makes the local
// temporary folders whose dead owners' copies are removed (Scratch), and
// takes the flock those folders and the SINM ledger hold (TryLock).
//
// S3 is configured from the standard AWS settings, the same for the SDK and
// for GDAL: AWS_REGION / AWS_DEFAULT_REGION, AWS_PROFILE, the credential
// chain, AWS_ENDPOINT_URL (or AWS_ENDPOINT_URL_S3) for S3-compatible servers,
// AWS_NO_SIGN_REQUEST=YES for public buckets, and path-style addressing with
// AWS_S3_USE_PATH_STYLE=true (GDAL's AWS_VIRTUAL_HOSTING=FALSE is honoured
// too; a custom endpoint implies path style unless told otherwise).
//
// The AWS SDK and godal.RegisterAll stay in this package; everything else
// reaches storage through locations, io and io/fs interfaces.
package storage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	awsretry "github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// ErrNotExist is returned (wrapped) when an object or file does not exist.
var ErrNotExist = errors.New("storage: object does not exist")

// s3Target returns the client, bucket and key of an s3:// location.
func s3Target(ctx context.Context, loc string) (c *s3.Client, bucket, key string, err error) {
	if bucket, key, err = splitS3(loc); err != nil {
		return nil, "", "", err
	}
	c, err = Client(ctx)
	return c, bucket, key, err
}

func splitS3(loc string) (bucket, key string, err error) {
	rest := strings.TrimPrefix(loc, "s3://")
	bucket, key, _ = strings.Cut(rest, "/")
	if bucket == "" {
		return "", "", fmt.Errorf("parse %s: no bucket", loc)
	}
	return bucket, key, nil
}

var (
	clientOnce sync.Once
	client     *s3.Client
	clientErr  error
)

// envTrue reports whether an environment variable says yes.
func envTrue(name string) bool {
	switch strings.ToLower(os.Getenv(name)) {
	case "1", "true", "yes", "on":
		return true
	}
	return false
}

// endpoint returns the custom S3 endpoint from the standard variables.
func endpoint() string {
	if e := os.Getenv("AWS_ENDPOINT_URL_S3"); e != "" {
		return e
	}
	return os.Getenv("AWS_ENDPOINT_URL")
}

// pathStyle reports whether S3 requests use path-style addressing.
func pathStyle() bool {
	if v := os.Getenv("AWS_S3_USE_PATH_STYLE"); v != "" {
		return envTrue("AWS_S3_USE_PATH_STYLE")
	}
	if strings.EqualFold(os.Getenv("AWS_VIRTUAL_HOSTING"), "FALSE") {
		return true
	}
	return endpoint() != ""
}

// Client returns the S3 client built once from the standard AWS settings,
// with the deadlines of trust.go, and anonymous when no credentials are
// configured and the instance metadata service is not allowed (trust.go).
// Requests are retried on throttling, 5xx answers and dropped connections
// (the SDK's standard retryer) up to MaxAttempts times, or AWS_MAX_ATTEMPTS,
// with exponential backoff and jitter; there is no client-side retry quota,
// so a long flaky spell slows a run down instead of failing it.
func Client(ctx context.Context) (*s3.Client, error) {
	clientOnce.Do(func() {
		opts := []func(*config.LoadOptions) error{config.WithHTTPClient(sdkHTTPClient())}
		if unsigned() {
			opts = append(opts, config.WithCredentialsProvider(aws.AnonymousCredentials{}))
		}
		if os.Getenv("AWS_REGION") == "" && os.Getenv("AWS_DEFAULT_REGION") == "" {
			opts = append(opts, config.WithRegion("us-east-1"))
		} else if r := os.Getenv("AWS_DEFAULT_REGION"); os.Getenv("AWS_REGION") == "" {
			opts = append(opts, config.WithRegion(r))
		}
		cfg, err := config.LoadDefaultConfig(ctx, opts...)
		if err != nil {
			clientErr = fmt.Errorf("load AWS config: %w", err)
			return
		}
		attempts := MaxAttempts
		if cfg.RetryMaxAttempts > 0 {
			attempts = cfg.RetryMaxAttempts
		}
		client = s3.NewFromConfig(cfg, func(o *s3.Options) {
			o.Retryer = awsretry.NewStandard(func(so *awsretry.StandardOptions) {
				so.MaxAttempts = attempts
				so.MaxBackoff = RetryMaxDelay
				so.Backoff = jitterBackoff{}
				so.RateLimiter = ratelimit.None
			})
			if e := endpoint(); e != "" {
				o.BaseEndpoint = aws.String(e)
			}
			o.UsePathStyle = pathStyle()
		})
	})
	return client, clientErr
}

// ResetClient forgets the S3 client so the next call rebuilds it from the
// environment (tests that start their own S3 server use it).
func ResetClient() {
	clientOnce = sync.Once{}
	client, clientErr = nil, nil
}

// Open opens a location for reading. Every network request has a deadline
// (ConnectTimeout, RequestTimeout). HTTP GETs are retried on 429/5xx
// answers and network errors; S3 GETs are retried by the SDK (see Client).
func Open(ctx context.Context, loc string) (io.ReadCloser, error) {
	switch KindOf(loc) {
	case S3:
		return openS3(ctx, loc)
	case HTTP:
		return withRetry(ctx, "open "+loc, func() (io.ReadCloser, error) { return openHTTP(ctx, httpClient, loc) })
	}
	f, err := os.Open(loc)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("open %s: %w", loc, ErrNotExist)
	}
	return f, err
}

func openS3(ctx context.Context, loc string) (io.ReadCloser, error) {
	c, bucket, key, err := s3Target(ctx, loc)
	if err != nil {
		return nil, err
	}
	out, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: &bucket, Key: &key})
	if err != nil {
		var nsk *types.NoSuchKey
		if errors.As(err, &nsk) {
			return nil, fmt.Errorf("open %s: %w", loc, ErrNotExist)
		}
		return nil, fmt.Errorf("open %s: %w", loc, err)
	}
	return out.Body, nil
}

// openHTTP makes one GET with c; transient failures are marked for retry.
func openHTTP(ctx context.Context, c *http.Client, loc string) (io.ReadCloser, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, loc, nil)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", loc, err)
	}
	resp, err := c.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("open %s: %w", loc, err)
		}
		return nil, transient(fmt.Errorf("open %s: %w", loc, err))
	}
	if resp.StatusCode == http.StatusNotFound {
		resp.Body.Close()
		return nil, fmt.Errorf("open %s: %w", loc, ErrNotExist)
	}
	if resp.StatusCode/100 != 2 {
		resp.Body.Close()
		err := fmt.Errorf("open %s: HTTP %s", loc, resp.Status)
		if retryableStatus(resp.StatusCode) {
			return nil, transient(err)
		}
		return nil, err
	}
	return resp.Body, nil
}

// ReadFile reads a whole object. On S3 and HTTP a body cut short is read
// again from the start (with backoff), as are transient HTTP answers.
func ReadFile(ctx context.Context, loc string) ([]byte, error) {
	return readFile(ctx, httpClient, loc)
}

// readFile is ReadFile reading http(s):// locations with c.
func readFile(ctx context.Context, c *http.Client, loc string) ([]byte, error) {
	if KindOf(loc) == Local {
		r, err := Open(ctx, loc)
		if err != nil {
			return nil, err
		}
		defer r.Close()
		b, err := io.ReadAll(r)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", loc, err)
		}
		return b, nil
	}
	return withRetry(ctx, "read "+loc, func() ([]byte, error) {
		var r io.ReadCloser
		var err error
		if KindOf(loc) == S3 {
			r, err = openS3(ctx, loc)
		} else {
			r, err = openHTTP(ctx, c, loc)
		}
		if err != nil {
			return nil, err
		}
		defer r.Close()
		b, err := io.ReadAll(r)
		if err != nil {
			if ctx.Err() != nil {
				return nil, fmt.Errorf("read %s: %w", loc, err)
			}
			return nil, transient(fmt.Errorf("read %s: %w", loc, err))
		}
		return b, nil
	})
}

// Exists reports whether a location holds an object or file.
func Exists(ctx context.Context, loc string) (bool, error) {
	switch KindOf(loc) {
	case S3:
		c, bucket, key, err := s3Target(ctx, loc)
		if err != nil {
			return false, err
		}
		_, err = c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &bucket, Key: &key})
		if err != nil {
			var nf *types.NotFound
			if errors.As(err, &nf) {
				return false, nil
			}
			return false, fmt.Errorf("stat %s: %w", loc, err)
		}
		return true, nil
	case HTTP:
		r, err := Open(ctx, loc)
		if errors.Is(err, ErrNotExist) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		r.Close()
		return true, nil
	}
	_, err := os.Stat(loc)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

// WriteFile writes data to a location atomically: readers see the old
// object or the whole new one, never a part (local: temp file + rename; S3:
// a single PutObject).
func WriteFile(ctx context.Context, loc string, data []byte) error {
	switch KindOf(loc) {
	case S3:
		c, bucket, key, err := s3Target(ctx, loc)
		if err != nil {
			return err
		}
		_, err = c.PutObject(ctx, &s3.PutObjectInput{
			Bucket: &bucket, Key: &key, Body: bytes.NewReader(data),
			ContentLength: aws.Int64(int64(len(data))),
		})
		if err != nil {
			return fmt.Errorf("write %s: %w", loc, err)
		}
		return nil
	case HTTP:
		return fmt.Errorf("write %s: HTTP locations are read-only", loc)
	}
	f, err := CreateTemp(loc)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("write %s: %w", loc, err)
	}
	return PutFile(ctx, loc, f.Name())
}

// List returns the locations under a prefix (a local directory, walked
// recursively, or an S3 prefix), sorted.
func List(ctx context.Context, prefix string) ([]string, error) {
	switch KindOf(prefix) {
	case S3:
		c, bucket, key, err := s3Target(ctx, prefix)
		if err != nil {
			return nil, err
		}
		if key != "" && !strings.HasSuffix(key, "/") {
			key += "/"
		}
		var out []string
		p := s3.NewListObjectsV2Paginator(c, &s3.ListObjectsV2Input{Bucket: &bucket, Prefix: &key})
		for p.HasMorePages() {
			page, err := p.NextPage(ctx)
			if err != nil {
				return nil, fmt.Errorf("list %s: %w", prefix, err)
			}
			for _, o := range page.Contents {
				out = append(out, "s3://"+bucket+"/"+aws.ToString(o.Key))
			}
		}
		sort.Strings(out)
		return out, nil
	case HTTP:
		return nil, fmt.Errorf("list %s: HTTP locations cannot be listed", prefix)
	}
	var out []string
	err := filepath.WalkDir(prefix, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			out = append(out, p)
		}
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", prefix, err)
	}
	sort.Strings(out)
	return out, nil
}

// CreateExclusive writes data to loc only when nothing is there yet, as one
// atomic step: a hard link of a complete temporary file on a local disk
// (parent folders created; like O_EXCL, it fails when loc exists), a
// conditional PutObject with If-None-Match: "*" on S3 (supported by AWS S3
// since August 2024; the server answers 412 when the key exists, 409 when
// another conditional write of it is in flight). When loc exists, or
// another writer wins, the error wraps fs.ErrExist. HTTP locations are
// read-only.
func CreateExclusive(ctx context.Context, loc string, data []byte) error {
	switch KindOf(loc) {
	case S3:
		c, bucket, key, err := s3Target(ctx, loc)
		if err != nil {
			return err
		}
		_, err = c.PutObject(ctx, &s3.PutObjectInput{
			Bucket: &bucket, Key: &key, Body: bytes.NewReader(data),
			ContentLength: aws.Int64(int64(len(data))), IfNoneMatch: aws.String("*"),
		})
		var re interface{ HTTPStatusCode() int }
		if errors.As(err, &re) && (re.HTTPStatusCode() == http.StatusPreconditionFailed || re.HTTPStatusCode() == http.StatusConflict) {
			return fmt.Errorf("create %s: %w", loc, fs.ErrExist)
		}
		if err != nil {
			return fmt.Errorf("create %s: %w", loc, err)
		}
		return nil
	case HTTP:
		return fmt.Errorf("create %s: HTTP locations are read-only", loc)
	}
	if err := os.MkdirAll(filepath.Dir(loc), 0o755); err != nil {
		return fmt.Errorf("create %s: %w", loc, err)
	}
	// A hard link of a complete temporary file: readers never see loc
	// half written, and link fails when loc exists, as O_EXCL would.
	f, err := CreateTemp(loc)
	if err != nil {
		return fmt.Errorf("create %s: %w", loc, err)
	}
	defer os.Remove(f.Name())
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Link(f.Name(), loc)
	}
	if err != nil {
		return fmt.Errorf("create %s: %w", loc, err)
	}
	return nil
}

// Remove deletes one object or file; a missing one is not an error.
func Remove(ctx context.Context, loc string) error {
	switch KindOf(loc) {
	case S3:
		c, bucket, key, err := s3Target(ctx, loc)
		if err != nil {
			return err
		}
		if _, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &bucket, Key: &key}); err != nil {
			return fmt.Errorf("remove %s: %w", loc, err)
		}
		return nil
	case HTTP:
		return fmt.Errorf("remove %s: HTTP locations are read-only", loc)
	}
	if err := os.Remove(loc); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove %s: %w", loc, err)
	}
	return nil
}

// CreateTemp creates a temporary local file from which PutFile will publish
// loc: next to loc when loc is local (so that PutFile is a rename, and a
// killed process leaves a ".name.tmp-*" file the rerun removes), in the
// system temporary folder otherwise. The caller writes and closes it.
func CreateTemp(loc string) (*os.File, error) {
	dir := os.TempDir()
	base := path.Base(loc)
	if KindOf(loc) == Local {
		dir, base = filepath.Dir(loc), filepath.Base(loc)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("create temporary file for %s: %w", loc, err)
		}
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return nil, fmt.Errorf("create temporary file for %s: %w", loc, err)
	}
	return f, nil
}

// PutFile publishes the closed local file src (from CreateTemp) as loc
// atomically and removes src: a rename for a local loc, one PutObject
// streamed from the file for S3 (up to S3's 5 GB single-object limit), so
// memory does not grow with the object. src is removed on failure too.
func PutFile(ctx context.Context, loc, src string) error {
	defer os.Remove(src)
	switch KindOf(loc) {
	case S3:
		c, bucket, key, err := s3Target(ctx, loc)
		if err != nil {
			return err
		}
		f, err := os.Open(src)
		if err != nil {
			return fmt.Errorf("write %s: %w", loc, err)
		}
		defer f.Close()
		st, err := f.Stat()
		if err != nil {
			return fmt.Errorf("write %s: %w", loc, err)
		}
		_, err = c.PutObject(ctx, &s3.PutObjectInput{
			Bucket: &bucket, Key: &key, Body: f, ContentLength: aws.Int64(st.Size()),
		})
		if err != nil {
			return fmt.Errorf("write %s: %w", loc, err)
		}
		return nil
	case HTTP:
		return fmt.Errorf("write %s: HTTP locations are read-only", loc)
	}
	if err := os.Rename(src, loc); err != nil {
		return fmt.Errorf("write %s: %w", loc, err)
	}
	return nil
}
