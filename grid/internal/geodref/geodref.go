// Package geodref exposes PROJ's geodesic routines (GeographicLib's C port,
// <geodesic.h>) as an independent reference for the grid tests: geodesic
// polygon area and UTM projection through PROJ. It is imported only by
// tests; production code measures areas in pure Go.
package geodref

/*
#cgo LDFLAGS: -lproj
#include <geodesic.h>
#include <stdlib.h>
*/
import "C"

import "unsafe"

// PolygonAreaM2 returns the unsigned geodesic area in square metres of a
// simple ring given as lon/lat degrees on WGS84 (the ring may be open or
// closed; the closing vertex is dropped).
func PolygonAreaM2(lon, lat []float64) float64 {
	n := len(lon)
	if n > 1 && lon[0] == lon[n-1] && lat[0] == lat[n-1] {
		n--
	}
	if n < 3 {
		return 0
	}
	var g C.struct_geod_geodesic
	C.geod_init(&g, 6378137, 1/298.257223563)
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
	a := float64(area)
	if a < 0 {
		a = -a
	}
	return a
}

// Direct solves the direct geodesic problem on WGS84: from lon/lat degrees,
// azimuth azi (degrees clockwise from north) and distance s (metres) it
// returns the end point.
func Direct(lon, lat, azi, s float64) (lon2, lat2 float64) {
	var g C.struct_geod_geodesic
	C.geod_init(&g, 6378137, 1/298.257223563)
	var la2, lo2, az2 C.double
	C.geod_direct(&g, C.double(lat), C.double(lon), C.double(azi), C.double(s), &la2, &lo2, &az2)
	return float64(lo2), float64(la2)
}
