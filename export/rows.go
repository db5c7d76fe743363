package export

import (
	"cmp"
	"math"

	"github.com/manejo/manejo/zarc"
)

// The row types below are the single definition of every Parquet schema that
// manejo writes. The `parquet` tag names the column and its encoding, `unit`
// and `doc` feed the schema tables of docs/outputs.md (see Columns and
// schemaMarkdown): change a column here and regenerate the docs with
// `go test ./export -update`.
//
// Dates are zarc.Date values (days since 1970-01-01) stored with the Parquet DATE
// logical type (INT32). Pointer fields are optional (nullable) columns: nil
// means "missing", never zero. Optional strings are *string too (OptString):
// parquet-go v0.32.0 writes a zero string after a non-null one as "" instead
// of null when the field is a plain string.

// CellRow is one quadrícula of a talhão (cells.parquet, GeoParquet 1.1).
type CellRow struct {
	FieldID   string  `parquet:"field_id,dict" doc:"talhão id (input property id or --id-field)"`
	CellID    string  `parquet:"cell_id" doc:"cell id, stable within the talhão (same input, same id)"`
	Row       int32   `parquet:"row" doc:"grid row, 0 at the north"`
	Col       int32   `parquet:"col" doc:"grid column, 0 at the west"`
	Geometry  []byte  `parquet:"geometry" unit:"lon/lat (OGC:CRS84)" doc:"cell square clipped to the talhão, WKB Polygon (GeoParquet primary column)"`
	BBox      BBox    `parquet:"bbox" unit:"degrees" doc:"bounding box of geometry, struct<xmin,ymin,xmax,ymax> (GeoParquet 1.1 covering)"`
	CentreLon float64 `parquet:"centre_lon" unit:"degrees" doc:"longitude of the cell centre, the sampling point (WGS84)"`
	CentreLat float64 `parquet:"centre_lat" unit:"degrees" doc:"latitude of the cell centre (WGS84)"`
	AreaHa    float64 `parquet:"cell_area_ha" unit:"ha" doc:"geodesic area of the clipped cell (WGS84 ellipsoid)"`
	Border    bool    `parquet:"border" doc:"cell cut by the boundary or centre within one cell size of it (headlands, IN 2.3 III)"`
	Fallback  bool    `parquet:"fallback" doc:"interior point given to a talhão too small or thin for a regular centre"`
	MODIS     bool    `parquet:"modis" doc:"the whole MODIS 250 m pixel holding the centre lies inside the talhão (IN 6.4 I)"`
}

// BBox is the GeoParquet 1.1 bounding-box covering of a geometry, in degrees.
type BBox struct {
	Xmin float64 `parquet:"xmin"`
	Ymin float64 `parquet:"ymin"`
	Xmax float64 `parquet:"xmax"`
	Ymax float64 `parquet:"ymax"`
}

// ObsRow is one observation of one cell on one date by one scene
// (observations.parquet). A masked observation keeps its row with null
// indices and the mask reason, so analysts can count what was dropped.
type ObsRow struct {
	FieldID    string    `parquet:"field_id,dict" doc:"talhão id"`
	CellID     string    `parquet:"cell_id,dict" doc:"cell id (cells.parquet)"`
	Date       zarc.Date `parquet:"date,date" doc:"acquisition date (UTC)"`
	Collection string    `parquet:"collection,dict" doc:"STAC collection, e.g. sentinel-2-l2a, landsat-c2-l2"`
	ItemID     string    `parquet:"item_id,dict" doc:"STAC item id of the scene"`
	NDVI       *float32  `parquet:"ndvi,optional" unit:"-1..1" doc:"(NIR − Red)/(NIR + Red) at the cell centre; null when masked"`
	NDTI       *float32  `parquet:"ndti,optional" unit:"-1..1" doc:"(SWIR1 − SWIR2)/(SWIR1 + SWIR2) at the cell centre; null when masked"`
	MaskReason *string   `parquet:"mask_reason,optional,dict" doc:"why the observation was dropped (cloud, shadow, nodata, ...); null when clear. One value is a flag, not a drop: no-qa keeps ndvi/ndti of a scene read without its QA asset (--allow-missing-qa), clouds not removed"`
	// The surface reflectances the indices were computed from, so that
	// manejo analyse can rerun the analysis from this dataset alone.
	Red    *float32 `parquet:"red,optional" unit:"0..1" doc:"surface reflectance, red band, at the cell centre; null when masked or not read"`
	NIR    *float32 `parquet:"nir,optional" unit:"0..1" doc:"surface reflectance, near infrared; null when masked or not read"`
	SWIR16 *float32 `parquet:"swir16,optional" unit:"0..1" doc:"surface reflectance, SWIR 1.6 µm (the NDTI's SWIR1); null when masked or not read (MODIS NDVI)"`
	SWIR22 *float32 `parquet:"swir22,optional" unit:"0..1" doc:"surface reflectance, SWIR 2.2 µm (the NDTI's SWIR2); null when masked or not read"`
	// The reading unmixed into green canopy, straw and bare soil with the
	// talhão's endmembers, the ones its straw cover C is read with.
	GreenPct *float32 `parquet:"green_pct,optional" unit:"%" doc:"green-canopy fraction of the clear reading, unmixed as C is read: straw and soil on one dry line (0 at or below NDVI 0.222, or 0.35 for a talhão of fewer than 30 readings; never negative; docs/coverage.md), or with the reference endmembers' own NDVIs for a talhão whose readings they explain; the three fractions sum to 100 and fall slightly outside 0–100 for a reading outside the endmember triangle; null when masked, without NDTI, or not the reading analysed for its cell and date"`
	StrawPct *float32 `parquet:"straw_pct,optional" unit:"%" doc:"straw fraction of the clear reading (as green_pct), to map straw per date; null as green_pct"`
	SoilPct  *float32 `parquet:"soil_pct,optional" unit:"%" doc:"bare-soil fraction of the clear reading (as green_pct); null as green_pct"`
}

