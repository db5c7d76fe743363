package series

// SkipReason says why a scene, a cell or a catalog item was not sampled. It
// is the key of Stats.Skipped and the Reason of a Problem; its string value
// is what reports and run manifests print.
type SkipReason string

// Reasons a scene, cell or item is skipped.
const (
	// SkipNoProfile: the item's collection has no sensor profile.
	SkipNoProfile SkipReason = "no-profile"
	// SkipMissingAsset: the item lacks an asset the profile needs.
	SkipMissingAsset SkipReason = "missing-asset"
	// SkipBadHref: an asset href is not a local regular file, s3:// or
	// https:// URL, lies outside CatalogOptions.AllowHrefPrefixes (or the
	// catalog's own place when none is given), or names a file GDAL would
	// open with a driver other than GTiff (a VRT).
	SkipBadHref SkipReason = "bad-href"
	// SkipAccess: the archive's access rule could not be applied to an
	// asset (a SAS token refused by its endpoint, Asset.AccessErr); a
	// token endpoint that keeps failing transiently counts the scene as
	// SkipTransient instead.
	SkipAccess SkipReason = "access"
	// SkipBadScaling: the asset's raster:bands scale or offset is not
	// finite, or would turn the sensor's DN range into values no
	// reflectance or index has (Radiometry.Check): the scene would give
	// infinite or absurd observations.
	SkipBadScaling SkipReason = "bad-scaling"
	// SkipUnreadable: a file could not be opened or read. Some of these
	// failures are transient (see TransientReads).
	SkipUnreadable SkipReason = "unreadable"
	// SkipTransient: a scene whose reads still failed transiently (HTTP
	// 429/5xx, dropped or timed-out connections) after every attempt of
	// the retry budget (Options.SceneAttempts). The image exists and may be
	// read later: the talhões that needed it are incomplete
	// (Stats.Incomplete), never computed without it (IN 2/2025 item 6.5:
	// all images available for the talhão).
	SkipTransient SkipReason = "transient"
	// SkipCancelled: a read stopped because the context was cancelled.
	SkipCancelled SkipReason = "cancelled"
	// SkipNoCRS: a raster has no CRS or no usable geotransform, or the cell
	// centres cannot be projected to it.
	SkipNoCRS SkipReason = "no-crs"
	// SkipMissingBand: the file has fewer bands than the asset's band.
	SkipMissingBand SkipReason = "missing-band"
	// SkipOutsideScene counts cell × scene pairs (not scenes) where the
	// cell falls outside a scene's rasters; they get no observation.
	SkipOutsideScene SkipReason = "outside-scene"
	// SkipMODISIneligibleField and SkipMODISIneligibleCell count cells left
	// out of MODIS scenes because the talhão or the cell is not eligible
	// (IN 6.4 I).
	SkipMODISIneligibleField SkipReason = "modis-ineligible-field"
	SkipMODISIneligibleCell  SkipReason = "modis-ineligible-cell"
	// SkipMalformedItem and SkipDuplicateItem are catalog problems
	// (LoadCatalog): an item that cannot be used, a second copy of an item.
	SkipMalformedItem SkipReason = "malformed-item"
	SkipDuplicateItem SkipReason = "duplicate-item"
	// SkipUnrequested: an item a STAC API search returned for a collection
	// the search did not ask for (package stacapi drops it).
	SkipUnrequested SkipReason = "unrequested-collection"
)

// MaskReason says why an observation has no value (Obs.Mask); "" means
// every index is valid. Its string value is the mask_reason column of the
// observations dataset. A reason that touches one index only is prefixed
// with it ("ndti:nodata", "ndvi:zero-denominator").
type MaskReason string

// Reasons an observation is masked.
const (
	MaskedCloud         MaskReason = "cloud"
	MaskedShadow        MaskReason = "shadow"
	MaskedCirrus        MaskReason = "cirrus"
	MaskedSnow          MaskReason = "snow"
	MaskedDark          MaskReason = "dark"
	MaskedCloudAdjacent MaskReason = "cloud-adjacent"
	// MaskedNodata: the QA or a band says no data, or a DN is outside the
	// profile's valid range.
	MaskedNodata    MaskReason = "nodata"
	MaskedSaturated MaskReason = "saturated"
	// MaskedZeroDenominator: a normalized difference with a sum ≤ 0.
	MaskedZeroDenominator MaskReason = "zero-denominator"
	// MaskedOutsideScene: the cell centre lies outside a raster of the
	// scene. Used while sampling only: such a cell gets no observation
	// (counted as SkipOutsideScene), so no row carries this reason.
	MaskedOutsideScene MaskReason = "outside-scene"
	// FlaggedNoQA is a flag, not a mask: the values are kept, but the
	// scene had no QA asset and was read unmasked because its profile
	// allows it (Profile.QAOptional, manejo run --allow-missing-qa):
	// clouds and shadows were not removed from it.
	FlaggedNoQA MaskReason = "no-qa"
)

// only marks a reason as touching one index ("ndti", "ndvi") only.
func (m MaskReason) only(index string) MaskReason { return MaskReason(index) + ":" + m }
