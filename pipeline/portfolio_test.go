package pipeline

import (
	"testing"

	"github.com/manejo/manejo/series"
)

// TestSensorOf: Landsat platforms sharing landsat-c2-l2 are told apart by
// their item id; other collections are their own sensor.
func TestSensorOf(t *testing.T) {
	for _, c := range []struct{ coll, item, want string }{
		{"landsat-c2-l2", "LE07_L2SP_026031_20191105_20200825_02_T1", "landsat-c2-l2/LE07"},
		{"landsat-c2-l2", "LC08_L2SP_026031_20191113_20200825_02_T1", "landsat-c2-l2/LC08"},
		{"landsat-c2-l2", "LC09_L2SP_026031_20221113_20221115_02_T1", "landsat-c2-l2/LC09"},
		{"landsat-c2-l2", "", "landsat-c2-l2"},
		{"sentinel-2-l2a", "S2A_MSIL2A_20191106T170521_N0213_R069_T15TUG", "sentinel-2-l2a"},
		{"landsat-c2-l2", "LE07", "landsat-c2-l2"},
	} {
		if got := sensorOf(series.Obs{Collection: c.coll, ItemID: c.item}); got != c.want {
			t.Errorf("sensorOf(%q, %q) = %q, want %q", c.coll, c.item, got, c.want)
		}
	}
}