// EventRow is one dated soil-revolving event of a talhão (events.parquet),
// the input of T and of the SINM interpretacoesManejo.
type EventRow struct {
	FieldID        string    `parquet:"field_id,dict" doc:"talhão id"`
	Date           zarc.Date `parquet:"date,date" doc:"estimated event date (first clear date after the break)"`
	Before         zarc.Date `parquet:"before,date" doc:"last clear observation before the break"`
	After          zarc.Date `parquet:"after,date" doc:"first clear observation after the break"`
	CellFraction   float64   `parquet:"cell_fraction" unit:"0..1" doc:"share of the talhão's cells that broke"`
	NCells         int32     `parquet:"n_cells" doc:"number of cells that broke"`
	MagnitudeSigma float32   `parquet:"magnitude_sigma" unit:"σ" doc:"size of the change the test judged, in standard errors of the noise it was judged by (median over agreeing interior cells for the cell tests)"`
	Operation      *string   `parquet:"operation,optional,dict" doc:"operation type when known (ARAÇÃO, GRADAGEM, SUBSOLAGEM, ESCARIFICAÇÃO); null otherwise"`
	Test           string    `parquet:"test,dict" doc:"test that found the event: soil-exposure, straw-share, median-ndti-drop, ndti-step or low-residue (docs/tillage.md)"`
	NInterior      int32     `parquet:"n_interior" doc:"interior cells (points) whose own series agree with the event"`
	NDTIDrop       *float32  `parquet:"ndti_drop,optional" unit:"NDTI" doc:"talhão median NDTI before minus after the event (dates bare of green, not wet, sensor offsets removed); null when a side has no such date"`
	NDTINoise      *float32  `parquet:"ndti_noise,optional" unit:"NDTI" doc:"standard error of ndti_drop from the date-to-date scatter of the talhão's median NDTI (the noise the ndti-step test judges by)"`
	DatesBefore    int32     `parquet:"dates_before" doc:"dates in the level before the event (ndti_drop)"`
	DatesAfter     int32     `parquet:"dates_after" doc:"dates in the level after the event (ndti_drop)"`
	Sensors        []string  `parquet:"sensors,list" doc:"sensors of the dates of both levels, sorted: their collections, with the Landsat platform of the item id (landsat-c2-l2/LE07, …/LC08)"`
}

