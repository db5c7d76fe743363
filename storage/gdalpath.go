package storage

import "strings"

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
