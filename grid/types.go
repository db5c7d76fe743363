package grid

import (
	"github.com/manejo/manejo/zarc"
	"github.com/paulmach/orb"
)

// Field is one talhão: its perimeter in lon/lat (WGS84, RFC 7946 axis order)
// and the attributes read from its properties.
type Field struct {
	ID       string           // from the id field (`--id-field`, default "id")
	Crop     zarc.Crop        // main crop; zarc.Soja when absent
	Geometry orb.MultiPolygon // lon/lat; a Polygon source becomes one member
	Source   string           // file or URL it came from, for messages

	// Optional attributes passed through to the SINM payload. Empty / nil
	// when absent. CPF/CNPJ are personal data: never log them.
	CPFProdutor     string
	CNPJPropriedade string
	PlantioContorno *int // declared contour planting, 0 or 1
	Terraceamento   *int // declared terracing, 0 or 1

	// ChaveClassificacaoNM is the talhão's SINM classification key, from
	// its registration (POST /api/v1/glebas); "" when absent. A key is a
	// capability (whoever holds it reads the result): never log it.
	ChaveClassificacaoNM string
}

// Cell is one quadrícula of a talhão (IN 6.2 I–II). Its centre is the
// sampling point for every satellite series.
type Cell struct {
	FieldID string
	ID      string // stable within the talhão: same input → same id
	Row     int    // grid row, 0 at the north
	Col     int    // grid column, 0 at the west

	Centre  orb.Point   // sampling point, lon/lat
	Polygon orb.Polygon // the square clipped to the talhão, lon/lat
	AreaHa  float64     // geodesic area of the clipped cell, hectares

	// Border is true when the cell is cut by the talhão boundary or its
	// centre lies within one cell size of it: headlands and edges, where
	// IN 2.3 III allows localized soil revolving.
	Border bool
	// Fallback is true for the interior point given to a talhão too small or
	// thin to hold a regular centre away from its border.
	Fallback bool
	// MODIS is true when the whole MODIS 250 m pixel (sinusoidal grid) that
	// holds the centre lies inside the talhão (IN 6.4 I).
	MODIS bool
}

// Grid is a talhão divided into cells.
type Grid struct {
	Field      Field
	AreaHa     float64 // geodesic area of the talhão, hectares (WGS84)
	CellSizeHa float64 // nominal cell area, hectares (inside the legal class)
	CellSizeM  float64 // nominal cell side, metres (sqrt of CellSizeHa·10⁴)
	EPSG       int     // UTM zone (WGS84) the cells are laid out in
	Cells      []Cell

	// MODISEligible reports IN 6.4 I: the talhão is over 100 ha and has at
	// least one MODIS-eligible point per 10 ha. MODISPoints counts them.
	MODISEligible bool
	MODISPoints   int
	// MODISReason says why the talhão is not MODIS-eligible ("" when it is).
	MODISReason string

	// Flags are notes on the gridding, such as "fallback-centre".
	Flags []string
}
