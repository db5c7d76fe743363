package synth

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/manejo/manejo/storage"
)

// Defaults of Options (the zero value of each field means its default).
const (
	DefaultFields      = 6           // the designed talhões, SYN-001..SYN-006
	DefaultRevisitDays = 5           // Sentinel-2 A+B revisit
	DefaultSceneSizePx = 384         // 3.84 km at 10 m
	DefaultBlockSize   = 256         // COG tile size, pixels
	DefaultLon         = -55.6       // scene centre, near Sinop (MT)
	DefaultLat         = -11.8       //
	DefaultContract    = "2026/2027" // contract season the truth is computed for
)

// Default dates: four agricultural years (2022/2023 to 2025/2026), the three
// that C averages for a 2026/2027 contract and the one before them, and the
// reference date of T.
var (
	DefaultStart = time.Date(2022, 7, 1, 0, 0, 0, 0, time.UTC)
	DefaultEnd   = time.Date(2026, 6, 30, 0, 0, 0, 0, time.UTC)
	DefaultAsOf  = time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC)
)

// ErrOptions reports invalid Options.
var ErrOptions = errors.New("synth: invalid options")

// Options shape the archive. The zero value of each field means its default.
type Options struct {
	Out  string // output directory, created if missing (required)
	Seed int64  // random seed; the same seed gives byte-identical files

	// Fields is the number of talhões: the first six are designed (see
	// docs/synth.md), more are random rectangles of 10–80 ha. Default 6.
	Fields int
	// Start and End bound the acquisition dates, both included. Default
	// 2022-07-01 to 2026-06-30.
	Start, End time.Time
	// AsOf is the reference date of the T truth. Default 2026-08-01.
	AsOf time.Time
	// Contract is the contract season ("2026/2027"): the truth of C is the
	// mean over the three agricultural years before it.
	Contract string
	// RevisitDays is the interval between acquisitions. Default 5.
	RevisitDays int
	// SceneSizePx is the side of the square scene in 10 m pixels (the 20 m
	// bands have half as many). At least 384 (the designed talhões fill a
	// 3.84 km square); default 384.
	SceneSizePx int
	// BlockSize is the COG tile side in pixels: 256 (default) or 512.
	BlockSize int
	// Lon and Lat place the scene centre (WGS84 degrees). Default −55.6,
	// −11.8 (Sinop, MT; UTM zone 21 south, EPSG:32721).
	Lon, Lat float64
	// CloudScale multiplies the monthly cloud probabilities of
	// pheno.CloudProb. Default 1; negative means a cloud-free archive.
	CloudScale float64
	// Workers bounds the scenes rendered at once. Default GOMAXPROCS.
	Workers int
	// Tiles, when at least 1, lays the archive on the Sentinel-2 tiling
	// grid: Tiles adjacent scenes of SceneSizePx, each a square of that
	// side from the north-west corner of the real Sentinel-2 tile (MGRS
	// square) holding Lon, Lat, the first the one holding Lon, Lat, then
	// row by row in ⌈√Tiles⌉ columns, all within that tile's 109.8 km
	// (scenes of 2,048 px are then whole 20 m blocks of the real tile's
	// 1,024-px COGs). Fields is the total, shared out evenly. With more
	// than one, each scene is a full archive in tile-01, tile-02, … (its
	// talhão ids and tile code suffixed by its number) and the files at
	// the top join them: one catalog, talhões, sowing and truth file, and
	// a DEM over all. 0 (default): one scene centred on Lon, Lat.
	Tiles int

	tile int // this scene's number in a mosaic of Tiles (0-based)
}

