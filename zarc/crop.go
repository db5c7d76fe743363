package zarc

// Crop names the main crop assessed for a talhão, as in the talhão property
// `crop`, the declared sowing CSV and the classify inputs.
type Crop string

// Main crops covered: soybean (IN SPA/MAPA 2/2025) and maize (Portaria
// SPA/MAPA 349/2026, item 2.1).
const (
	Soja  Crop = "soja"
	Milho Crop = "milho"
)
