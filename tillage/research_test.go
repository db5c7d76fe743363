//go:build research

package tillage

import "flag"

// The research build's knob (research.go), set from the command line:
// go test -tags research ./tillage/ -accuracy -plainunmix …
func init() {
	flag.BoolVar(&plainUnmix, "plainunmix", false, "unmix with spectral.New, not NewDry (the detector before the dry line)")
}
