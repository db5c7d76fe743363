package sinm

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/manejo/manejo/export"
	"github.com/manejo/manejo/grid"
	"github.com/manejo/manejo/internal/num"
	"github.com/manejo/manejo/zarc"
)

// Payload is the SINM remote-sensing document of one talhão
// (MonitoramentoSateliteInput, shared/sinm/monitoramento-satelite.schema.json),
// POSTed to /api/v1/sensoriamentos-remotos/{chaveClassificacaoNM}. Field
// names and JSON types follow the schema exactly; optional scalars are
// omitted when absent. plantioContorno and terraceamento are always written,
// as the current integrator client sends them, and so are the four arrays
// (possibly empty): an empty interpretacoesManejo says "no soil revolving
// seen", which is data.
type Payload struct {
	DataInicial                    string `json:"dataInicial"`      // first day of the monitored period, YYYY-MM-DD
	DataFinal                      string `json:"dataFinal"`        // last day of the monitored period
	DeclividadeMedia               int    `json:"declividadeMedia"` // mean slope, integer percent 0–100
	CodigoSateliteDeclividadeMedia string `json:"codigoSateliteDeclividadeMedia"`
	PlantioContorno                int    `json:"plantioContorno"` // declared 0/1 (see BuildPayload)
	CodigoSatelitePlantioContorno  string `json:"codigoSatelitePlantioContorno,omitempty"`
	Terraceamento                  int    `json:"terraceamento"` // declared 0/1 (see BuildPayload)
	CodigoSateliteTerraceamento    string `json:"codigoSateliteTerraceamento,omitempty"`

	Indices                     []Indice        `json:"indices"`
	InterpretacoesCoberturaSolo []CoberturaSolo `json:"interpretacoesCoberturaSolo"`
	InterpretacoesCultura       []Cultura       `json:"interpretacoesCultura"`
	InterpretacoesManejo        []Manejo        `json:"interpretacoesManejo"`

	CPFProdutor              string `json:"cpfProdutor,omitempty"`              // 11 digits; personal data, never logged
	CNPJPropriedade          string `json:"cnpjPropriedade,omitempty"`          // 14 digits
	CNPJEmpresaSensoriamento string `json:"cnpjEmpresaSensoriamento,omitempty"` // 14 digits, the operator
}

// Indice is one clear observation at one sampling point: NDVI and NDTI
// rounded to 4 decimals, position in degrees rounded to 6 decimals (~0.1 m).
type Indice struct {
	CodigoSatelite string  `json:"codigoSatelite"`
	Longitude      float64 `json:"longitude"`
	Latitude       float64 `json:"latitude"`
	Data           string  `json:"data"`
	NDVI           float64 `json:"ndvi"`
	NDTI           float64 `json:"ndti"`
}

// CoberturaSolo is one dated straw-cover reading, integer percent.
type CoberturaSolo struct {
	DataAvaliacao     string `json:"dataAvaliacao"`
	PorcentualPalhada int    `json:"porcentualPalhada"`
}

// Cultura is one detected crop cycle.
type Cultura struct {
	TipoCultivo string `json:"tipoCultivo"`
	DataInicio  string `json:"dataInicio"`
	DataFim     string `json:"dataFim"`
}

// Manejo is one dated soil-revolving event.
type Manejo struct {
	Data         string `json:"data"`
	Operacao     string `json:"operacao"`
	TipoOperacao string `json:"tipoOperacao,omitempty"`
}

// OperacaoRevolvimento is the only operacao SINM counts.
const OperacaoRevolvimento = "Revolvimento do solo"

// TiposOperacao are the tipoOperacao values SINM accepts.
var TiposOperacao = []string{"ARAÇÃO", "GRADAGEM", "SUBSOLAGEM", "ESCARIFICAÇÃO"}