// SeasonRow is one agricultural year of a talhão (seasons.parquet): the
// sowing of the main crop, the 30-day pre-sowing window and its straw cover.
type SeasonRow struct {
	FieldID          string     `parquet:"field_id,dict" doc:"talhão id"`
	Season           string     `parquet:"season,dict" doc:"agricultural year, e.g. 2024/25 (July–June)"`
	Crop             string     `parquet:"crop,dict" doc:"main crop: soja, milho, or a crop of the crop table (algodao, algodao-grupo-1..3, trigo, feijao; docs/coverage.md); empty when an observation table names a crop manejo does not know (docs/series.md)"`
	SowingDate       *zarc.Date `parquet:"sowing_date,date" doc:"sowing date of the main crop; null when neither declared nor detected"`
	SowingSource     *string    `parquet:"sowing_source,optional,dict" doc:"declared (CSV) or detected; null when unknown"`
	SowingConfidence *float32   `parquet:"sowing_confidence,optional" unit:"0..1" doc:"confidence of a detected sowing date; null when declared or unknown"`
	Decendio         *int32     `parquet:"decendio,optional" unit:"1..36" doc:"ZARC decendio (10-day period of the year) of the sowing date"`
	WindowStart      *zarc.Date `parquet:"window_start,date" doc:"first day of the pre-sowing window (Portaria 349, 6.7)"`
	WindowEnd        *zarc.Date `parquet:"window_end,date" doc:"last day of the pre-sowing window"`
	CoverDate        *zarc.Date `parquet:"cover_date,date" doc:"date the straw-cover reading refers to (SINM dataAvaliacao)"`
	CoverPct         *float64   `parquet:"cover_pct,optional" unit:"%" doc:"straw cover before sowing, 0–100; null when it could not be read"`
	NCells           int32      `parquet:"n_cells" doc:"cells with at least one clear observation in the window"`
	NObs             int32      `parquet:"n_obs" doc:"clear observations used in the window"`
	Reason           *string    `parquet:"reason,optional" doc:"why cover_pct or sowing_date is missing; null when present"`
	StrawPrior       *string    `parquet:"straw_prior,optional" doc:"the declared residue (--crops) the season's straw was read with: crop, end date, age and prior straw NDTI, or why it was not used; null without a declared crop history (docs/coverage.md)"`
}

// CellCoverRow is the pre-sowing straw cover of one cell in one
// agricultural year (cell_cover.parquet): the per-cell readings whose mean
// is seasons.cover_pct, for the seasons with a sowing date.
type CellCoverRow struct {
	FieldID  string   `parquet:"field_id,dict" doc:"talhão id"`
	CellID   string   `parquet:"cell_id,dict" doc:"cell id (cells.parquet)"`
	Season   string   `parquet:"season,dict" doc:"agricultural year (seasons.parquet)"`
	CoverPct *float64 `parquet:"cover_pct,optional" unit:"%" doc:"straw cover of the cell before sowing, 0–100, as averaged into seasons.cover_pct; null when the cell had no clear reading in the window"`
	NObs     int32    `parquet:"n_obs" doc:"clear observations of the cell used in the window"`
}

// CycleRow is one crop cycle detected in a talhão (cycles.parquet), the
// input of the SINM interpretacoesCultura.
type CycleRow struct {
	FieldID    string     `parquet:"field_id,dict" doc:"talhão id"`
	Season     string     `parquet:"season,dict" doc:"agricultural year the cycle belongs to"`
	Cycle      int32      `parquet:"cycle" doc:"1 = 1ª safra, 2 = 2ª safra (safrinha), 3 = 3ª safra; 0 = another cycle (see kind), kept here but not sent to SINM"`
	Kind       string     `parquet:"kind,dict" doc:"what the cycle is: Cultivo de 1ª/2ª/3ª safra, Planta de cobertura (before the main crop), Cultivo (a year whose main crop was not found)"`
	Crop       *string    `parquet:"crop,optional,dict" doc:"crop when known (soja, milho); null otherwise"`
	StartDate  zarc.Date  `parquet:"start_date,date" doc:"green-up of the cycle: the smoothed NDVI crosses its base plus 30 % of the rise"`
	SowingDate *zarc.Date `parquet:"sowing_date,date" doc:"sowing of the cycle: for the 1ª safra the season's (declared, else detected); for a 2ª/3ª safra its green-up minus the sowing-to-green-up lag of maize (29.6 days, docs/sinm.md); null for other cycles (SINM dataInicio)"`
	EndDate    zarc.Date  `parquet:"end_date,date" doc:"end of the cycle (harvest / senescence)"`
	PeakNDVI   *float32   `parquet:"peak_ndvi,optional" unit:"-1..1" doc:"median over cells of the cycle's maximum NDVI"`
}

