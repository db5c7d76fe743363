package storage_test

import (
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"testing"

	. "github.com/manejo/manejo/internal/storage"
	"github.com/manejo/manejo/internal/storage/s3test"
)

func TestRoundTrip(t *testing.T) {
	s3test.StartS3(t, "bucket")
	ctx := context.Background()
	for _, base := range []string{t.TempDir(), "s3://bucket/run/out"} {
		t.Run(base, func(t *testing.T) {
			a, b := Join(base, "sinm", "F1.json"), Join(base, "indicators.parquet")
			if ok, err := Exists(ctx, a); err != nil || ok {
				t.Fatalf("Exists(%s) before write = %v, %v; want false, nil", a, ok, err)
			}
			if _, err := ReadFile(ctx, a); !errors.Is(err, ErrNotExist) {
				t.Fatalf("ReadFile(missing) error = %v, want ErrNotExist", err)
			}
			for _, loc := range []string{a, b} {
				if err := WriteFile(ctx, loc, []byte("data of "+filepath.Base(loc))); err != nil {
					t.Fatal(err)
				}
			}
			got, err := ReadFile(ctx, a)
			if err != nil || string(got) != "data of F1.json" {
				t.Fatalf("ReadFile = %q, %v", got, err)
			}
			if ok, err := Exists(ctx, a); err != nil || !ok {
				t.Fatalf("Exists after write = %v, %v", ok, err)
			}
			list, err := List(ctx, base)
			if err != nil {
				t.Fatal(err)
			}
			if want := []string{b, a}; !reflect.DeepEqual(list, want) {
				t.Fatalf("List = %v, want %v", list, want)
			}
			if err := Remove(ctx, a); err != nil {
				t.Fatal(err)
			}
			if ok, _ := Exists(ctx, a); ok {
				t.Fatal("object still there after Remove")
			}
		})
	}
}

func TestGDALPathAndConfig(t *testing.T) {
	for in, want := range map[string]string{
		"s3://b/k/x.tif":          "/vsis3/b/k/x.tif",
		"https://h.example/x.tif": "/vsicurl/https://h.example/x.tif",
		"/data/x.tif":             "/data/x.tif",
		"/vsimem/x.tif":           "/vsimem/x.tif",
	} {
		if got := GDALPath(in); got != want {
			t.Errorf("GDALPath(%q) = %q, want %q", in, got, want)
		}
	}
	t.Setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9000")
	t.Setenv("AWS_S3_USE_PATH_STYLE", "")
	t.Setenv("AWS_NO_SIGN_REQUEST", "YES")
	got := GDALConfig()
	want := map[string]string{"AWS_S3_ENDPOINT": "127.0.0.1:9000", "AWS_HTTPS": "NO", "AWS_VIRTUAL_HOSTING": "FALSE", "AWS_NO_SIGN_REQUEST": "YES"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("GDALConfig()[%s] = %q, want %q", k, got[k], v)
		}
	}
}
