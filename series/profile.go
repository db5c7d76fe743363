package series

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// MaskKind says how a profile's QA asset is read.
type MaskKind int

// Kinds of QA assets.
const (
	// MaskNone: the profile has no QA asset.
	MaskNone MaskKind = iota
	// MaskClasses: the QA value is a class (Sentinel-2 SCL, MOD13Q1
	// pixel_reliability); Classes maps dropped classes to reasons.
	MaskClasses
	// MaskBits: the QA value is a bit field (Landsat QA_PIXEL, HLS Fmask,
	// MOD09 state); Bits lists the rules, tested in order.
	MaskBits
)

// BitRule drops a pixel when (QA >> Shift) & Mask is one of Values.
type BitRule struct {
	Shift  uint
	Mask   uint32
	Values []uint32
	Reason MaskReason
}

// Profile tells how to read one sensor's items: which asset keys hold the
// bands, the default DN → reflectance scale and offset, the QA asset and
// its rules. Profiles are plain data: copy one and change it to configure
// masks (Options.Profiles).
type Profile struct {
	Name string
	// Asset keys tried in order for each role (the first present is used).
	Red, NIR, SWIR1, SWIR2 []string
	// NDVI keys an asset holding NDVI itself (MOD13Q1); when set, Red and
	// NIR are not used and NDTI is not computed.
	NDVI []string
	QA   []string

	// Scale and Offset turn DN into reflectance (or NDVI for NDVI assets)
	// when the asset's raster:bands does not give them.
	Scale, Offset float64
	// S2Baseline applies the Sentinel-2 rule: processing baseline ≥ 04.00
	// adds Offset −1000 DN unless the item says the offset is applied.
	S2Baseline bool
	// Nodata is the default DN of missing data (raster:bands nodata and the
	// file's nodata are honoured too). NaN never counts as data.
	Nodata []float64
	// Saturated DN values (≥ SaturatedMin, when non-zero, is saturated).
	SaturatedMin float64
	// ValidMin/ValidMax bound valid DN when ValidMax > ValidMin (MOD13Q1
	// NDVI −2000..10000): DN outside is "nodata".
	ValidMin, ValidMax float64

	MaskKind MaskKind
	Classes  map[int]MaskReason // MaskClasses: class → reason
	Bits     []BitRule          // MaskBits
	// QANodata lists QA values meaning "no data" (checked first).
	QANodata []int
	// QAOptional lets items without the QA asset be sampled unmasked (the
	// reflectance nodata and validity checks still apply). Off by default:
	// a missing QA asset skips the scene.
	QAOptional bool
	// MODIS restricts sampling to MODIS-eligible talhões and cells (IN 6.4 I).
	MODIS bool
}

// Profiles returns the built-in profiles keyed by STAC collection id.
// Each call returns fresh copies that the caller may change.
func Profiles() map[string]*Profile {
	return map[string]*Profile{
		"sentinel-2-l2a":       sentinel2Profile("sentinel-2-l2a"),
		"sentinel-s2-l2a-cogs": sentinel2Profile("sentinel-s2-l2a-cogs"),
		"sentinel-2-c1-l2a":    sentinel2Profile("sentinel-2-c1-l2a"),
		"landsat-c2-l2":        landsatProfile("landsat-c2-l2"),
		"landsat-c2l2-sr":      landsatProfile("landsat-c2l2-sr"),
		"HLSS30":               hlsProfile("HLSS30", "B04", "B8A", "B11", "B12"),
		"HLSL30":               hlsProfile("HLSL30", "B04", "B05", "B06", "B07"),
		// NASA CMR-STAC (LPCLOUD; HLSS30.v2.0 in its older cloudstac
		// naming) and Planetary Computer ids of HLS v2.
		"HLSS30_2.0":     hlsProfile("HLSS30_2.0", "B04", "B8A", "B11", "B12"),
		"HLSL30_2.0":     hlsProfile("HLSL30_2.0", "B04", "B05", "B06", "B07"),
		"hls2-s30":       hlsProfile("hls2-s30", "B04", "B8A", "B11", "B12"),
		"hls2-l30":       hlsProfile("hls2-l30", "B04", "B05", "B06", "B07"),
		"modis-13Q1-061": mod13Q1Profile(),
		"modis-09A1-061": mod09A1Profile(),
	}
}

// AllowMissingQA returns the profiles of overrides (collection → profile,
// may be nil) with, for each collection listed, a copy of its profile (the
// override's, else the built-in one) that reads scenes lacking their QA
// asset (QAOptional). overrides and the built-in profiles are left as they
// were. A collection no profile reads is an error naming it.
func AllowMissingQA(overrides map[string]*Profile, collections []string) (map[string]*Profile, error) {
	if len(collections) == 0 {
		return overrides, nil
	}
	out := make(map[string]*Profile, len(overrides)+len(collections))
	for k, p := range overrides {
		out[k] = p
	}
	builtin := Profiles()
	for _, coll := range collections {
		p := out[coll]
		if p == nil {
			p = builtin[coll]
		}
		if p == nil {
			return nil, fmt.Errorf("%s: no sensor profile reads that collection", coll)
		}
		cp := *p
		cp.QAOptional = true
		out[coll] = &cp
	}
	return out, nil
}

