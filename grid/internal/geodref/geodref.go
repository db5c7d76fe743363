// Package geodref exposes PROJ's geodesic routines (GeographicLib's C port,
// <geodesic.h>) as an independent reference for the grid tests: geodesic
// polygon area through PROJ. It is imported only by tests; production code
// measures areas in pure Go. The ellipsoid is a parameter, so the WGS84
// constants have one home (package grid).
package geodref

/*
#cgo LDFLAGS: -lproj
#include <geodesic.h>
#include <stdlib.h>
*/
import "C"

import "unsafe"

// PolygonAreaM2 returns the unsigned geodesic area in square metres of a
// simple ring given as lon/lat degrees on the ellipsoid of semi-major axis a
// (metres) and flattening f (the ring may be open or closed; the closing
// vertex is dropped).
func PolygonAreaM2(a, f float64, lon, lat []float64) float64 {
	n := len(lon)
	if n > 1 && lon[0] == lon[n-1] && lat[0] == lat[n-1] {
		n--
	}
	if n < 3 {
		return 0
	}
	var g C.struct_geod_geodesic
	C.geod_init(&g, C.double(a), C.double(f))
	clat := (*C.double)(C.malloc(C.size_t(n) * 8))
	clon := (*C.double)(C.malloc(C.size_t(n) * 8))
	defer C.free(unsafe.Pointer(clat))
	defer C.free(unsafe.Pointer(clon))
	la := unsafe.Slice(clat, n)
	lo := unsafe.Slice(clon, n)
	for i := 0; i < n; i++ {
		la[i] = C.double(lat[i])
		lo[i] = C.double(lon[i])
	}
	var area, perim C.double
	C.geod_polygonarea(&g, clat, clon, C.int(n), &area, &perim)
	if area < 0 {
		area = -area
	}
	return float64(area)
}