// PayloadInput is everything BuildPayload needs about one talhão, in the
// row types of the Parquet datasets (rows of other talhões are ignored).
type PayloadInput struct {
	Field        grid.Field // id, CPF/CNPJ and declared contour/terrace flags
	Indicator    export.IndicatorRow
	Cells        []export.CellRow // centres: the sampling points
	Observations []export.ObsRow  // only clear rows with both indices are sent
	Events       []export.EventRow
	Seasons      []export.SeasonRow
	Cycles       []export.CycleRow
	// CNPJEmpresaSensoriamento is the CNPJ of the company producing the
	// data (configuration, not a talhão property), with or without
	// punctuation; "" leaves it out, an invalid CNPJ fails BuildPayload.
	CNPJEmpresaSensoriamento string
	// UndeclaredPracticesAsZero sends 0 ("not practised") for a
	// plantioContorno or terraceamento the talhão does not declare, instead
	// of failing with ErrUndeclared. Only an explicit operator choice sets
	// it (manejo run --undeclared-practices-as-zero).
	UndeclaredPracticesAsZero bool
}

// Errors of BuildPayload.
var (
	ErrNoPeriod  = errors.New("sinm: monitored period missing")
	ErrNoSlope   = errors.New("sinm: mean slope missing")
	ErrNoIndices = errors.New("sinm: no clear observation with NDVI and NDTI")
	ErrBadValue  = errors.New("sinm: value outside the SINM range")
	// ErrOutsidePeriod reports a dated fact outside dataInicial..dataFinal.
	ErrOutsidePeriod = errors.New("sinm: date outside the monitored period")
	// ErrUndeclared reports a talhão that declares no plantioContorno or
	// terraceamento: SINM needs both and manejo does not detect them, so
	// the payload is held back (PayloadInput.UndeclaredPracticesAsZero
	// sends 0 instead).
	ErrUndeclared = errors.New("sinm: conservation practice not declared")
)

// BuildPayload builds the SINM payload of one talhão:
//   - dataInicial/dataFinal from Indicator.PeriodStart/PeriodEnd;
//   - declividadeMedia from Indicator.DeclividadeMedia (else the rounded
//     SlopeMeanPct), coded with codes["dem"];
//   - plantioContorno/terraceamento as declared on the talhão (manejo does
//     not detect them; contour_required stays in indicators.parquet): an
//     undeclared one fails with ErrUndeclared, or is sent as 0 when
//     UndeclaredPracticesAsZero is set;
//   - indices: every clear observation (no mask reason, NDVI and NDTI
//     present) at its cell centre, coded by its collection, sorted by cell,
//     date and collection;
//   - interpretacoesManejo from Events, interpretacoesCoberturaSolo from the
//     Seasons with a cover (dated CoverDate, else SowingDate),
//     interpretacoesCultura from Cycles ("Cultivo de Nª safra"), with the
//     dates a farmer knows: dataInicio the season's sowing (declared or
//     detected, Seasons.SowingDate) for the 1ª safra, the cycle's own
//     sowing (Cycles.SowingDate) for the 2ª and 3ª, the green-up
//     (start_date) for a cycle without a sowing;
//     dataFim the end of the cycle (end_date: NDVI back down near its
//     base, the harvest or desiccation);
//   - the talhão's CPF/CNPJ only when they are valid (CheckIdentifiers says
//     which are not); cnpjEmpresaSensoriamento when configured.
//
// A collection without a code, a missing period or slope, no clear index,
// an index or percentage outside its range, a dated fact (observation,
// event, cover reading, cycle start) outside the monitored period, or a
// configured CNPJEmpresaSensoriamento that is not a valid CNPJ is an error
// naming the talhão and the item; nothing is guessed, clamped or silently
// dropped.
func BuildPayload(in PayloadInput, codes SatelliteCodes) (Payload, error) {
	id := cmp.Or(in.Indicator.FieldID, in.Field.ID)
	p, err := build(id, in, codes)
	if err != nil {
		return Payload{}, fmt.Errorf("build payload of talhão %s: %w", id, err)
	}
	return p, nil
}