// sentinel2Profile reads Sentinel-2 L2A (Earth Search and band-number keys).
func sentinel2Profile(name string) *Profile {
	return &Profile{
		Name: name,
		Red:  []string{"red", "B04"}, NIR: []string{"nir", "B08"},
		SWIR1: []string{"swir16", "B11"}, SWIR2: []string{"swir22", "B12"},
		QA:    []string{"scl", "SCL"},
		Scale: 0.0001, S2Baseline: true,
		Nodata: []float64{0}, SaturatedMin: 65535,
		MaskKind: MaskClasses,
		// SCL classes dropped per DESIGN.md: 0 no data, 1 saturated or
		// defective, 2 dark area, 3 cloud shadow, 8/9 cloud medium/high
		// probability, 10 thin cirrus, 11 snow or ice.
		Classes: map[int]MaskReason{0: MaskedNodata, 1: MaskedSaturated, 2: MaskedDark, 3: MaskedShadow, 8: MaskedCloud, 9: MaskedCloud, 10: MaskedCirrus, 11: MaskedSnow},
	}
}

// landsatProfile reads Landsat Collection 2 Level-2 surface reflectance.
func landsatProfile(name string) *Profile {
	return &Profile{
		Name: name,
		Red:  []string{"red", "SR_B4"}, NIR: []string{"nir08", "SR_B5"},
		SWIR1: []string{"swir16", "SR_B6"}, SWIR2: []string{"swir22", "SR_B7"},
		QA:    []string{"qa_pixel", "QA_PIXEL"},
		Scale: 0.0000275, Offset: -0.2,
		Nodata: []float64{0}, SaturatedMin: 65535,
		MaskKind: MaskBits,
		// QA_PIXEL bits 0–5: fill, dilated cloud, cirrus, cloud, cloud
		// shadow, snow.
		Bits: []BitRule{
			{Shift: 0, Mask: 1, Values: []uint32{1}, Reason: MaskedNodata},
			{Shift: 3, Mask: 1, Values: []uint32{1}, Reason: MaskedCloud},
			{Shift: 1, Mask: 1, Values: []uint32{1}, Reason: MaskedCloud},
			{Shift: 2, Mask: 1, Values: []uint32{1}, Reason: MaskedCirrus},
			{Shift: 4, Mask: 1, Values: []uint32{1}, Reason: MaskedShadow},
			{Shift: 5, Mask: 1, Values: []uint32{1}, Reason: MaskedSnow},
		},
	}
}

// hlsProfile reads Harmonized Landsat Sentinel-2 v2 (HLSS30, HLSL30).
func hlsProfile(name string, red, nir, sw1, sw2 string) *Profile {
	return &Profile{
		Name: name,
		Red:  []string{red}, NIR: []string{nir}, SWIR1: []string{sw1}, SWIR2: []string{sw2},
		QA:     []string{"Fmask"},
		Scale:  0.0001,
		Nodata: []float64{-9999}, SaturatedMin: 0,
		MaskKind: MaskBits,
		QANodata: []int{255},
		// Fmask bits 1–4: cloud, adjacent to cloud/shadow, cloud shadow,
		// snow/ice.
		Bits: []BitRule{
			{Shift: 1, Mask: 1, Values: []uint32{1}, Reason: MaskedCloud},
			{Shift: 3, Mask: 1, Values: []uint32{1}, Reason: MaskedShadow},
			{Shift: 2, Mask: 1, Values: []uint32{1}, Reason: MaskedCloudAdjacent},
			{Shift: 4, Mask: 1, Values: []uint32{1}, Reason: MaskedSnow},
		},
	}
}

// mod13Q1Profile reads the MOD13Q1 C6.1 NDVI asset (NDVI only).
func mod13Q1Profile() *Profile {
	return &Profile{
		Name:  "modis-13Q1-061",
		NDVI:  []string{"250m_16_days_NDVI"},
		QA:    []string{"250m_16_days_pixel_reliability"},
		Scale: 0.0001,
		// MOD13Q1 NDVI fill −3000, valid range −2000..10000.
		Nodata: []float64{-3000}, ValidMin: -2000, ValidMax: 10000,
		MaskKind: MaskClasses,
		// pixel_reliability 3 cloudy; 255 (−1 as int8) fill.
		Classes: map[int]MaskReason{3: MaskedCloud, 255: MaskedNodata, -1: MaskedNodata},
		MODIS:   true,
	}
}

