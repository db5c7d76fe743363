package synth

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"time"

	"github.com/manejo/manejo/internal/num"
	"github.com/paulmach/orb"
)

// STAC documents, as Earth Search v1 writes them (fields in a fixed order so
// that the catalog is byte-identical for a seed).

type stacCollection struct {
	Type     string      `json:"type"`
	Features []stacItem  `json:"features"`
	Links    []stacLink  `json:"links"`
	Context  stacContext `json:"context"`
}

type stacContext struct {
	Returned int `json:"returned"`
	Matched  int `json:"matched"`
}

type stacLink struct {
	Rel  string `json:"rel"`
	Href string `json:"href"`
	Type string `json:"type,omitempty"`
}

type stacItem struct {
	Type           string               `json:"type"`
	StacVersion    string               `json:"stac_version"`
	StacExtensions []string             `json:"stac_extensions"`
	ID             string               `json:"id"`
	Collection     string               `json:"collection"`
	BBox           [4]float64           `json:"bbox"`
	Geometry       stacGeometry         `json:"geometry"`
	Properties     stacProps            `json:"properties"`
	Assets         map[string]stacAsset `json:"assets"` // encoding/json sorts map keys
	Links          []stacLink           `json:"links"`
}

type stacGeometry struct {
	Type        string         `json:"type"`
	Coordinates [][][2]float64 `json:"coordinates"`
}

type stacProps struct {
	Datetime         string   `json:"datetime"`
	Created          string   `json:"created"`
	Updated          string   `json:"updated"`
	Platform         string   `json:"platform"`
	Constellation    string   `json:"constellation"`
	Instruments      []string `json:"instruments"`
	CloudCover       float64  `json:"eo:cloud_cover"`
	EPSG             int      `json:"proj:epsg"`
	UTMZone          int      `json:"mgrs:utm_zone"`
	LatitudeBand     string   `json:"mgrs:latitude_band"`
	GridSquare       string   `json:"mgrs:grid_square"`
	GridCode         string   `json:"grid:code"`
	Nodata           float64  `json:"s2:nodata_pixel_percentage"`
	Shadow           float64  `json:"s2:cloud_shadow_percentage"`
	Vegetation       float64  `json:"s2:vegetation_percentage"`
	NotVegetated     float64  `json:"s2:not_vegetated_percentage"`
	Water            float64  `json:"s2:water_percentage"`
	MediumClouds     float64  `json:"s2:medium_proba_clouds_percentage"`
	HighClouds       float64  `json:"s2:high_proba_clouds_percentage"`
	ThinCirrus       float64  `json:"s2:thin_cirrus_percentage"`
	ProductType      string   `json:"s2:product_type"`
	Baseline         string   `json:"s2:processing_baseline"`
	ProductURI       string   `json:"s2:product_uri"`
	BOAOffsetApplied bool     `json:"earthsearch:boa_offset_applied"`
	Synthetic        bool     `json:"manejo:synthetic"`
}

type stacAsset struct {
	Href          string        `json:"href"`
	Type          string        `json:"type"`
	Title         string        `json:"title"`
	EOBands       []stacEOBand  `json:"eo:bands,omitempty"`
	GSD           int           `json:"gsd"`
	ProjShape     [2]int        `json:"proj:shape"`
	ProjTransform [6]float64    `json:"proj:transform"`
	RasterBands   []stacRasterB `json:"raster:bands,omitempty"`
	Roles         []string      `json:"roles"`
}

type stacEOBand struct {
	Name             string  `json:"name"`
	CommonName       string  `json:"common_name"`
	CenterWavelength float64 `json:"center_wavelength"`
	FullWidthHalfMax float64 `json:"full_width_half_max"`
}

type stacRasterB struct {
	Nodata            float64  `json:"nodata"`
	DataType          string   `json:"data_type"`
	SpatialResolution int      `json:"spatial_resolution"`
	Scale             *float64 `json:"scale,omitempty"`
	Offset            *float64 `json:"offset,omitempty"`
}

var stacExtensions = []string{
	"https://stac-extensions.github.io/eo/v1.0.0/schema.json",
	"https://stac-extensions.github.io/grid/v1.0.0/schema.json",
	"https://stac-extensions.github.io/mgrs/v1.0.0/schema.json",
	"https://stac-extensions.github.io/projection/v1.0.0/schema.json",
	"https://stac-extensions.github.io/raster/v1.1.0/schema.json",
}

