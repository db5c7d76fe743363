//go:build research

package coverage

import (
	"flag"
	"fmt"
)

// The research build's knobs (research.go), set from the command line:
// go test -tags research ./coverage/ -accuracy -plainunmix …

func init() {
	flag.Func("intervalscale", "diagnostics: the interval widening (default the package's)", func(s string) (err error) {
		_, err = fmt.Sscan(s, &intervalScale)
		return err
	})
	flag.Func("declaredintervalscale", "diagnostics: the interval widening of seasons read with a declared residue", func(s string) (err error) {
		_, err = fmt.Sscan(s, &declaredIntervalScale)
		return err
	})
	flag.Float64Var(&residueSDScale, "residuesdscale", 1, "diagnostics: scale of the declared residue prior's sd")
	flag.BoolVar(&envelopeFromEnd, "envfromend", false, "diagnostics: declared seasons' envelope from the residue's end, aged (agedEnvelope)")
	flag.IntVar(&envelopeMaxAgeDays, "envmaxage", 180, "diagnostics: agedEnvelope's reach before the sowing, days")
	flag.BoolVar(&declaredMedian, "declaredmedian", false, "diagnostics: read declared seasons with the posterior-median straw")
	flag.BoolVar(&plainUnmix, "plainunmix", false, "unmix with spectral.New, not NewDry (the estimator before the dry line)")
}