// build runs the steps of BuildPayload in the order of the payload's fields.
func build(id string, in PayloadInput, codes SatelliteCodes) (Payload, error) {
	per, err := periodOf(in.Indicator)
	if err != nil {
		return Payload{}, err
	}
	p := Payload{DataInicial: per.start.String(), DataFinal: per.end.String()}
	if p.DeclividadeMedia, p.CodigoSateliteDeclividadeMedia, err = slopeOf(in.Indicator, codes); err != nil {
		return Payload{}, err
	}
	if p.PlantioContorno, p.Terraceamento, err = declaredFlags(in.Field, in.UndeclaredPracticesAsZero); err != nil {
		return Payload{}, err
	}
	if p.Indices, err = buildIndices(id, in, codes); err != nil {
		return Payload{}, err
	}
	for _, x := range p.Indices {
		day, _ := zarc.ParseDate(x.Data)
		if err := per.check("observation", day); err != nil {
			return Payload{}, err
		}
	}
	if p.InterpretacoesManejo, err = manejos(id, in.Events, per); err != nil {
		return Payload{}, err
	}
	if p.InterpretacoesCoberturaSolo, err = coberturas(id, in.Seasons, per); err != nil {
		return Payload{}, err
	}
	if p.InterpretacoesCultura, err = culturas(id, in.Cycles, in.Seasons, per); err != nil {
		return Payload{}, err
	}
	p.CPFProdutor, _ = NormalizeCPF(in.Field.CPFProdutor)
	p.CNPJPropriedade, _ = NormalizeCNPJ(in.Field.CNPJPropriedade)
	if p.CNPJEmpresaSensoriamento, err = operatorCNPJ(in.CNPJEmpresaSensoriamento); err != nil {
		return Payload{}, err
	}
	return p, nil
}

// period is the monitored period, first and last day included.
type period struct{ start, end zarc.Date }

// periodOf reads the monitored period of an indicators row.
func periodOf(ind export.IndicatorRow) (period, error) {
	if ind.PeriodStart == nil || ind.PeriodEnd == nil {
		return period{}, ErrNoPeriod
	}
	if *ind.PeriodEnd < *ind.PeriodStart {
		return period{}, fmt.Errorf("%w: period ends %s before it starts %s", ErrBadValue, ind.PeriodEnd, ind.PeriodStart)
	}
	return period{*ind.PeriodStart, *ind.PeriodEnd}, nil
}

// check fails with ErrOutsidePeriod when day, the date of what, is outside
// the period.
func (per period) check(what string, day zarc.Date) error {
	if day < per.start || day > per.end {
		return fmt.Errorf("%s %s: %w %s..%s", what, day, ErrOutsidePeriod, per.start, per.end)
	}
	return nil
}

// slopeOf returns declividadeMedia (the integer mean slope, 0–100 %) and the
// satellite code of its source, the DEM.
func slopeOf(ind export.IndicatorRow, codes SatelliteCodes) (int, string, error) {
	var pct int
	switch {
	case ind.DeclividadeMedia != nil:
		pct = int(*ind.DeclividadeMedia)
	case ind.SlopeMeanPct != nil && !math.IsNaN(*ind.SlopeMeanPct):
		pct = int(math.Round(*ind.SlopeMeanPct))
	default:
		return 0, "", ErrNoSlope
	}
	if pct < 0 || pct > 100 {
		return 0, "", fmt.Errorf("%w: declividadeMedia %d %% outside 0–100", ErrBadValue, pct)
	}
	code, err := codes.Code(DEMKey)
	if err != nil {
		return 0, "", fmt.Errorf("slope source: %w", err)
	}
	return pct, code, nil
}

// declaredFlags passes the talhão's declared plantioContorno and
// terraceamento through (0 or 1). An undeclared one is ErrUndeclared, or 0
// when asZero.
func declaredFlags(f grid.Field, asZero bool) (contorno, terraco int, err error) {
	for _, x := range []struct {
		name string
		v    *int
		dst  *int
	}{{"plantioContorno", f.PlantioContorno, &contorno}, {"terraceamento", f.Terraceamento, &terraco}} {
		switch {
		case x.v == nil && asZero:
			*x.dst = 0
		case x.v == nil:
			return 0, 0, fmt.Errorf("%w: %s (0 or 1) is not a property of the talhão and SINM requires it; payload held back: declare it in the talhões file, or send 0 with --undeclared-practices-as-zero", ErrUndeclared, x.name)
		case *x.v != 0 && *x.v != 1:
			return 0, 0, fmt.Errorf("%w: %s %d is not 0 or 1", ErrBadValue, x.name, *x.v)
		default:
			*x.dst = *x.v
		}
	}
	return contorno, terraco, nil
}

