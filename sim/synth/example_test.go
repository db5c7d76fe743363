package synth_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/manejo/manejo/sim/synth"
)

// ExampleGenerate writes one month of the archive and prints its talhões.
func ExampleGenerate() {
	dir, err := os.MkdirTemp("", "synth-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	tr, err := synth.Generate(context.Background(), synth.Options{
		Out:   dir,
		Seed:  1,
		Start: time.Date(2024, 9, 1, 0, 0, 0, 0, time.UTC),
		End:   time.Date(2024, 9, 30, 0, 0, 0, 0, time.UTC),
	})
	if err != nil {
		panic(err)
	}
	fmt.Printf("%d items of %s, EPSG:%d, tile %s\n", len(tr.Items), tr.Collection, tr.EPSG, tr.MGRS)
	for _, f := range tr.Fields {
		fmt.Printf("%s %-5s %-9s %6.1f ha  slope %.1f %%  MODIS-eligible %v\n", f.ID, f.Crop, f.Shape, f.AreaHa, f.Slope.MeanPct, f.MODIS.Eligible)
	}
	// Output:
	// 6 items of sentinel-2-l2a, EPSG:32721, tile 21LXG
	// SYN-001 soja  rectangle  302.8 ha  slope 1.0 %  MODIS-eligible true
	// SYN-002 soja  L           76.0 ha  slope 1.2 %  MODIS-eligible false
	// SYN-003 soja  rectangle   20.0 ha  slope 5.4 %  MODIS-eligible false
	// SYN-004 milho rectangle  150.0 ha  slope 5.2 %  MODIS-eligible true
	// SYN-005 soja  rectangle   45.0 ha  slope 5.3 %  MODIS-eligible false
	// SYN-006 soja  rectangle   40.0 ha  slope 1.1 %  MODIS-eligible false
}