// IndicatorRow is the result for one talhão (indicators.parquet): T, C,
// slope, their levels (Tabela 1) and the status of the computation. A
// missing indicator is null with its reason in Reasons (IN 2.2), never a
// guess.
type IndicatorRow struct {
	FieldID          string     `parquet:"field_id" doc:"talhão id"`
	Crop             string     `parquet:"crop,dict" doc:"main crop: soja, milho, or a crop of the crop table (algodao, algodao-grupo-1..3, trigo, feijao; docs/coverage.md); empty when an observation table names a crop manejo does not know (docs/series.md)"`
	AreaHa           float64    `parquet:"area_ha" unit:"ha" doc:"geodesic area of the talhão (WGS84)"`
	CellSizeHa       float64    `parquet:"cell_size_ha" unit:"ha" doc:"nominal cell area (IN 6.2: 1–5 ha below 100 ha, 5–10 ha from 100 ha)"`
	NCells           int32      `parquet:"n_cells" doc:"number of cells (sampling points)"`
	Sensors          []string   `parquet:"sensors,list" doc:"STAC collections that gave clear observations, sorted"`
	MODISEligible    bool       `parquet:"modis_eligible" doc:"over 100 ha with ≥ 1 MODIS-eligible point per 10 ha (IN 6.4 I)"`
	PeriodStart      *zarc.Date `parquet:"period_start,date" doc:"first day of the monitored period (SINM dataInicial)"`
	PeriodEnd        *zarc.Date `parquet:"period_end,date" doc:"last day of the monitored period (SINM dataFinal)"`
	TYears           *float64   `parquet:"t_years,optional" unit:"years" doc:"time without soil revolving up to period_end; null when censored or unknown"`
	TYearsMin        *float64   `parquet:"t_years_min,optional" unit:"years" doc:"lower bound of T when no event was seen (archive length); null when unknown"`
	TCensored        bool       `parquet:"t_censored" doc:"no event in the archive: T is at least t_years_min"`
	TLevel           *int32     `parquet:"t_level,optional" unit:"1..4" doc:"level of T (Tabela 1: <3, 3–5, 5–8, ≥8 full years)"`
	LastEvent        *zarc.Date `parquet:"last_event,date" doc:"date of the latest soil-revolving event; null when none"`
	CPct             *float64   `parquet:"c_pct,optional" unit:"%" doc:"C: mean straw cover of the three seasons before the contract year (Portaria 349, 6.7)"`
	CLevel           *int32     `parquet:"c_level,optional" unit:"1..4" doc:"level of C (Tabela 1: <30, 30–60, 60–90, ≥90 %)"`
	CPctLo           *float64   `parquet:"c_pct_lo,optional" unit:"%" doc:"lower end of C's 90 % interval, from the straw and soil calibration's uncertainty (docs/coverage.md)"`
	CPctHi           *float64   `parquet:"c_pct_hi,optional" unit:"%" doc:"upper end of C's 90 % interval"`
	CLevelUncertain  *bool      `parquet:"c_level_uncertain,optional" doc:"C's 90 % interval crosses a Tabela 1 limit (30, 60 or 90 %): the level could be a neighbouring one"`
	CSeasons         []string   `parquet:"c_seasons,list" doc:"the seasons averaged into C, oldest first"`
	CSeason1Pct      *float64   `parquet:"c_season_1_pct,optional" unit:"%" doc:"straw cover of c_seasons[1] (oldest); null when missing"`
	CSeason2Pct      *float64   `parquet:"c_season_2_pct,optional" unit:"%" doc:"straw cover of c_seasons[2]; null when missing"`
	CSeason3Pct      *float64   `parquet:"c_season_3_pct,optional" unit:"%" doc:"straw cover of c_seasons[3] (latest); null when missing"`
	SlopeMeanPct     *float64   `parquet:"slope_mean_pct,optional" unit:"%" doc:"mean slope over the talhão (DEM)"`
	SlopeMedianPct   *float64   `parquet:"slope_median_pct,optional" unit:"%" doc:"median slope"`
	SlopeP90Pct      *float64   `parquet:"slope_p90_pct,optional" unit:"%" doc:"90th percentile of slope"`
	ContourRequired  *bool      `parquet:"contour_required,optional" doc:"slope_mean_pct ≥ 3 %: contour planting mandatory (IN 3.2.1 I)"`
	DeclividadeMedia *int32     `parquet:"declividade_media,optional" unit:"%" doc:"slope_mean_pct rounded to an integer, as sent to SINM"`
	Status           string     `parquet:"status,dict" doc:"ok, partial (some indicator missing) or failed"`
	Reasons          []string   `parquet:"reasons,list" doc:"why an indicator is missing or the talhão failed, one entry each"`
}

