package tillage_test

import (
	"fmt"
	"math"
	"time"

	"github.com/manejo/manejo/tillage"
)

// A cell under straw (NDVI 0.20, NDTI 0.24) is harrowed: from 2024-09-10
// NDTI falls to bare oxisol (0.06) while NDVI stays low, and stays there
// until soybean emerges. One cloudy date has no value.
func ExampleDetectCell() {
	start := time.Date(2024, 8, 1, 0, 0, 0, 0, time.UTC)
	ndti := []float64{0.24, 0.23, 0.25, 0.24, 0.24, 0.23, 0.24, 0.25, 0.06, -1, 0.05, 0.06, 0.05, 0.06}
	var obs []tillage.Obs
	for i, v := range ndti {
		o := tillage.Obs{Date: start.AddDate(0, 0, 5*i), NDVI: 0.19 + 0.01*float64(i%2), NDTI: v}
		if v < 0 {
			o.NDVI, o.NDTI = math.NaN(), math.NaN()
		}
		obs = append(obs, o)
	}
	for _, b := range tillage.DetectCell(obs, tillage.DefaultParams()) {
		fmt.Printf("break %s (between %s and %s), soil fraction %.2f → %.2f\n",
			b.Date.Format(time.DateOnly), b.Before.Format(time.DateOnly), b.After.Format(time.DateOnly), b.PreLevel, b.PostLevel)
	}
	// Output:
	// break 2024-09-10 (between 2024-09-05 and 2024-09-10), soil fraction 0.01 → 0.98
}

// A talhão of four interior cells and two headland cells: the interior is
// harrowed between the 2024-09-04 and 2024-09-09 passes; the headland
// (border) cells are revolved a month earlier on their own, which IN 2.3 III
// allows and which is no event.
func ExampleDetect() {
	start := time.Date(2024, 7, 1, 0, 0, 0, 0, time.UTC)
	series := func(tilled time.Time) []tillage.Obs {
		var obs []tillage.Obs
		for d := start; d.Before(start.AddDate(0, 4, 0)); d = d.AddDate(0, 0, 5) {
			o := tillage.Obs{Date: d, NDVI: 0.20, NDTI: 0.24} // straw
			if !d.Before(tilled) {
				o.NDVI, o.NDTI = 0.16, 0.06 // bare oxisol
			}
			obs = append(obs, o)
		}
		return obs
	}
	interior, headland := start.AddDate(0, 0, 70), start.AddDate(0, 0, 40)
	var cells []tillage.Cell
	for i := 0; i < 6; i++ {
		c := tillage.Cell{ID: fmt.Sprint(i), Obs: series(interior)}
		if i >= 4 {
			c.Border, c.Obs = true, series(headland)
		}
		cells = append(cells, c)
	}
	for _, e := range tillage.Detect(cells, tillage.DefaultParams()) {
		fmt.Printf("event %s (after %s), %d of 6 cells, %d interior\n",
			e.Date.Format(time.DateOnly), e.Before.Format(time.DateOnly), e.NCells, e.NInterior)
	}
	// Output:
	// event 2024-09-09 (after 2024-09-04), 4 of 6 cells, 4 interior
}

// T from the last talhão event, and a censored T when there is none.
func ExampleYears() {
	ev := []tillage.Event{{Date: time.Date(2019, 9, 20, 0, 0, 0, 0, time.UTC)}}
	asOf := time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC)
	t := tillage.Years(ev, time.Date(2016, 7, 1, 0, 0, 0, 0, time.UTC), asOf)
	fmt.Println(t.Years, t.Level, t.Censored)
	t = tillage.Years(nil, time.Date(2017, 7, 1, 0, 0, 0, 0, time.UTC), asOf)
	fmt.Println(t.MinYears, t.Level, t.Censored)
	t = tillage.Years(nil, time.Date(2022, 7, 1, 0, 0, 0, 0, time.UTC), asOf)
	fmt.Println(t.MinYears, t.Level, t.Reason)
	// Output:
	// 6 3 false
	// 9 4 true
	// 4 0 insufficient history: no soil revolving in 4 full years (since 2022-07-01), T ≥ 4 does not decide the level (needs 8)
}