// mod09A1Profile reads MOD09A1 C6.1 surface reflectance.
func mod09A1Profile() *Profile {
	return &Profile{
		Name: "modis-09A1-061",
		Red:  []string{"sur_refl_b01"}, NIR: []string{"sur_refl_b02"},
		SWIR1: []string{"sur_refl_b06"}, SWIR2: []string{"sur_refl_b07"},
		QA:    []string{"sur_refl_state_500m"},
		Scale: 0.0001,
		// MOD09 fill −28672; valid −100..16000.
		Nodata: []float64{-28672}, ValidMin: -100, ValidMax: 16000,
		MaskKind: MaskBits,
		// state QA bits 0–1 cloud state (01 cloudy, 10 mixed; 00 clear
		// and 11 "not set, assumed clear" pass), bit 2 cloud shadow.
		Bits: []BitRule{
			{Shift: 0, Mask: 3, Values: []uint32{1, 2}, Reason: MaskedCloud},
			{Shift: 2, Mask: 1, Values: []uint32{1}, Reason: MaskedShadow},
		},
		MODIS: true,
	}
}

// maskReason returns "" when the QA value v leaves the pixel clear, else the
// reason it is dropped.
func (p *Profile) maskReason(v float64) MaskReason {
	if v != v { // NaN
		return MaskedNodata
	}
	iv := int(v)
	for _, n := range p.QANodata {
		if iv == n {
			return MaskedNodata
		}
	}
	switch p.MaskKind {
	case MaskClasses:
		if r, ok := p.Classes[iv]; ok {
			return r
		}
	case MaskBits:
		u := uint32(iv)
		for _, b := range p.Bits {
			x := (u >> b.Shift) & b.Mask
			for _, want := range b.Values {
				if x == want {
					return b.Reason
				}
			}
		}
	}
	return ""
}

// baselineAtLeast4 reports whether a processing baseline string such as
// "05.10" or "N0510" is 04.00 or later. Unparseable or empty → false.
func baselineAtLeast4(s string) bool {
	s = strings.TrimPrefix(strings.TrimSpace(s), "N")
	if s == "" {
		return false
	}
	if !strings.Contains(s, ".") && len(s) == 4 { // "0510"
		s = s[:2] + "." + s[2:]
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return false
	}
	return f >= 4.0-1e-9
}

// Radiometry is the DN → physical value transform of one asset of one item.
type Radiometry struct {
	Scale, Offset float64
	Source        string // "raster:bands", "profile", "profile+s2-baseline"
}

// MaxPhysical bounds the physical values a DN may turn into: no surface
// reflectance or vegetation index comes near it, and values this size
// would overflow the indices' arithmetic (sums of two ±1e308 values are
// infinite).
const MaxPhysical = 1e6

// maxDN is the largest DN magnitude Check assumes when the profile does not
// bound valid DN: the range of the 16-bit integers every built-in profile's
// rasters hold.
const maxDN = 65535

// Check refuses a transform that is not finite or that would turn a DN of
// the profile's valid range (0..65535 when the profile gives none) into a
// value beyond ±MaxPhysical (a raster:bands scale of 1e308, an offset of
// −1e308): the scene would give infinite or absurd observations.
func (r Radiometry) Check(p *Profile) error {
	dn := float64(maxDN)
	if p.ValidMax > p.ValidMin {
		dn = math.Max(math.Abs(p.ValidMin), math.Abs(p.ValidMax))
	}
	if math.IsNaN(r.Scale) || math.IsInf(r.Scale, 0) || math.IsNaN(r.Offset) || math.IsInf(r.Offset, 0) ||
		math.Abs(r.Scale)*dn+math.Abs(r.Offset) > MaxPhysical {
		return fmt.Errorf("scale %g and offset %g (%s) turn DN up to %g into values beyond ±%g: not a reflectance or index scaling", r.Scale, r.Offset, r.Source, dn, float64(MaxPhysical))
	}
	return nil
}

// AssetRadiometry returns the scale and offset for an asset of an item
// under profile p: raster:bands when it gives them; else the profile's
// defaults, plus −1000 DN for Sentinel-2 baseline ≥ 04.00 items that do not
// say earthsearch:boa_offset_applied: true. A raster:bands offset is taken
// as complete (never shifted again); a raster:bands scale alone keeps the
// profile's offset rule.
//
// The Earth Search rule: an item saying earthsearch:boa_offset_applied:
// true holds harmonized data (DN = reflectance × 10⁴: Element 84 removed
// the 04.00 offset from the pixels), so the raster:bands offset −0.1 such
// items also carry (the known metadata error of Earth Search's
// sentinel-2-l2a; sentinel-2-c1-l2a leaves pixels as ESA made them and
// declares its offset truthfully) is not applied: the scale is kept, the
// offset is the profile's.
func AssetRadiometry(p *Profile, it *Item, a Asset) Radiometry {
	r := Radiometry{Scale: p.Scale, Offset: p.Offset, Source: "profile"}
	applied := it.BOAOffsetApplied != nil && *it.BOAOffsetApplied
	if a.Scale != nil {
		r.Scale = *a.Scale
		r.Source = "raster:bands"
	}
	if a.Offset != nil {
		if p.S2Baseline && applied {
			r.Source = "raster:bands scale, offset already applied"
			return r
		}
		r.Offset = *a.Offset
		r.Source = "raster:bands"
		return r
	}
	if p.S2Baseline && baselineAtLeast4(it.ProcessingBaseline) && !applied {
		r.Offset = p.Offset - 1000*r.Scale
		r.Source += "+s2-baseline"
	}
	return r
}
