package series_test

import (
	"context"
	"fmt"

	"github.com/manejo/manejo/grid"
	"github.com/manejo/manejo/series"
	"github.com/manejo/manejo/zarc"
	"github.com/paulmach/orb"
)

// A Sentinel-2 L2A item of processing baseline 05.10 without raster:bands
// gets the −1000 DN offset; one that says the offset is applied does not.
func ExampleAssetRadiometry() {
	p := series.Profiles()["sentinel-2-l2a"]
	applied := true
	for _, it := range []*series.Item{
		{ID: "old", ProcessingBaseline: "03.01"},
		{ID: "new", ProcessingBaseline: "05.10"},
		{ID: "harmonized", ProcessingBaseline: "05.10", BOAOffsetApplied: &applied},
	} {
		r := series.AssetRadiometry(p, it, series.Asset{Band: 1})
		dn := 3600.0
		fmt.Printf("%s: reflectance(%g) = %.2f (%s)\n", it.ID, dn, dn*r.Scale+r.Offset, r.Source)
	}
	// Output:
	// old: reflectance(3600) = 0.36 (profile)
	// new: reflectance(3600) = 0.26 (profile+s2-baseline)
	// harmonized: reflectance(3600) = 0.36 (profile)
}

// Sample NDVI at a labelled soybean/maize point near Sinop (MT) from the
// real MOD13Q1 cube described by testdata/sinop/catalog.json.
func ExampleSample() {
	ctx := context.Background()
	cat, errs := series.LoadCatalog(ctx, "testdata/sinop/catalog.json",
		// The hrefs lie outside the catalog's folder: allow where they are.
		series.CatalogOptions{AllowHrefPrefixes: []string{"../testdata/realdata/"}})
	if len(errs) > 0 {
		fmt.Println(errs)
		return
	}
	pt := orb.Point{-55.68369, -11.73679}
	b := orb.Bound{Min: pt, Max: pt}.Pad(0.005)
	g := grid.Grid{
		Field:         grid.Field{ID: "p7", Geometry: orb.MultiPolygon{{orb.Ring{b.Min, {b.Max[0], b.Min[1]}, b.Max, {b.Min[0], b.Max[1]}, b.Min}}}},
		Cells:         []grid.Cell{{FieldID: "p7", ID: "c1", Centre: pt, MODIS: true}},
		MODISEligible: true,
	}
	// The cube has no pixel-reliability band.
	p := series.Profiles()["modis-13Q1-061"]
	p.QAOptional = true
	obs, st, err := series.Sample(ctx, cat, []grid.Grid{g}, series.Options{
		From: zarc.Day(cat.Items[0].Datetime), To: zarc.Day(cat.Items[2].Datetime),
		Profiles: map[string]*series.Profile{"modis-13Q1-061": p},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, o := range obs {
		fmt.Printf("%s %s NDVI %.4f\n", o.CellID, o.Date.Format("2006-01-02"), o.NDVI)
	}
	fmt.Println("scenes read:", st.ScenesRead)
	// Output:
	// c1 2013-09-14 NDVI 0.3221
	// c1 2013-09-30 NDVI 0.4473
	// c1 2013-10-16 NDVI 0.3528
	// scenes read: 3
}
