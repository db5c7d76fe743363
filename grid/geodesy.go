package grid

import (
	"math"

	"github.com/paulmach/orb"
)

// WGS84 ellipsoid.
const (
	wgs84A = 6378137.0         // semi-major axis, metres
	wgs84F = 1 / 298.257223563 // flattening
	utmK0  = 0.9996            // UTM central scale factor
	utmE0  = 500000.0          // UTM false easting, metres
	utmN0S = 10000000.0        // UTM false northing in the southern hemisphere, metres
	degRad = math.Pi / 180
)

var (
	wgs84E2 = wgs84F * (2 - wgs84F) // first eccentricity squared
	wgs84E  = math.Sqrt(wgs84E2)
	confLat = func() [4]float64 {
		e2 := wgs84E2
		e4, e6 := e2*e2, e2*e2*e2
		e8 := e4 * e4
		return [4]float64{
			e2/2 + 5*e4/24 + e6/12 + 13*e8/360,
			7*e4/48 + 29*e6/240 + 811*e8/11520,
			7*e6/120 + 81*e8/1120,
			4279 * e8 / 161280,
		}
	}()
)

// tmProj is an ellipsoidal transverse Mercator projection on WGS84 using
// Krüger's series to order n⁶ (Karney 2011, "Transverse Mercator with an
// accuracy of a few nanometres"): errors stay far below a millimetre within
// several degrees of the central meridian, so a talhão straddling a UTM zone
// boundary is projected exactly as well as one inside its zone.
type tmProj struct {
	lon0     float64 // central meridian, radians
	falseN   float64 // false northing, metres
	a1       float64 // k0·A, metres
	alp, bet [7]float64
}

// utmZone returns the UTM zone (1..60) and its WGS84 EPSG code (326zz north,
// 327zz south) for a lon/lat point.
func utmZone(p orb.Point) (zone, epsg int) {
	zone = int(math.Floor((p[0]+180)/6)) + 1
	if zone < 1 {
		zone = 1
	}
	if zone > 60 {
		zone = 60
	}
	epsg = 32600 + zone
	if p[1] < 0 {
		epsg = 32700 + zone
	}
	return zone, epsg
}

// newUTM returns the projection of a UTM zone, south when south is true.
func newUTM(zone int, south bool) *tmProj {
	n := wgs84F / (2 - wgs84F)
	n2 := n * n
	n3 := n2 * n
	n4, n5, n6 := n2*n2, n2*n3, n3*n3
	p := &tmProj{lon0: float64(6*zone-183) * degRad}
	if south {
		p.falseN = utmN0S
	}
	A := wgs84A / (1 + n) * (1 + n2/4 + n4/64 + n6/256)
	p.a1 = utmK0 * A
	p.alp = [7]float64{0,
		n/2 - 2*n2/3 + 5*n3/16 + 41*n4/180 - 127*n5/288 + 7891*n6/37800,
		13*n2/48 - 3*n3/5 + 557*n4/1440 + 281*n5/630 - 1983433*n6/1935360,
		61*n3/240 - 103*n4/140 + 15061*n5/26880 + 167603*n6/181440,
		49561*n4/161280 - 179*n5/168 + 6601661*n6/7257600,
		34729*n5/80640 - 3418889*n6/1995840,
		212378941 * n6 / 319334400,
	}
	p.bet = [7]float64{0,
		n/2 - 2*n2/3 + 37*n3/96 - n4/360 - 81*n5/512 + 96199*n6/604800,
		n2/48 + n3/15 - 437*n4/1440 + 46*n5/105 - 1118711*n6/3870720,
		17*n3/480 - 37*n4/840 - 209*n5/4480 + 5569*n6/90720,
		4397*n4/161280 - 11*n5/504 - 830251*n6/7257600,
		4583*n5/161280 - 108847*n6/3991680,
		20648693 * n6 / 638668800,
	}
	return p
}

// krueger sums Σ c[j]·sin(2jξ)·cosh(2jη) and Σ c[j]·cos(2jξ)·sinh(2jη)
// for j = 1..6, with the multiple angles from recurrences instead of twelve
// trigonometric and hyperbolic calls.
func krueger(c *[7]float64, xi, eta float64) (sx, sy float64) {
	s2, c2 := math.Sincos(2 * xi)
	e := math.Exp(2 * eta)
	ej, ie := 1.0, 1/e
	iej := 1.0
	sj, cj := 0.0, 1.0 // sin, cos of 2jξ for j = 0
	for j := 1; j <= 6; j++ {
		sj, cj = sj*c2+cj*s2, cj*c2-sj*s2
		ej *= e
		iej *= ie
		ch, sh := (ej+iej)/2, (ej-iej)/2
		sx += c[j] * sj * ch
		sy += c[j] * cj * sh
	}
	return sx, sy
}

// forward projects lon/lat degrees to easting/northing metres.
func (p *tmProj) forward(q orb.Point) orb.Point {
	phi := q[1] * degRad
	lam := q[0]*degRad - p.lon0
	s := math.Sin(phi)
	t := math.Sinh(math.Atanh(s) - wgs84E*math.Atanh(wgs84E*s))
	xip := math.Atan2(t, math.Cos(lam))
	etap := math.Atanh(math.Sin(lam) / math.Sqrt(1+t*t))
	dxi, deta := krueger(&p.alp, xip, etap)
	xi, eta := xip+dxi, etap+deta
	return orb.Point{utmE0 + p.a1*eta, p.falseN + p.a1*xi}
}

