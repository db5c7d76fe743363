// Package stacapi reads scenes from STAC APIs (Earth Search, Microsoft
// Planetary Computer, NASA CMR-STAC): it recognises an API root by its
// landing page, searches it by footprint, dates and collections (POST
// /search, or GET where the API offers only that), follows its pages the way
// each API writes them, drops duplicate items and repeated acquisitions,
// retries throttled or failing requests, and turns the answer into
// series.Items (series.ParseItem, series.NewCatalog: series stays the home
// of the item model). Access applies the read rules of each archive to the
// items' assets: Planetary Computer SAS signing, the Earthdata bearer token
// for NASA hosts only, requester pays for s3://usgs-landsat/. Freeze writes
// the items a search returned as an ItemCollection that a later run reads
// back as a static catalog (docs/stac-api.md).
package stacapi