// stacItem builds the STAC Item of acquisition it; asset hrefs are relative
// to the catalog (slash-separated).
func (sc *scene) stacItem(it *item) stacItem {
	n, m := sc.n, sc.n/2
	ring := make([][2]float64, 0, 5)
	bb := orb.MultiPoint(sc.corners[:]).Bound()
	for _, c := range []orb.Point{sc.corners[0], sc.corners[3], sc.corners[2], sc.corners[1], sc.corners[0]} {
		ring = append(ring, [2]float64{num.Round(c[0], 7), num.Round(c[1], 7)}) // counterclockwise
	}
	dt := it.Date.Add(13*time.Hour + 58*time.Minute + 31*time.Second + 24*time.Millisecond)
	created := dt.Add(5 * time.Hour)
	scale, offset := 0.0001, -0.1
	s := stacItem{
		Type: "Feature", StacVersion: "1.0.0", StacExtensions: stacExtensions,
		ID: it.ID, Collection: Collection,
		BBox:     [4]float64{num.Round(bb.Min[0], 7), num.Round(bb.Min[1], 7), num.Round(bb.Max[0], 7), num.Round(bb.Max[1], 7)},
		Geometry: stacGeometry{Type: "Polygon", Coordinates: [][][2]float64{ring}},
		Properties: stacProps{
			Datetime: dt.Format("2006-01-02T15:04:05.000000Z"), Created: created.Format(time.RFC3339Nano), Updated: created.Format(time.RFC3339Nano),
			Platform: it.Platform, Constellation: "sentinel-2", Instruments: []string{"msi"},
			CloudCover: num.Round(it.CloudCover(), 3), EPSG: sc.epsg,
			UTMZone: sc.epsg % 100, LatitudeBand: sc.mgrs[2:3], GridSquare: sc.mgrs[3:], GridCode: "MGRS-" + sc.tileCode,
			Nodata: it.Nodata, Shadow: it.Shadow, Vegetation: it.Veg, NotVegetated: it.NotVeg, Water: it.Water,
			MediumClouds: it.Medium, HighClouds: it.High, ThinCirrus: it.Cirrus,
			ProductType: "S2MSI2A", Baseline: it.Baseline,
			ProductURI: fmt.Sprintf("S2%s_MSIL2A_%s_N%s_R067_T%s_%s.SAFE", it.ID[2:3], dt.Format("20060102T150405"),
				it.Baseline[:2]+it.Baseline[3:], sc.tileCode, created.Format("20060102T150405")),
			BOAOffsetApplied: it.Applied,
			Synthetic:        true,
		},
		Assets: map[string]stacAsset{},
		Links:  []stacLink{},
	}
	for _, a := range assets {
		size, res := n, 10
		if a.gsd == 20 {
			size, res = m, 20
		}
		rb := stacRasterB{Nodata: 0, DataType: "uint16", SpatialResolution: res}
		roles := []string{"data", "reflectance"}
		asset := stacAsset{
			Href:          path.Join(Collection, it.ID, a.file),
			Type:          "image/tiff; application=geotiff; profile=cloud-optimized",
			Title:         a.title,
			GSD:           a.gsd,
			ProjShape:     [2]int{size, size},
			ProjTransform: [6]float64{float64(res), 0, sc.x0, 0, -float64(res), sc.y0},
			Roles:         roles,
		}
		if a.key == "scl" {
			rb.DataType = "uint8"
			asset.RasterBands = []stacRasterB{rb}
			asset.Roles = []string{"data"}
		} else {
			asset.EOBands = []stacEOBand{{Name: a.key, CommonName: a.common, CenterWavelength: a.wavelength, FullWidthHalfMax: a.fwhm}}
			if it.RasterOffset {
				rb.Scale, rb.Offset = &scale, &offset
				asset.RasterBands = []stacRasterB{rb}
			}
		}
		s.Assets[a.key] = asset
	}
	return s
}

// writeCatalog writes catalog.json, a STAC ItemCollection of every item in
// date order.
func (sc *scene) writeCatalog(items []*item) error {
	c := stacCollection{Type: "FeatureCollection", Features: make([]stacItem, len(items)),
		Links: []stacLink{}, Context: stacContext{Returned: len(items), Matched: len(items)}}
	for i, it := range items {
		c.Features[i] = sc.stacItem(it)
	}
	return writeJSON(filepath.Join(sc.o.Out, CatalogFile), c)
}

// writeJSON writes v as indented JSON with a final newline.
func writeJSON(name string, v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", " ")
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("encode %s: %w", name, err)
	}
	if err := os.WriteFile(name, b.Bytes(), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	return nil
}
