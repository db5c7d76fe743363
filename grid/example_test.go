package grid_test

import (
	"fmt"
	"math"

	"github.com/manejo/manejo/grid"
	"github.com/manejo/manejo/zarc"
	"github.com/paulmach/orb"
)

func ExampleBuild() {
	// A 0.01° × 0.01° talhão near Sinop-MT (about 120.6 ha).
	f := grid.Field{ID: "MT-SIN-900", Crop: zarc.Soja, Geometry: orb.MultiPolygon{{{
		{-55.60, -11.80}, {-55.59, -11.80}, {-55.59, -11.79}, {-55.60, -11.79}, {-55.60, -11.80},
	}}}}
	g, err := grid.Build(f, grid.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	lo, hi := grid.CellSizeRange(g.AreaHa)
	fmt.Printf("%.2f ha, legal cells %g–%g ha, cells of %g ha (%.1f m) in EPSG:%d\n", g.AreaHa, lo, hi, g.CellSizeHa, g.CellSizeM, g.EPSG)
	fmt.Printf("%d sampling points; first %s at %.5f, %.5f\n", len(g.Cells), g.Cells[0].ID, g.Cells[0].Centre[0], g.Cells[0].Centre[1])
	fmt.Printf("MODIS eligible: %v (%d points, need %.0f)\n", g.MODISEligible, g.MODISPoints, math.Ceil(g.AreaHa/10))
	// Output:
	// 120.56 ha, legal cells 5–10 ha, cells of 5 ha (223.6 m) in EPSG:32721
	// 20 sampling points; first r001c001 at -55.59802, -11.79152
	// MODIS eligible: true (15 points, need 13)
}
