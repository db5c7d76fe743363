package storage

import (
	"path"
	"path/filepath"
	"strings"
)

// A location is where manejo reads or writes an object, written as a string
// the user can type:
//
//	/data/out/indicators.parquet, out/run.json   a local path (Local)
//	s3://bucket/prefix/key                       an S3 object or prefix (S3)
//	https://host/path, http://host/path          a read-only URL (HTTP)
//	gs://bucket/key, /vsi…/…                     GDAL-only paths (rasters, OGR)
//
// KindOf tells them apart, Join builds one from another, GDALPath maps one
// to the path GDAL opens, and LocationOf maps it back. Every function of this
// package taking a loc accepts the first three; gs:// and /vsi… paths are
// read by GDAL only.

// Kind tells where a location lives.
type Kind int

// Location kinds.
const (
	Local Kind = iota
	S3
	HTTP
)

// KindOf classifies a location: s3://, http(s)://, or anything else (a
// local path).
func KindOf(loc string) Kind {
	switch {
	case strings.HasPrefix(loc, "s3://"):
		return S3
	case strings.HasPrefix(loc, "https://"), strings.HasPrefix(loc, "http://"):
		return HTTP
	}
	return Local
}

// Join joins path elements onto a base location: with the OS separator for
// a local path, with "/" for a URL (s3://, http(s)://, gs://).
func Join(base string, elem ...string) string {
	if !strings.Contains(base, "://") {
		return filepath.Join(append([]string{base}, elem...)...)
	}
	return strings.TrimRight(base, "/") + "/" + path.Join(elem...)
}

// GDALPath maps a location to the path GDAL opens through its virtual file
// systems: s3://bucket/key → /vsis3/bucket/key, gs://bucket/key →
// /vsigs/bucket/key, http(s)://… → /vsicurl/http(s)://…; local paths and
// GDAL /vsi… paths are returned unchanged.
func GDALPath(loc string) string {
	switch {
	case strings.HasPrefix(loc, "s3://"):
		return "/vsis3/" + strings.TrimPrefix(loc, "s3://")
	case strings.HasPrefix(loc, "gs://"):
		return "/vsigs/" + strings.TrimPrefix(loc, "gs://")
	case strings.HasPrefix(loc, "https://"), strings.HasPrefix(loc, "http://"):
		return "/vsicurl/" + loc
	}
	return loc
}

// LocationOf is the inverse of GDALPath for the object-store prefixes:
// /vsis3/bucket/key → s3://bucket/key, /vsigs/bucket/key → gs://bucket/key,
// /vsicurl/URL → URL; any other path is returned unchanged.
func LocationOf(gdalPath string) string {
	switch {
	case strings.HasPrefix(gdalPath, "/vsis3/"):
		return "s3://" + strings.TrimPrefix(gdalPath, "/vsis3/")
	case strings.HasPrefix(gdalPath, "/vsigs/"):
		return "gs://" + strings.TrimPrefix(gdalPath, "/vsigs/")
	case strings.HasPrefix(gdalPath, "/vsicurl/"):
		return strings.TrimPrefix(gdalPath, "/vsicurl/")
	}
	return gdalPath
}