func (o Options) withDefaults() (Options, error) {
	if o.Out == "" {
		return o, fmt.Errorf("%w: Out is empty", ErrOptions)
	}
	if o.Fields == 0 {
		o.Fields = DefaultFields
	}
	if o.Start.IsZero() {
		o.Start = DefaultStart
	}
	if o.End.IsZero() {
		o.End = DefaultEnd
	}
	if o.AsOf.IsZero() {
		o.AsOf = DefaultAsOf
	}
	if o.Contract == "" {
		o.Contract = DefaultContract
	}
	if o.RevisitDays == 0 {
		o.RevisitDays = DefaultRevisitDays
	}
	if o.SceneSizePx == 0 {
		o.SceneSizePx = DefaultSceneSizePx
	}
	if o.BlockSize == 0 {
		o.BlockSize = DefaultBlockSize
	}
	if o.Lon == 0 && o.Lat == 0 {
		o.Lon, o.Lat = DefaultLon, DefaultLat
	}
	if o.CloudScale == 0 {
		o.CloudScale = 1
	}
	if o.Workers <= 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	o.Start, o.End, o.AsOf = day(o.Start), day(o.End), day(o.AsOf)
	switch {
	case o.Fields < 0:
		return o, fmt.Errorf("%w: Fields %d < 0", ErrOptions, o.Fields)
	case o.End.Before(o.Start):
		return o, fmt.Errorf("%w: End %s before Start %s", ErrOptions, o.End.Format(dateLayout), o.Start.Format(dateLayout))
	case o.RevisitDays < 1:
		return o, fmt.Errorf("%w: RevisitDays %d < 1", ErrOptions, o.RevisitDays)
	case o.SceneSizePx < 384 || o.SceneSizePx%2 != 0:
		return o, fmt.Errorf("%w: SceneSizePx %d: want an even number ≥ 384", ErrOptions, o.SceneSizePx)
	case o.BlockSize != 256 && o.BlockSize != 512:
		return o, fmt.Errorf("%w: BlockSize %d: want 256 or 512", ErrOptions, o.BlockSize)
	case o.Tiles < 0:
		return o, fmt.Errorf("%w: Tiles %d < 0", ErrOptions, o.Tiles)
	case o.Lat < -80 || o.Lat > 84 || o.Lon < -180 || o.Lon >= 180:
		return o, fmt.Errorf("%w: centre %.4f,%.4f outside the UTM domain", ErrOptions, o.Lon, o.Lat)
	}
	if _, err := seasonStartYear(o.Contract); err != nil {
		return o, fmt.Errorf("%w: Contract: %v", ErrOptions, err)
	}
	return o, nil
}

// Generate writes the synthetic archive into o.Out and returns its ground
// truth (also written to truth.json). It fails on invalid options, on a
// scene too small for o.Fields talhões, or on any write error; files already
// written are left in place.
func Generate(ctx context.Context, o Options) (Truth, error) {
	o, err := o.withDefaults()
	if err != nil {
		return Truth{}, err
	}
	storage.InitGDAL()
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return Truth{}, fmt.Errorf("create %s: %w", o.Out, err)
	}
	if o.Tiles > 1 {
		return generateMosaic(ctx, o)
	}
	return generateScene(ctx, o)
}

// generateScene writes the archive of one scene into o.Out, which exists.
func generateScene(ctx context.Context, o Options) (Truth, error) {
	sc, err := newScene(o)
	if err != nil {
		return Truth{}, err
	}
	items, err := sc.render(ctx)
	if err != nil {
		return Truth{}, err
	}
	if err := sc.writeCatalog(items); err != nil {
		return Truth{}, err
	}
	if err := sc.writeDEM(); err != nil {
		return Truth{}, err
	}
	if err := sc.writeFields(); err != nil {
		return Truth{}, err
	}
	tr := sc.truth(items)
	if err := sc.writeSowing(tr); err != nil {
		return Truth{}, err
	}
	if err := writeJSON(filepath.Join(o.Out, TruthFile), tr); err != nil {
		return Truth{}, err
	}
	return tr, nil
}

// Names of the files Generate writes at the top of Out.
const (
	CatalogFile = "catalog.json"
	DEMFile     = "dem.tif"
	FieldsFile  = "talhoes.geojson"
	SowingFile  = "sowing.csv"
	TruthFile   = "truth.json"
)