// inverse turns easting/northing metres back into lon/lat degrees.
func (p *tmProj) inverse(q orb.Point) orb.Point {
	xi := (q[1] - p.falseN) / p.a1
	eta := (q[0] - utmE0) / p.a1
	dxi, deta := krueger(&p.bet, xi, eta)
	xip, etap := xi-dxi, eta-deta
	chi := math.Asin(math.Sin(xip) / math.Cosh(etap))
	lam := math.Atan2(math.Sinh(etap), math.Cos(xip))
	// geodetic latitude from the conformal latitude (Snyder 1987, eq. 3-5;
	// the e¹⁰ terms left out are below 1e-11 rad, 0.1 mm)
	s2, c2 := math.Sincos(2 * chi)
	s4 := 2 * s2 * c2
	c4 := c2*c2 - s2*s2
	s6 := s4*c2 + c4*s2
	s8 := 2 * s4 * c4
	phi := chi + confLat[0]*s2 + confLat[1]*s4 + confLat[2]*s6 + confLat[3]*s8
	return orb.Point{(lam + p.lon0) / degRad, phi / degRad}
}

// laea is the ellipsoidal Lambert azimuthal equal-area projection (Snyder
// 1987, §24) centred on a point: areas measured in its plane are areas on
// the WGS84 ellipsoid.
type laea struct {
	lon0, sinB1, cosB1, rq, d float64
}

// authalicQ is Snyder's q(φ) (eq. 3-12).
func authalicQ(sinPhi float64) float64 {
	es := wgs84E * sinPhi
	return (1 - wgs84E2) * (sinPhi/(1-es*es) - 1/(2*wgs84E)*math.Log((1-es)/(1+es)))
}

var authalicQp = authalicQ(1)

func newLAEA(centre orb.Point) laea {
	phi1 := centre[1] * degRad
	s1 := math.Sin(phi1)
	b1 := math.Asin(authalicQ(s1) / authalicQp)
	rq := wgs84A * math.Sqrt(authalicQp/2)
	m1 := math.Cos(phi1) / math.Sqrt(1-wgs84E2*s1*s1)
	return laea{
		lon0:  centre[0] * degRad,
		sinB1: math.Sin(b1),
		cosB1: math.Cos(b1),
		rq:    rq,
		d:     wgs84A * m1 / (rq * math.Cos(b1)),
	}
}

func (l laea) forward(q orb.Point) (x, y float64) {
	sb := authalicQ(math.Sin(q[1]*degRad)) / authalicQp
	if sb > 1 {
		sb = 1
	} else if sb < -1 {
		sb = -1
	}
	cb := math.Sqrt(1 - sb*sb)
	dl := q[0]*degRad - l.lon0
	cdl := math.Cos(dl)
	b := l.rq * math.Sqrt(2/(1+l.sinB1*sb+l.cosB1*cb*cdl))
	return b * l.d * cb * math.Sin(dl), b / l.d * (l.cosB1*sb - l.sinB1*cb*cdl)
}

// ringAreaM2 is the unsigned area in square metres of a lon/lat ring,
// measured in the equal-area plane l.
func (l laea) ringAreaM2(r orb.Ring) float64 {
	n := len(r)
	if n < 3 {
		return 0
	}
	x0, y0 := l.forward(r[0])
	px, py := x0, y0
	var s float64
	for i := 1; i < n; i++ {
		x, y := l.forward(r[i])
		s += (px-x0)*(y-y0) - (x-x0)*(py-y0)
		px, py = x, y
	}
	return math.Abs(s) / 2
}

// AreaHa returns the area of mp in hectares on the WGS84 ellipsoid. Rings
// are lon/lat in degrees; the first ring of each polygon is its shell and
// the others are holes (their area is subtracted), whatever their winding.
// Edges are taken as straight lines in an ellipsoidal Lambert azimuthal
// equal-area plane centred on the polygon, which differs from the geodesic
// edges of GeographicLib/PROJ by far less than 0.01 % for talhões up to
// tens of kilometres across (tested against PROJ's geod_polygonarea).
// An empty geometry has area 0.
func AreaHa(mp orb.MultiPolygon) float64 {
	b := mp.Bound()
	if len(mp) == 0 || b.IsEmpty() && b.Min == b.Max {
		return 0
	}
	l := newLAEA(b.Center())
	var m2 float64
	for _, p := range mp {
		for i, r := range p {
			a := l.ringAreaM2(r)
			if i == 0 {
				m2 += a
			} else {
				m2 -= a
			}
		}
	}
	return m2 / 1e4
}

// polygonAreaHa is AreaHa for one polygon.
func polygonAreaHa(p orb.Polygon) float64 { return AreaHa(orb.MultiPolygon{p}) }

// UTMInZone returns p's easting and northing in metres in the WGS84 UTM
// zone of the given EPSG code (326zz, 327zz), inside the zone or not.
func UTMInZone(p orb.Point, epsg int) (x, y float64) {
	q := newUTM(epsg%100, epsg/100 == 327).forward(p)
	return q[0], q[1]
}

// UTM returns the WGS84 UTM zone of p as its EPSG code (326zz north,
// 327zz south) and p's easting and northing in metres in that zone.
func UTM(p orb.Point) (epsg int, x, y float64) {
	zone, epsg := utmZone(p)
	q := newUTM(zone, p[1] < 0).forward(p)
	return epsg, q[0], q[1]
}