// manejos turns the soil-revolving events of talhão id into
// interpretacoesManejo, by date.
func manejos(id string, events []export.EventRow, per period) ([]Manejo, error) {
	out := []Manejo{}
	for _, e := range export.Sorted(events) {
		if e.FieldID != id {
			continue
		}
		if err := per.check("event", e.Date); err != nil {
			return nil, err
		}
		m := Manejo{Data: e.Date.String(), Operacao: OperacaoRevolvimento}
		if e.Operation != nil {
			op := strings.ToUpper(*e.Operation)
			if !slices.Contains(TiposOperacao, op) {
				return nil, fmt.Errorf("event %s: %w: operation %q not one of %s", e.Date, ErrBadValue, *e.Operation, strings.Join(TiposOperacao, ", "))
			}
			m.TipoOperacao = op
		}
		out = append(out, m)
	}
	return out, nil
}

// coberturas turns the seasons of talhão id with a straw cover into
// interpretacoesCoberturaSolo, dated by the cover reading, else the sowing.
func coberturas(id string, seasons []export.SeasonRow, per period) ([]CoberturaSolo, error) {
	out := []CoberturaSolo{}
	for _, s := range export.Sorted(seasons) {
		if s.FieldID != id || s.CoverPct == nil {
			continue
		}
		date := cmp.Or(s.CoverDate, s.SowingDate)
		if date == nil {
			return nil, fmt.Errorf("season %s: cover %.1f %% has neither cover_date nor sowing_date", s.Season, *s.CoverPct)
		}
		if err := per.check("season "+s.Season+" cover", *date); err != nil {
			return nil, err
		}
		pct := math.Round(*s.CoverPct)
		if math.IsNaN(pct) || pct < 0 || pct > 100 {
			return nil, fmt.Errorf("season %s: %w: cover %v %% outside 0–100", s.Season, ErrBadValue, *s.CoverPct)
		}
		out = append(out, CoberturaSolo{DataAvaliacao: date.String(), PorcentualPalhada: int(pct)})
	}
	return out, nil
}

// culturas turns the crop cycles of talhão id into interpretacoesCultura:
// dataInicio the sowing of the season (declared or detected) for the 1ª
// safra, the cycle's own sowing (cycles.sowing_date) for a 2ª or 3ª safra,
// the green-up (start_date) when a cycle has no sowing; dataFim the
// cycle's end.
func culturas(id string, cycles []export.CycleRow, seasons []export.SeasonRow, per period) ([]Cultura, error) {
	sowing := map[string]zarc.Date{}
	for _, s := range seasons {
		if s.FieldID == id && s.SowingDate != nil {
			sowing[s.Season] = *s.SowingDate
		}
	}
	out := []Cultura{}
	for _, c := range export.Sorted(cycles) {
		// Cycle 0 is a cycle SINM's vocabulary has no label for (a cover
		// crop before the main crop, a year whose main crop was not found):
		// it stays in cycles.parquet; sent, SINM would flag it as an
		// inconsistency and leave it out anyway.
		if c.FieldID != id || c.Cycle == 0 {
			continue
		}
		label, err := TipoCultivo(int(c.Cycle))
		if err != nil {
			return nil, fmt.Errorf("season %s: %w", c.Season, err)
		}
		start := c.StartDate
		if c.SowingDate != nil {
			start = *c.SowingDate
		}
		if d, ok := sowing[c.Season]; ok && c.Cycle == 1 {
			start = d
		}
		if err := per.check(fmt.Sprintf("season %s cycle %d start", c.Season, c.Cycle), start); err != nil {
			return nil, err
		}
		if c.EndDate < start {
			return nil, fmt.Errorf("season %s cycle %d: %w: ends %s before it starts %s", c.Season, c.Cycle, ErrBadValue, c.EndDate, start)
		}
		out = append(out, Cultura{TipoCultivo: label, DataInicio: start.String(), DataFim: c.EndDate.String()})
	}
	return out, nil
}

