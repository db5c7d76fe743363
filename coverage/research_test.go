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
	flag.BoolVar(&plainUnmix, "plainunmix", false, "unmix with spectral.New, not NewDry (the estimator before the dry line)")
}
