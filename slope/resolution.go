package slope

import (
	"fmt"
	"math"
)

// Resolution limits of IN SPA/MAPA 2/2025 item 6.3 ("produtos com resolução
// espacial mínima de 30 metros, tais como NASADEM ou equivalentes de
// resolução superior").
//
// The item names NASADEM, whose 1 arc-second pixel is 30.7–30.9 m on the
// ground in Brazil (30.92 m east–west at the equator), as compliant, so the
// "30 m" of the rule is the nominal class of 1″ products, not a literal
// bound: a literal 30 m test would refuse the very product the rule cites.
//
//   - Geographic DEMs: refused when a pixel side exceeds MaxPixelArcSec
//     (1.05″). 1″ products pass, including geotransforms rounded to a few
//     decimals (0.000278° = 1.0008″); 2″ and 3″ (≈ 90 m) products are refused.
//   - Projected DEMs: refused when a pixel side exceeds MaxPixelM (31 m):
//     30 m products pass, and so does a 1″ DEM reprojected at its native
//     resolution (at most 30.92 m); 90 m products are refused.
const (
	MaxPixelArcSec = 1.05
	MaxPixelM      = 31.0
)

// CheckResolution returns an error wrapping ErrTooCoarse when a DEM pixel of
// pxX × pxY is coarser than the 30 m class of IN 6.3. For a geographic DEM
// (geographic true) the sizes are in degrees, otherwise in metres.
func CheckResolution(pxX, pxY float64, geographic bool) error {
	pxX, pxY = math.Abs(pxX), math.Abs(pxY)
	if geographic {
		ax, ay := pxX*3600, pxY*3600
		if ax > MaxPixelArcSec || ay > MaxPixelArcSec {
			mx, my := PixelSizeM(0, pxX, pxY, WGS84)
			return fmt.Errorf("pixel %.3g″ × %.3g″ (%.1f × %.1f m at the equator) exceeds %.2f″: %w",
				ax, ay, mx, my, MaxPixelArcSec, ErrTooCoarse)
		}
		return nil
	}
	if pxX > MaxPixelM || pxY > MaxPixelM {
		return fmt.Errorf("pixel %.2f × %.2f m exceeds %.0f m: %w", pxX, pxY, MaxPixelM, ErrTooCoarse)
	}
	return nil
}
