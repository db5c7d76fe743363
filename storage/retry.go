package storage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"syscall"
	"time"
)

// MaxAttempts is how many times a request to S3 or an HTTP server is tried
// before its error is returned: the SDK's standard retryer, the GETs of Open
// and ReadFile, and GDAL's /vsis3/ and /vsicurl/ (GDAL_HTTP_MAX_RETRY, the
// retries after the first attempt) all use it. AWS_MAX_ATTEMPTS overrides
// it for the SDK, and an explicit GDAL_HTTP_MAX_RETRY for GDAL.
const MaxAttempts = 8

// Backoff bounds for the retries manejo makes itself (HTTP GETs, whole-object
// reads): exponential from RetryBaseDelay, capped at RetryMaxDelay, with full
// jitter. GDAL starts from GDALRetryDelay seconds and doubles.
const (
	RetryBaseDelay = 200 * time.Millisecond
	RetryMaxDelay  = 10 * time.Second
	GDALRetryDelay = "0.5"
)

// transientError marks an error worth retrying (a 429/5xx answer, a dropped
// or reset connection, a body cut short).
type transientError struct{ err error }

func (e transientError) Error() string { return e.err.Error() }
func (e transientError) Unwrap() error { return e.err }

func transient(err error) error { return transientError{err} }

// isTransient reports whether err is worth another attempt.
func isTransient(err error) bool {
	var t transientError
	return errors.As(err, &t)
}

// retryableStatus reports whether an HTTP status is transient.
func retryableStatus(code int) bool {
	return code == http.StatusTooManyRequests || code == http.StatusRequestTimeout || code >= 500
}

// backoff returns the delay before attempt n+1 (n ≥ 1): full jitter over an
// exponential ceiling.
func backoff(n int) time.Duration {
	ceil := RetryBaseDelay << min(n-1, 20)
	if ceil > RetryMaxDelay || ceil <= 0 {
		ceil = RetryMaxDelay
	}
	return ceil/2 + rand.N(ceil/2+1)
}

// withRetry runs fn up to MaxAttempts times while it fails with a transient
// error, sleeping with backoff between attempts; ctx cancels the wait.
func withRetry[T any](ctx context.Context, what string, fn func() (T, error)) (T, error) {
	var zero T
	var err error
	for n := 1; ; n++ {
		var v T
		v, err = fn()
		if err == nil {
			return v, nil
		}
		if !isTransient(err) || n >= MaxAttempts {
			break
		}
		t := time.NewTimer(backoff(n))
		select {
		case <-ctx.Done():
			t.Stop()
			return zero, fmt.Errorf("%s: %w (after %d attempts: %v)", what, ctx.Err(), n, err)
		case <-t.C:
		}
	}
	if isTransient(err) {
		return zero, fmt.Errorf("%w (gave up after %d attempts)", err, MaxAttempts)
	}
	return zero, err
}

// jitterBackoff gives the SDK the same backoff as withRetry.
type jitterBackoff struct{}

// BackoffDelay implements the SDK's retry.BackoffDelayer.
func (jitterBackoff) BackoffDelay(attempt int, _ error) (time.Duration, error) {
	return backoff(attempt), nil
}

// IsTransient reports whether err, from this package or the AWS SDK, may
// go away when tried again later: a 429/5xx answer (after the retries
// already made), a reset, refused or timed-out connection. A 403, a 404 or
// a malformed request is not.
func IsTransient(err error) bool {
	if err == nil {
		return false
	}
	if isTransient(err) {
		return true
	}
	var st interface{ HTTPStatusCode() int }
	if errors.As(err, &st) && st.HTTPStatusCode() != 0 {
		return retryableStatus(st.HTTPStatusCode())
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return true
	}
	return errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, io.ErrUnexpectedEOF)
}
