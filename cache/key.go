package cache

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/url"
	"strings"
	"time"

	"github.com/manejo/manejo/grid"
	"github.com/manejo/manejo/series"
	"github.com/paulmach/orb"
)

// The keys below decide whether a cached observation still stands. Each is
// the SHA-256 of a JSON document (Go's encoding sorts map keys and writes
// floats in their shortest exact form, so equal inputs give equal keys).

func hashJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil { // plain data: cannot happen
		panic("cache: " + err.Error())
	}
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// GridKey identifies what a talhão's observations are taken at: its id,
// polygon, the grid options in effect (cell size as built, edge buffer
// with its default resolved: `--edge-buffer-m 15` and the zero value are
// one grid) and the cells the grid gave (ids, sampling centres, MODIS
// eligibility). An edited polygon or other grid options give another key,
// and the talhão is read whole again.
func GridKey(g grid.Grid, o grid.Options) string {
	buffer := o.EdgeBufferM
	switch {
	case buffer == 0:
		buffer = grid.DefaultEdgeBufferM
	case buffer < 0:
		buffer = 0
	}
	type cell struct {
		ID     string
		Centre orb.Point
		MODIS  bool
	}
	cells := make([]cell, len(g.Cells))
	for i, c := range g.Cells {
		cells[i] = cell{c.ID, c.Centre, c.MODIS}
	}
	return hashJSON(struct {
		ID            string
		Geometry      orb.MultiPolygon
		CellHa        float64
		EdgeBufferM   float64
		MODISEligible bool
		Cells         []cell
	}{g.Field.ID, g.Field.Geometry, g.CellSizeHa, buffer, g.MODISEligible, cells})
}

// ItemFingerprint identifies what series reads of an item: id, collection,
// date, CRS, the properties of its radiometry rules and every asset (href,
// band, scale, offset, nodata). A reprocessed item (new hrefs, baseline or
// scale) gets another fingerprint and is read again. An object rewritten
// in place under the same href is not detected: catalogs publish new
// versions under new hrefs. What only grants access is left out: an
// asset's GDAL options (a bearer token) and the signature of a signed URL
// (Planetary Computer SAS, S3 presigned), which change from run to run.
func ItemFingerprint(it *series.Item) string {
	type asset struct {
		Href                  string
		Band                  int
		Scale, Offset, Nodata *float64
	}
	assets := make(map[string]asset, len(it.Assets))
	for k, a := range it.Assets {
		assets[k] = asset{unsigned(a.Href), a.Band, a.Scale, a.Offset, a.Nodata}
	}
	return hashJSON(struct {
		ID, Collection     string
		Datetime           time.Time
		EPSG               int
		ProcessingBaseline string
		BOAOffsetApplied   *bool
		Assets             map[string]asset
	}{it.ID, it.Collection, it.Datetime.UTC(), it.EPSG, it.ProcessingBaseline, it.BOAOffsetApplied, assets})
}

// sasParams are the query parameters of an Azure SAS token.
var sasParams = map[string]bool{"sv": true, "ss": true, "srt": true, "sr": true, "sp": true, "st": true, "se": true, "sip": true, "spr": true,
	"sig": true, "skoid": true, "sktid": true, "skt": true, "ske": true, "sks": true, "skv": true, "sdd": true, "ses": true}

// unsigned removes the signature parameters (SAS, X-Amz-*) from an
// http(s) href; other hrefs and parameters are kept.
func unsigned(href string) string {
	u, err := url.Parse(href)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.RawQuery == "" {
		return href
	}
	q := u.Query()
	for k := range q {
		if sasParams[k] || strings.HasPrefix(strings.ToLower(k), "x-amz-") {
			q.Del(k)
		}
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// ProfileKey identifies a sensor profile's rules (asset keys, scale and
// offset, nodata, saturation, mask classes and bits): changing any rule,
// e.g. masking another SCL class, invalidates the scenes of the
// collections read with it.
func ProfileKey(p *series.Profile) string {
	if p == nil {
		return ""
	}
	return hashJSON(p)
}