// operatorCNPJ normalises the configured CNPJ of the remote-sensing company:
// "" leaves it out; anything else must be a valid CNPJ (the error does not
// repeat the value).
func operatorCNPJ(s string) (string, error) {
	if strings.TrimSpace(s) == "" {
		return "", nil
	}
	d, ok := NormalizeCNPJ(s)
	if !ok {
		return "", fmt.Errorf("%w: cnpjEmpresaSensoriamento is not a valid CNPJ (14 digits, check digits)", ErrBadValue)
	}
	return d, nil
}

// buildIndices turns the clear observations of talhão id into indices.
func buildIndices(id string, in PayloadInput, codes SatelliteCodes) ([]Indice, error) {
	centres := make(map[string][2]float64, len(in.Cells))
	for _, c := range in.Cells {
		if c.FieldID == id {
			centres[c.CellID] = [2]float64{c.CentreLon, c.CentreLat}
		}
	}
	obs := make([]export.ObsRow, 0, len(in.Observations))
	for _, o := range in.Observations {
		if o.FieldID == id && o.MaskReason == nil && o.NDVI != nil && o.NDTI != nil {
			obs = append(obs, o)
		}
	}
	obs = export.Sorted(obs)
	out := make([]Indice, 0, len(obs))
	for _, o := range obs {
		c, ok := centres[o.CellID]
		if !ok {
			return nil, fmt.Errorf("observation %s %s: cell %s not among the talhão's cells", o.ItemID, o.Date, o.CellID)
		}
		code, err := codes.Code(o.Collection)
		if err != nil {
			return nil, fmt.Errorf("observation %s: %w", o.ItemID, err)
		}
		ndvi, ndti := num.Round(float64(*o.NDVI), 4), num.Round(float64(*o.NDTI), 4)
		for _, v := range []struct {
			name string
			v    float64
		}{{"ndvi", ndvi}, {"ndti", ndti}} {
			if !(v.v >= -1 && v.v <= 1) {
				return nil, fmt.Errorf("observation %s cell %s %s: %w: %s %v outside [-1, 1]", o.ItemID, o.CellID, o.Date, ErrBadValue, v.name, v.v)
			}
		}
		lon, lat := num.Round(c[0], 6), num.Round(c[1], 6)
		if !(lon >= -180 && lon <= 180 && lat >= -90 && lat <= 90) {
			return nil, fmt.Errorf("cell %s: %w: centre (%v, %v) is not lon/lat", o.CellID, ErrBadValue, c[0], c[1])
		}
		out = append(out, Indice{CodigoSatelite: code, Longitude: lon, Latitude: lat, Data: o.Date.String(), NDVI: ndvi, NDTI: ndti})
	}
	if len(out) == 0 {
		return nil, ErrNoIndices
	}
	return out, nil
}

// TipoCultivo returns the SINM crop-cycle label of cycle n (1 → "Cultivo de
// 1ª safra", 2 → "Cultivo de 2ª safra", 3 → "Cultivo de 3ª safra").
func TipoCultivo(n int) (string, error) {
	if n < 1 || n > 3 {
		return "", fmt.Errorf("%w: crop cycle %d not 1, 2 or 3", ErrBadValue, n)
	}
	return fmt.Sprintf("Cultivo de %dª safra", n), nil
}

// WritePayload writes p as compact JSON (UTF-8, no HTML escaping) followed
// by a newline.
func WritePayload(w io.Writer, p Payload) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(p); err != nil {
		return fmt.Errorf("write payload: %w", err)
	}
	return nil
}

