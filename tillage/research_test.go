//go:build research

package tillage

import "flag"

// The research build's knob (research.go), set from the command line:
// go test -tags research ./tillage/ -accuracy -plainunmix …
func init() {
	flag.BoolVar(&plainUnmix, "plainunmix", false, "unmix with spectral.New, not NewDry (the detector before the dry line)")
	flag.BoolVar(&mdOff, "nomediandrop", false, "tillage harnesses: Detect without the median-NDTI drop test (the detector before it)")
	flag.BoolVar(&stepOff, "nostep", false, "tillage harnesses: Detect without the NDTI step test (the detector before issue 30)")
	flag.BoolVar(&lowResOff, "nolowresidue", false, "tillage harnesses: Detect without the low-residue test (the detector before it)")
	flag.BoolVar(&wetOff, "nowetresponse", false, "tillage harnesses: the low-residue test without the ground's wetting response (the detector before session 9)")
	flag.BoolVar(&swSoilWetsAsStraw, "soilwetsasstraw", false, "short world stress: soil's SWIR2 wets 0.55–0.9 of its SWIR1, as straw's (soil NDTI falls when wet)")
}
