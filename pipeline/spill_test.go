package pipeline

import (
	"math"
	"os"
	"reflect"
	"testing"
	"time"

	"github.com/manejo/manejo/grid"
	"github.com/manejo/manejo/series"
)

// TestSpillRoundTrip: what the read pass spills comes back exactly (NaN
// bits, masks, a scene that gave the talhão no observation), Known
// accepts exactly the spilled pairs, and a talhão whose file was cut short
// is left to its batch (nothing served).
func TestSpillRoundTrip(t *testing.T) {
	sp, err := newSpill(t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	defer sp.close()
	day := time.Date(2026, 3, 4, 0, 0, 0, 0, time.UTC)
	a := &series.Item{ID: "S2A_1", Collection: "sentinel-2-l2a", Datetime: day.Add(13 * time.Hour)}
	b := &series.Item{ID: "S2B_2", Collection: "sentinel-2-l2a", Datetime: day.AddDate(0, 0, 5)}
	nan := float32(math.NaN())
	obs := []series.Obs{
		{FieldID: "T1", CellID: "c0", Date: day, Collection: a.Collection, ItemID: a.ID, NDVI: 0.71, NDTI: 0.12, Red: 0.03, NIR: 0.4, SWIR1: 0.2, SWIR2: 0.15},
		{FieldID: "T1", CellID: "c1", Date: day, Collection: a.Collection, ItemID: a.ID, NDVI: nan, NDTI: nan, Red: nan, NIR: nan, SWIR1: nan, SWIR2: nan, Mask: "cloud"},
	}
	sp.write(series.SceneRead{FieldID: "T1", Item: a, Obs: obs, Reads: 7, ReadBytes: 4096})
	sp.write(series.SceneRead{FieldID: "T1", Item: b}) // read in full, no cell inside
	sp.write(series.SceneRead{FieldID: "T2", Item: a, Obs: []series.Obs{{FieldID: "T2", CellID: "c0", Date: day, Collection: a.Collection, ItemID: a.ID, NDVI: 0.5}}})
	recs, err := sp.load("T1")
	if err != nil || len(recs) != 2 {
		t.Fatalf("load T1: %d records, %v", len(recs), err)
	}
	if recs[0].itemID != a.ID || recs[0].reads != 7 || recs[0].bytes != 4096 || len(recs[1].obs) != 0 {
		t.Errorf("records %+v", recs)
	}
	bits := func(o []series.Obs) [][6]uint32 {
		var out [][6]uint32
		for _, x := range o {
			out = append(out, [6]uint32{math.Float32bits(x.NDVI), math.Float32bits(x.NDTI), math.Float32bits(x.Red), math.Float32bits(x.NIR), math.Float32bits(x.SWIR1), math.Float32bits(x.SWIR2)})
		}
		return out
	}
	got := recs[0].obs
	if !reflect.DeepEqual(bits(got), bits(obs)) || got[1].Mask != "cloud" || got[0].CellID != "c0" || !got[0].Date.Equal(day) || got[0].ItemID != a.ID || got[0].FieldID != "T1" {
		t.Errorf("observations came back as %+v", got)
	}
	// T2's file cut short: its batch reads it.
	raw, _ := os.ReadFile(sp.path("T2"))
	if err := os.WriteFile(sp.path("T2"), raw[:len(raw)-3], 0o600); err != nil {
		t.Fatal(err)
	}
	var fed []string
	o, feed := sp.options(series.Options{OnScene: func(s series.SceneRead) { fed = append(fed, s.FieldID+"/"+s.Item.ID) }},
		[]grid.Grid{{Field: grid.Field{ID: "T1"}}, {Field: grid.Field{ID: "T2"}}},
		map[string]*series.Item{a.ID: a, b.ID: b})
	if !o.Known("T1", a) || !o.Known("T1", b) || o.Known("T2", a) || len(o.Cached) != 2 {
		t.Errorf("known T1/a %v, T1/b %v, T2/a %v; %d cached", o.Known("T1", a), o.Known("T1", b), o.Known("T2", a), len(o.Cached))
	}
	if len(fed) != 0 {
		t.Errorf("fed to the cache before sampling: %v", fed)
	}
	feed()
	if !reflect.DeepEqual(fed, []string{"T1/S2A_1", "T1/S2B_2"}) {
		t.Errorf("fed to the cache: %v", fed)
	}
}
