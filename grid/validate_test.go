package grid

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/paulmach/orb"
)

func TestValidate(t *testing.T) {
	const lon, lat = -55.6, -11.8
	mx, my := metresPerDeg(lat)
	dx, dy := 500/mx, 500/my
	sq := square(lon, lat, 25)
	bowtie := orb.MultiPolygon{{{{lon, lat}, {lon + dx, lat + dy}, {lon + dx, lat}, {lon, lat + dy}, {lon, lat}}}}
	holeOut := square(lon, lat, 25)
	holeOut[0] = append(holeOut[0], rectRing(lon+dx*2, lat, 50, 50))
	holeCross := square(lon, lat, 25)
	holeCross[0] = append(holeCross[0], rectRing(lon+dx*0.8, lat+dy*0.2, 200, 50))
	overlap := append(square(lon, lat, 25), square(lon+dx/2, lat+dy/2, 25)[0])
	nested := append(square(lon, lat, 25), square(lon+dx/4, lat+dy/4, 1)[0])
	island := square(lon, lat, 25) // a part inside a hole is valid
	island[0] = append(island[0], rectRing(lon+dx/4, lat+dy/4, 250, 250))
	island = append(island, orb.Polygon{rectRing(lon+dx/4+50/mx, lat+dy/4+50/my, 100, 100)})
	swapped := orb.MultiPolygon{{{{lat, lon}, {lat, lon + dx}, {lat + dy, lon + dx}, {lat + dy, lon}, {lat, lon}}}}
	utm := orb.MultiPolygon{{{{612000, 8695000}, {612500, 8695000}, {612500, 8695500}, {612000, 8695500}, {612000, 8695000}}}}
	spike := orb.MultiPolygon{{{{lon, lat}, {lon + dx, lat}, {lon + dx, lat + dy}, {lon + dx, lat + 2*dy}, {lon + dx, lat + dy}, {lon, lat + dy}, {lon, lat}}}}
	touchHole := square(lon, lat, 25) // hole touching the shell at one vertex: valid
	touchHole[0] = append(touchHole[0], orb.Ring{{lon, lat}, {lon + dx/2, lat + dy/4}, {lon + dx/4, lat + dy/2}, {lon, lat}})
	dupVertex := orb.MultiPolygon{{{{lon, lat}, {lon + dx, lat}, {lon + dx, lat}, {lon + dx, lat + dy}, {lon, lat + dy}, {lon, lat}}}}

	for _, c := range []struct {
		name string
		mp   orb.MultiPolygon
		want string // "" = valid; else a substring of the error
	}{
		{"square", sq, ""},
		{"island-in-hole", island, ""},
		{"hole-touching-shell", touchHole, ""},
		{"repeated-vertex", dupVertex, ""},
		{"empty", nil, "empty geometry"},
		{"empty-polygon", orb.MultiPolygon{{}}, "polygon 1 is empty"},
		{"short-ring", orb.MultiPolygon{{{{lon, lat}, {lon + dx, lat}, {lon, lat}}}}, "has 3 positions, need at least 4"},
		{"open-ring", orb.MultiPolygon{{{{lon, lat}, {lon + dx, lat}, {lon + dx, lat + dy}, {lon, lat + dy}}}}, "not closed"},
		{"collinear", orb.MultiPolygon{{{{lon, lat}, {lon + dx, lat}, {lon + 2*dx, lat}, {lon, lat}}}}, "self-intersects"},
		{"bowtie", bowtie, "self-intersects at lon -55.59"},
		{"spike", spike, "self-intersects"},
		{"hole-outside", holeOut, "hole 1 lies outside its shell"},
		{"hole-crossing-shell", holeCross, "crosses polygon 1 shell"},
		{"overlapping-parts", overlap, "crosses polygon 2 shell"},
		{"nested-parts", nested, "polygon 2 overlaps polygon 1"},
		{"swapped-lat-lon", swapped, "axes look swapped"},
		{"projected-metres", utm, "look projected"},
		{"lat-out-of-range", orb.MultiPolygon{{{{10, 95}, {11, 95}, {11, 96}, {10, 95}}}}, "latitude 95"},
		{"lat-lon-swapped-far-north", orb.MultiPolygon{{{{45, 120}, {45.1, 120}, {45.1, 120.1}, {45, 120}}}}, "axes look swapped"},
		{"nan", orb.MultiPolygon{{{{math.NaN(), lat}, {lon, lat}, {lon, lat + dy}, {math.NaN(), lat}}}}, "non-finite"},
		{"continent", orb.MultiPolygon{{{{-70, -30}, {-40, -30}, {-40, 0}, {-70, 0}, {-70, -30}}}}, "implausible"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := Validate(Field{ID: "MT-X-" + c.name, Geometry: c.mp})
			if c.want == "" {
				if err != nil {
					t.Fatalf("Validate(%s) = %v, want nil", c.name, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate(%s) = nil, want error with %q", c.name, c.want)
			}
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "MT-X-"+c.name) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Validate(%s) = %q, want ErrInvalid naming the talhão and %q", c.name, err, c.want)
			}
		})
	}
}

// TestValidateCrossingLocation checks that the reported crossing is where
// the two edges of a bow-tie meet.
func TestValidateCrossingLocation(t *testing.T) {
	r := orb.Ring{{-55.60, -11.80}, {-55.59, -11.79}, {-55.59, -11.80}, {-55.60, -11.79}, {-55.60, -11.80}}
	err := Validate(Field{ID: "T1", Geometry: orb.MultiPolygon{{r}}})
	if err == nil || !strings.Contains(err.Error(), "lon -55.5950000 lat -11.7950000") {
		t.Errorf("Validate(bow-tie) = %v, want the crossing at lon -55.595 lat -11.795", err)
	}
	if _, err := Build(Field{ID: "T1", Geometry: orb.MultiPolygon{{r}}}, Options{}); !errors.Is(err, ErrInvalid) {
		t.Errorf("Build(bow-tie) error = %v, want ErrInvalid", err)
	}
}