// ClassificationRow is the preview of the management level of one talhão
// (classification.parquet, written by manejo classify): the level NM1–NM4
// or null when not classifiable (IN 2.2), every indicator with its level,
// the rules that fired and the deciding one.
type ClassificationRow struct {
	FieldID      string   `parquet:"field_id" doc:"talhão id"`
	Crop         string   `parquet:"crop,dict" doc:"crop assessed: soja or milho"`
	Level        *int32   `parquet:"level,optional" unit:"1..4" doc:"management level NM1–NM4; null when not classifiable"`
	Mi           *float64 `parquet:"mi,optional" unit:"points" doc:"mean of the six indicator levels (IN 3.2); null when an indicator is missing"`
	MeanLevel    *int32   `parquet:"mean_level,optional" unit:"1..4" doc:"level of Mi alone, before the rules of item 3.2.1"`
	DecidingRule string   `parquet:"deciding_rule,dict" doc:"rule that set the final level (e.g. mean, 3.2.1-I, 3.2.1-V-a)"`
	Reason       string   `parquet:"reason" doc:"why the talhão is not classifiable; empty when it is"`
	Missing      []string `parquet:"missing,list" doc:"indicators or inputs not measured (IN 2.2)"`
	Rules        []string `parquet:"rules,list" doc:"each rule that fired: id: level before → after: text"`
	VPct         *float64 `parquet:"v_pct_0_20,optional" unit:"%" doc:"base saturation V% in 0–20 cm"`
	VLevel       *int32   `parquet:"v_level,optional" unit:"1..4" doc:"level of V% (by CTC class, Tabela 1)"`
	Ca           *float64 `parquet:"ca_20_40,optional" unit:"cmolc/dm³" doc:"calcium in 20–40 cm"`
	CaLevel      *int32   `parquet:"ca_level,optional" unit:"1..4" doc:"level of Ca"`
	MPct         *float64 `parquet:"m_pct_20_40,optional" unit:"%" doc:"aluminium saturation m% in 20–40 cm"`
	MLevel       *int32   `parquet:"m_level,optional" unit:"1..4" doc:"level of m%"`
	TYears       *float64 `parquet:"t_years,optional" unit:"years" doc:"T used (a lower bound when censored)"`
	TLevel       *int32   `parquet:"t_level,optional" unit:"1..4" doc:"level of T"`
	CPct         *float64 `parquet:"c_pct,optional" unit:"%" doc:"C used"`
	CLevel       *int32   `parquet:"c_level,optional" unit:"1..4" doc:"level of C"`
	DCrops       *int32   `parquet:"d_crops,optional" doc:"crops counted for D over the last three agricultural years"`
	DLevel       *int32   `parquet:"d_level,optional" unit:"1..4" doc:"level of D (IN 2.4)"`
	DYears       []string `parquet:"d_years,list" doc:"agricultural years D looked at"`
	DDetail      string   `parquet:"d_detail" doc:"how D was counted"`
	Explanation  string   `parquet:"explanation" doc:"the whole explanation as JSON (indicators, rules, deciding rule)"`
}

// SINMResultRow is SINM's classification of one delivered talhão as read
// back by manejo sinm status (sinm_results.parquet), beside the local
// preview's level and the differences between the two.
type SINMResultRow struct {
	FieldID        string   `parquet:"field_id" doc:"talhão id"`
	Key            string   `parquet:"key" doc:"classification key, first characters only (a key is a capability)"`
	SubmissionUUID string   `parquet:"submission_uuid" doc:"uuid SINM gave the delivered payload"`
	Status         string   `parquet:"status,dict" doc:"pending (SINM has not classified yet: 404), complete, or error"`
	HTTPCode       int32    `parquet:"http_code" doc:"HTTP status of GET /api/v1/classificacoes/{key}"`
	Level          *int32   `parquet:"level,optional" unit:"1..4" doc:"SINM's management level NM1–NM4"`
	ScoreFinal     *float64 `parquet:"score_final,optional" unit:"points" doc:"racional scoreFinal"`
	ScoreMedio     *float64 `parquet:"score_medio,optional" unit:"points" doc:"racional scoreMedio (the mean of the indicator levels, Mi)"`
	Indicators     []string `parquet:"indicators,list" doc:"racional indicadores, one 'nome = valor unidade (faixa) score scoreParcial, origem' each"`
	Restrictive    []string `parquet:"restrictive_factors,list" doc:"racional fatoresRestritivos, one each"`
	PreviewLevel   *int32   `parquet:"preview_level,optional" unit:"1..4" doc:"level of the local preview (classification.parquet), when there is one"`
	Differences    []string `parquet:"differences,list" doc:"where SINM and the preview differ, one entry per indicator or level"`
	Error          string   `parquet:"error" doc:"why the classification could not be read; empty otherwise"`
}

