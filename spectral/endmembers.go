package spectral

// The reference endmember set: the one set of pure surfaces that tillage and
// coverage unmix every reading into. Typical Sentinel-2/Landsat surface
// reflectances (0..1) in the four bands NDVI and NDTI are made of, after
// Daughtry et al. 2005, van Deventer et al. 1997 and Zheng et al. 2012; the
// simulator (sim/pheno) draws its surfaces around the same spectra.
const (
	// Closed soybean/maize canopy: dark in red and SWIR, bright in NIR.
	greenRed, greenNIR, greenSWIR1, greenSWIR2 = 0.035, 0.45, 0.22, 0.10
	// Dry crop straw (soybean, maize, millet residue): cellulose and lignin
	// absorb near 2.1 µm, so SWIR2 is well below SWIR1 (high NDTI).
	strawRed, strawNIR, strawSWIR1, strawSWIR2 = 0.16, 0.24, 0.36, 0.22
	// Dry red oxisol (Latossolo Vermelho): SWIR1 and SWIR2 nearly equal
	// (NDTI near 0).
	soilRed, soilNIR, soilSWIR1, soilSWIR2 = 0.14, 0.19, 0.30, 0.27
)

// GreenSpectrum, StrawSpectrum and SoilSpectrum are the reference surfaces
// as reflectance spectra (0..1 per band), for FitSoil and Coefficients.
var (
	GreenSpectrum = Spectrum{Red: greenRed, NIR: greenNIR, SWIR1: greenSWIR1, SWIR2: greenSWIR2}
	StrawSpectrum = Spectrum{Red: strawRed, NIR: strawNIR, SWIR1: strawSWIR1, SWIR2: strawSWIR2}
	SoilSpectrum  = Spectrum{Red: soilRed, NIR: soilNIR, SWIR1: soilSWIR1, SWIR2: soilSWIR2}
)

// Green, Straw and Soil are the reference surfaces as Endmembers, for
// Unmixer: NDVI and NDTI (unitless) and brightness (sums of two
// reflectances, 0..2), computed exactly from the spectra above (Go constant
// arithmetic; Spectrum.Endmember gives the same values to within rounding).
// Green: NDVI 0.856, NDTI 0.375, VNIR 0.485, SWIR 0.32. Straw: NDVI 0.200,
// NDTI 0.241, VNIR 0.40, SWIR 0.58. Soil: NDVI 0.152, NDTI 0.053, VNIR
// 0.33, SWIR 0.57. Inside the usual ranges: canopy NDVI 0.75–0.90, NDTI
// 0.30–0.40; straw 0.15–0.30, 0.15–0.30; oxisol 0.15–0.25, 0.00–0.07.
var (
	Green = Endmember{
		NDVI: (greenNIR - greenRed) / (greenNIR + greenRed), NDTI: (greenSWIR1 - greenSWIR2) / (greenSWIR1 + greenSWIR2),
		VNIR: greenRed + greenNIR, SWIR: greenSWIR1 + greenSWIR2,
	}
	Straw = Endmember{
		NDVI: (strawNIR - strawRed) / (strawNIR + strawRed), NDTI: (strawSWIR1 - strawSWIR2) / (strawSWIR1 + strawSWIR2),
		VNIR: strawRed + strawNIR, SWIR: strawSWIR1 + strawSWIR2,
	}
	Soil = Endmember{
		NDVI: (soilNIR - soilRed) / (soilNIR + soilRed), NDTI: (soilSWIR1 - soilSWIR2) / (soilSWIR1 + soilSWIR2),
		VNIR: soilRed + soilNIR, SWIR: soilSWIR1 + soilSWIR2,
	}
)
