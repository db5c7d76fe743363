package storage

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"syscall"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// ErrChanged is the error of ReplaceIf and RemoveIf when the location no
// longer holds the version the caller read: another writer got there
// first.
var ErrChanged = errors.New("storage: changed since it was read")

// ReadVersion returns the content of loc and its version, a token that
// changes with every write: the ETag on S3, the sha256 of the content on a
// local disk. A missing loc wraps fs.ErrNotExist.
func ReadVersion(ctx context.Context, loc string) ([]byte, string, error) {
	switch KindOf(loc) {
	case S3:
		c, bucket, key, err := s3Target(ctx, loc)
		if err != nil {
			return nil, "", err
		}
		out, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: &bucket, Key: &key})
		if err != nil {
			return nil, "", fmt.Errorf("read %s: %w", loc, s3NotExist(err))
		}
		defer out.Body.Close()
		b, err := io.ReadAll(out.Body)
		if err != nil {
			return nil, "", fmt.Errorf("read %s: %w", loc, err)
		}
		return b, aws.ToString(out.ETag), nil
	case HTTP:
		return nil, "", fmt.Errorf("read %s: HTTP locations hold no versions", loc)
	}
	b, err := os.ReadFile(loc)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, "", fmt.Errorf("read %s: %w (%w)", loc, ErrNotExist, fs.ErrNotExist)
	}
	if err != nil {
		return nil, "", fmt.Errorf("read %s: %w", loc, err)
	}
	return b, contentVersion(b), nil
}

// ReplaceIf writes data to loc only when loc still holds version (from
// ReadVersion, CreateExclusive's read-back or an earlier ReplaceIf), and
// returns the new version. Of several writers replacing the same version
// exactly one succeeds; the others get ErrChanged (also when loc is gone).
// S3: a PutObject with If-Match (AWS S3 since November 2024; the server
// answers 412 on a mismatch). Local: the read, compare and rename run
// under an exclusive flock of loc's folder, which RemoveIf takes too.
func ReplaceIf(ctx context.Context, loc string, data []byte, version string) (string, error) {
	switch KindOf(loc) {
	case S3:
		c, bucket, key, err := s3Target(ctx, loc)
		if err != nil {
			return "", err
		}
		out, err := c.PutObject(ctx, &s3.PutObjectInput{
			Bucket: &bucket, Key: &key, Body: bytes.NewReader(data),
			ContentLength: aws.Int64(int64(len(data))), IfMatch: aws.String(version),
		})
		if preconditionFailed(err) || errors.Is(s3NotExist(err), fs.ErrNotExist) {
			return "", fmt.Errorf("replace %s: %w", loc, ErrChanged)
		}
		if err != nil {
			return "", fmt.Errorf("replace %s: %w", loc, err)
		}
		return aws.ToString(out.ETag), nil
	case HTTP:
		return "", fmt.Errorf("replace %s: HTTP locations are read-only", loc)
	}
	unlock, err := lockDir(filepath.Dir(loc))
	if err != nil {
		return "", fmt.Errorf("replace %s: %w", loc, err)
	}
	defer unlock()
	if err := sameVersion(loc, version); err != nil {
		return "", fmt.Errorf("replace %s: %w", loc, err)
	}
	if err := WriteFile(ctx, loc, data); err != nil {
		return "", err
	}
	return contentVersion(data), nil
}

// RemoveIf removes loc only when it still holds version; ErrChanged
// otherwise (a missing loc is not an error). Local: under the folder's
// flock, as ReplaceIf. S3: the version is read and compared, then the
// object deleted (a store's conditional DELETE is not relied upon), so a
// writer replacing it in between loses its write: callers use it to give
// back a lease, whose next holder then finds it gone and stops.
func RemoveIf(ctx context.Context, loc, version string) error {
	if KindOf(loc) == Local {
		unlock, err := lockDir(filepath.Dir(loc))
		if err != nil {
			return fmt.Errorf("remove %s: %w", loc, err)
		}
		defer unlock()
	}
	_, v, err := ReadVersion(ctx, loc)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if v != version {
		return fmt.Errorf("remove %s: %w", loc, ErrChanged)
	}
	return Remove(ctx, loc)
}

// s3NotExist turns S3's NoSuchKey (or a 404) into an error that is both
// ErrNotExist and fs.ErrNotExist; other errors are returned as they are.
func s3NotExist(err error) error {
	var nsk *types.NoSuchKey
	var re interface{ HTTPStatusCode() int }
	if errors.As(err, &nsk) || errors.As(err, &re) && re.HTTPStatusCode() == http.StatusNotFound {
		return fmt.Errorf("%w (%w)", ErrNotExist, fs.ErrNotExist)
	}
	return err
}

// contentVersion is the version of a local file: the sha256 of its bytes.
func contentVersion(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// sameVersion returns nil when the local file loc holds version, else
// ErrChanged.
func sameVersion(loc, version string) error {
	b, err := os.ReadFile(loc)
	if errors.Is(err, fs.ErrNotExist) {
		return ErrChanged
	}
	if err != nil {
		return err
	}
	if contentVersion(b) != version {
		return ErrChanged
	}
	return nil
}

// lockDir takes an exclusive flock of a local folder and returns its
// release. The kernel drops it when the process dies, however it dies.
func lockDir(dir string) (func(), error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	if err := flock(f, syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("flock %s: %w", dir, err)
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

// preconditionFailed says whether err is an S3 answer 412 (a conditional
// write that did not match) or 409 (another conditional write of the key
// in flight).
func preconditionFailed(err error) bool {
	var re interface{ HTTPStatusCode() int }
	return errors.As(err, &re) && (re.HTTPStatusCode() == http.StatusPreconditionFailed || re.HTTPStatusCode() == http.StatusConflict)
}
