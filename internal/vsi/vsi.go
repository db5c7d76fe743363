// Package vsi maps the locations operators give manejo to the names GDAL
// opens through its virtual file systems. Standard library only, so that
// grid, slope and storage share it without pulling each other in.
package vsi

import "strings"

// Path maps a location to the path GDAL opens: s3://bucket/key →
// /vsis3/bucket/key, gs://bucket/key → /vsigs/bucket/key, http(s)://… →
// /vsicurl/http(s)://…; local paths and GDAL /vsi… paths are returned
// unchanged.
func Path(loc string) string {
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