// SINMSubmissionRow is one record of the submissions ledger
// (sinm/submissions.jsonl, written by manejo sinm submit), as a table for
// analysts (sinm_submissions.parquet): an intent before each request, its
// result after.
type SINMSubmissionRow struct {
	FieldID       string   `parquet:"field_id" doc:"talhão id"`
	Time          string   `parquet:"time" doc:"when the record was written, RFC 3339 UTC"`
	Op            string   `parquet:"op,dict" doc:"intent (written before the request) or result (after the answer)"`
	ID            string   `parquet:"id" doc:"links an intent with its result"`
	Key           string   `parquet:"key" doc:"classification key, first characters only"`
	KeySHA256     string   `parquet:"key_sha256" doc:"sha256 of the key, to recognise it"`
	PayloadSHA256 string   `parquet:"payload_sha256" doc:"sha256 of the payload bytes sent"`
	Bytes         int64    `parquet:"bytes" unit:"bytes" doc:"payload size"`
	Method        string   `parquet:"method,dict" doc:"POST or PUT"`
	ReplacesUUID  string   `parquet:"replaces_uuid" doc:"the submission a PUT or a later POST replaces; empty otherwise"`
	Recovered     bool     `parquet:"recovered" doc:"sent again after an intent without result (an interrupted run)"`
	Code          int32    `parquet:"code" doc:"HTTP status of the final answer; 0 for an intent or no answer"`
	UUID          string   `parquet:"uuid" doc:"uuid SINM gave the submission"`
	Errors        []string `parquet:"errors,list" doc:"SINM's messages (Problem Details), scrubbed of CPF/CNPJ digits"`
}

// Statuses of an IndicatorRow.
const (
	StatusOK      = "ok"
	StatusPartial = "partial"
	StatusFailed  = "failed"
	// StatusIncomplete is a talhão of run.json (never an indicator row)
	// that lacks scenes whose reads still failed transiently after the
	// retry budget: it has no rows and no payload, and a re-run retries it.
	StatusIncomplete = "incomplete"
)

// OptString returns &s, or nil when s is empty, for the nullable string
// columns.
func OptString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// OptFloat32 is a pointer to v as float32, nil when v is NaN or infinite
// (a null column).
func OptFloat32(v float64) *float32 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return new(float32(v))
}

// compareDates orders two dates by calendar day.
func compareDates(a, b zarc.Date) int { return cmp.Compare(a, b) }

func compareCells(a, b CellRow) int {
	return cmp.Or(cmp.Compare(a.FieldID, b.FieldID), cmp.Compare(a.CellID, b.CellID))
}

func compareObs(a, b ObsRow) int {
	return cmp.Or(cmp.Compare(a.FieldID, b.FieldID), cmp.Compare(a.CellID, b.CellID),
		compareDates(a.Date, b.Date), cmp.Compare(a.Collection, b.Collection), cmp.Compare(a.ItemID, b.ItemID))
}

func compareEvents(a, b EventRow) int {
	return cmp.Or(cmp.Compare(a.FieldID, b.FieldID), compareDates(a.Date, b.Date))
}

func compareSeasons(a, b SeasonRow) int {
	return cmp.Or(cmp.Compare(a.FieldID, b.FieldID), cmp.Compare(a.Season, b.Season))
}

func compareCellCover(a, b CellCoverRow) int {
	return cmp.Or(cmp.Compare(a.FieldID, b.FieldID), cmp.Compare(a.CellID, b.CellID), cmp.Compare(a.Season, b.Season))
}

func compareCycles(a, b CycleRow) int {
	return cmp.Or(cmp.Compare(a.FieldID, b.FieldID), compareDates(a.StartDate, b.StartDate), cmp.Compare(a.Cycle, b.Cycle))
}

func compareIndicators(a, b IndicatorRow) int { return cmp.Compare(a.FieldID, b.FieldID) }

func compareClassifications(a, b ClassificationRow) int { return cmp.Compare(a.FieldID, b.FieldID) }

func compareSINMResults(a, b SINMResultRow) int { return cmp.Compare(a.FieldID, b.FieldID) }

func compareSINMSubmissions(a, b SINMSubmissionRow) int {
	return cmp.Or(cmp.Compare(a.FieldID, b.FieldID), cmp.Compare(a.Time, b.Time))
}