// PayloadName returns the path of a talhão's payload in the output
// directory, "sinm/<name>.json". The name is injective, so two talhões never
// share a file:
//   - bytes outside [A-Za-z0-9._-] (path separators, spaces, control
//     characters, non-ASCII letters as their UTF-8 bytes) and a leading '.'
//     are percent-encoded as %XX, upper-case hex ("a/b" → "a%2Fb",
//     ".." → "%2E.", "talhão 7" → "talh%C3%A3o%207");
//   - a name longer than MaxPayloadNameBytes is cut (never inside a %XX) and
//     ends in "~" and 16 hex digits of the sha256 of the id ('~' never occurs
//     in an encoded name), so the file name with its ".json" and the
//     ".name.tmp-*" of an atomic write stays under the 255 bytes of common
//     file systems.
//
// Names of ids that differ only in case differ only in case too: a run
// refuses such pairs (case-insensitive disks would merge them).
func PayloadName(fieldID string) string {
	const hexd = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(fieldID); i++ {
		c := fieldID[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.' && i > 0 {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hexd[c>>4])
		b.WriteByte(hexd[c&15])
	}
	name := b.String()
	if name == "" {
		name = "%"
	}
	if len(name) > MaxPayloadNameBytes {
		h := sha256.Sum256([]byte(fieldID))
		cut := MaxPayloadNameBytes - 17
		if i := strings.LastIndexByte(name[:cut], '%'); i >= cut-2 {
			cut = i
		}
		name = name[:cut] + "~" + hex.EncodeToString(h[:8])
	}
	return "sinm/" + name + ".json"
}

// MaxPayloadNameBytes caps the encoded id in a payload's file name (without
// "sinm/" and ".json"); longer ones end in a hash (see PayloadName).
const MaxPayloadNameBytes = 200

// digits strips the usual CPF/CNPJ punctuation (". - / space"); ok is false
// when anything else remains.
func digits(s string) (string, bool) {
	var b strings.Builder
	for _, r := range strings.TrimSpace(s) {
		switch {
		case r >= '0' && r <= '9':
			b.WriteRune(r)
		case r == '.' || r == '-' || r == '/' || r == ' ':
		default:
			return "", false
		}
	}
	return b.String(), true
}

// checkDigit computes a mod-11 CPF/CNPJ verification digit of d with weights w.
func checkDigit(d string, w []int) byte {
	sum := 0
	for i, c := range d {
		sum += int(c-'0') * w[i]
	}
	r := sum % 11
	if r < 2 {
		return '0'
	}
	return byte('0' + 11 - r)
}

// NormalizeCPF returns the 11 digits of a CPF written with or without
// punctuation, and whether it is valid (right length, not all one digit,
// both verification digits right). Invalid or empty input gives "".
func NormalizeCPF(s string) (string, bool) {
	d, ok := digits(s)
	if !ok || len(d) != 11 || strings.Count(d, d[:1]) == 11 {
		return "", false
	}
	if checkDigit(d[:9], []int{10, 9, 8, 7, 6, 5, 4, 3, 2}) != d[9] ||
		checkDigit(d[:10], []int{11, 10, 9, 8, 7, 6, 5, 4, 3, 2}) != d[10] {
		return "", false
	}
	return d, true
}

// NormalizeCNPJ returns the 14 digits of a numeric CNPJ written with or
// without punctuation, and whether it is valid (length, verification
// digits). Invalid or empty input gives "".
func NormalizeCNPJ(s string) (string, bool) {
	d, ok := digits(s)
	if !ok || len(d) != 14 || strings.Count(d, d[:1]) == 14 {
		return "", false
	}
	if checkDigit(d[:12], []int{5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2}) != d[12] ||
		checkDigit(d[:13], []int{6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2}) != d[13] {
		return "", false
	}
	return d, true
}

// CheckIdentifiers names the CPF/CNPJ properties of f that are present but
// invalid and so left out of the payload. Messages never contain the value.
func CheckIdentifiers(f grid.Field) []string {
	var out []string
	if f.CPFProdutor != "" {
		if _, ok := NormalizeCPF(f.CPFProdutor); !ok {
			out = append(out, "talhão "+f.ID+": cpfProdutor is not a valid CPF (11 digits, check digits); left out of the payload")
		}
	}
	if f.CNPJPropriedade != "" {
		if _, ok := NormalizeCNPJ(f.CNPJPropriedade); !ok {
			out = append(out, "talhão "+f.ID+": cnpjPropriedade is not a valid CNPJ (14 digits, check digits); left out of the payload")
		}
	}
	return out
}
