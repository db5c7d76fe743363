package sinm

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/manejo/manejo/export"
	"github.com/manejo/manejo/export/exporttest"
	"github.com/manejo/manejo/internal/testkit"
)

var update = flag.Bool("update", false, "rewrite the golden payload (testdata/payload/expected.json)")

// exampleJSON is a copy of the team library's sinm/example.json (provenance
// in testdata/README.md); completeJSON is that example with what the
// current client always sends added (terraceamento, the operator's CNPJ).
var (
	exampleJSON  = filepath.Join("testdata", "example.json")
	completeJSON = filepath.Join("testdata", "example-complete.json")
)

// schemaSHA256 is the sha256 of the project's schema: the team library's
// sinm/monitoramento-satelite.schema.json (sha256 74cc0bfc…2c99) with
// plantioContorno, terraceamento and the three interpretacoes* lists made
// required (issue 18 item 4; testdata/README.md). A change to the schema
// is a change of this line, reviewed.
const schemaSHA256 = "cb64f4e7c315fcafe51b6302181bb65269241d65c58c197bb0e12f57c817b1fd"

func TestEmbeddedSchemaIsRecordedCopy(t *testing.T) {
	if got := fmt.Sprintf("%x", sha256.Sum256(PayloadSchema)); got != schemaSHA256 {
		t.Errorf("embedded monitoramento-satelite.schema.json has sha256 %s, want %s (the project's schema)", got, schemaSHA256)
	}
	var s struct {
		Required []string `json:"required"`
	}
	if err := json.Unmarshal(PayloadSchema, &s); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"plantioContorno", "terraceamento", "indices", "interpretacoesCoberturaSolo", "interpretacoesCultura", "interpretacoesManejo"} {
		if !slices.Contains(s.Required, f) {
			t.Errorf("schema does not require %s", f)
		}
	}
}

// The team library's example was written against the earlier schema: it
// lacks terraceamento, which the current client always sends, and the
// project's schema says so, and only that.
func TestSharedExampleLacksTerraceamento(t *testing.T) {
	b, err := os.ReadFile(exampleJSON)
	if err != nil {
		t.Fatal(err)
	}
	v := ValidatePayload(bytes.NewReader(b))
	if len(v) != 1 || v[0].Path != "$" || !strings.Contains(v[0].Message, "terraceamento") {
		t.Errorf("shared example.json: %v, want one violation: terraceamento missing", v)
	}
}

func TestCompleteExampleValidates(t *testing.T) {
	b, err := os.ReadFile(completeJSON)
	if err != nil {
		t.Fatal(err)
	}
	if v := ValidatePayload(bytes.NewReader(b)); v != nil {
		t.Errorf("example-complete.json: %v", v)
	}
	// Our struct reads and writes it without loss: same JSON value.
	var p Payload
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		t.Fatalf("decode example into Payload: %v", err)
	}
	var buf bytes.Buffer
	if err := WritePayload(&buf, p); err != nil {
		t.Fatal(err)
	}
	var a, c any
	json.Unmarshal(b, &a)
	json.Unmarshal(buf.Bytes(), &c)
	if !jsonEqual(a, c) {
		t.Errorf("Payload round trip of example-complete.json changed it:\n%s", buf.String())
	}
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

func TestBuildPayloadGolden(t *testing.T) {
	fx := exporttest.New(t)
	in := payloadInput(fx, "MT-SIN-002")
	in.CNPJEmpresaSensoriamento = "11444777000161"
	p, err := BuildPayload(in, testCodes)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WritePayload(&buf, p); err != nil {
		t.Fatal(err)
	}
	if v := ValidatePayload(bytes.NewReader(buf.Bytes())); v != nil {
		t.Fatalf("payload invalid: %v\n%s", v, buf.String())
	}
	golden := filepath.Join("testdata", "payload", "expected.json") // input: newFixture, talhão MT-SIN-002
	if *update {
		if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./sinm -update)", err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		t.Errorf("payload differs from %s:\n got %s\nwant %s", golden, buf.String(), want)
	}

	// Values checked by hand, independent of the golden file.
	if p.DataInicial != "2023-07-01" || p.DataFinal != "2026-06-30" || p.DeclividadeMedia != 4 || p.CodigoSateliteDeclividadeMedia != "S09" {
		t.Errorf("period/slope = %s %s %d %s", p.DataInicial, p.DataFinal, p.DeclividadeMedia, p.CodigoSateliteDeclividadeMedia)
	}
	if p.PlantioContorno != 1 || p.Terraceamento != 0 || p.CodigoSatelitePlantioContorno != "" {
		t.Errorf("declared flags = %v %v %q", p.PlantioContorno, p.Terraceamento, p.CodigoSatelitePlantioContorno)
	}
	if !strings.Contains(buf.String(), `"plantioContorno":1,`) || !strings.Contains(buf.String(), `"terraceamento":0,`) {
		t.Errorf("declared flags not both written: %s", buf.String())
	}
	// 4 clear observations of MT-SIN-002 (the masked Landsat one is left out),
	// sorted by cell, date, collection.
	wantIdx := []Indice{
		{"S01", -55.617, -11.776, "2025-09-12", 0.2134, 0.1532},
		{"S01", -55.617, -11.776, "2025-09-22", 0.2134, 0.1532},
		{"S02", -55.607, -11.776, "2025-09-12", 0, 0.0231},
		{"S01", -55.607, -11.776, "2025-09-22", 0.1987, 0.0611},
	}
	if len(p.Indices) != len(wantIdx) {
		t.Fatalf("indices = %+v", p.Indices)
	}
	for i, w := range wantIdx {
		g := p.Indices[i]
		if g.CodigoSatelite != w.CodigoSatelite || g.Data != w.Data || !testkit.Near(g.Longitude, w.Longitude, 1e-9) ||
			!testkit.Near(g.Latitude, w.Latitude, 1e-9) || g.NDVI != w.NDVI || g.NDTI != w.NDTI {
			t.Errorf("indices[%d] = %+v, want %+v", i, g, w)
		}
	}
	if !strings.Contains(buf.String(), `"ndvi":0,`) || strings.Contains(buf.String(), `"ndvi":-0`) {
		t.Errorf("NDVI -0.00004 should print as 0: %s", buf.String())
	}
	wantManejo := []Manejo{{"2023-08-03", OperacaoRevolvimento, ""}, {"2025-09-22", OperacaoRevolvimento, "GRADAGEM"}}
	if !slices.Equal(p.InterpretacoesManejo, wantManejo) {
		t.Errorf("manejo = %+v", p.InterpretacoesManejo)
	}
	// 2023/24 dated by cover_date, 2024/25 by sowing date; 76.5 → 77 (half away from zero).
	wantCob := []CoberturaSolo{{"2023-10-13", 82}, {"2024-10-09", 77}}
	if !slices.Equal(p.InterpretacoesCoberturaSolo, wantCob) {
		t.Errorf("cobertura = %+v", p.InterpretacoesCoberturaSolo)
	}
	wantCult := []Cultura{{"Cultivo de 1ª safra", "2025-10-18", "2026-02-10"}, {"Cultivo de 2ª safra", "2026-02-12", "2026-06-15"}}
	if !slices.Equal(p.InterpretacoesCultura, wantCult) {
		t.Errorf("cultura = %+v", p.InterpretacoesCultura)
	}
	if p.CPFProdutor != "52998224725" || p.CNPJPropriedade != "11222333000181" || p.CNPJEmpresaSensoriamento != "11444777000161" {
		t.Errorf("identifiers = %q %q %q", p.CPFProdutor, p.CNPJPropriedade, p.CNPJEmpresaSensoriamento)
	}
}

func TestBuildPayloadOtherTalhao(t *testing.T) {
	fx := exporttest.New(t)
	in := payloadInput(fx, "MT-SIN-001")
	// MT-SIN-001 has no slope: the payload cannot be built, and says why.
	if _, err := BuildPayload(in, testCodes); !errors.Is(err, ErrNoSlope) || !strings.Contains(err.Error(), "MT-SIN-001") {
		t.Fatalf("BuildPayload without slope = %v, want ErrNoSlope naming the talhão", err)
	}
	in.Indicator.SlopeMeanPct = new(2.49)
	// MT-SIN-001 declares neither practice: held back, saying which and how
	// to send it anyway.
	_, err := BuildPayload(in, testCodes)
	if !errors.Is(err, ErrUndeclared) || !strings.Contains(err.Error(), "MT-SIN-001") || !strings.Contains(err.Error(), "plantioContorno") ||
		!strings.Contains(err.Error(), "--undeclared-practices-as-zero") {
		t.Fatalf("BuildPayload without declarations = %v, want ErrUndeclared naming the talhão, the property and the flag", err)
	}
	in.UndeclaredPracticesAsZero = true
	p, err := BuildPayload(in, testCodes)
	if err != nil {
		t.Fatal(err)
	}
	if p.DeclividadeMedia != 2 || len(p.Indices) != 1 || p.CPFProdutor != "" || p.PlantioContorno != 0 || p.Terraceamento != 0 {
		t.Errorf("payload = %+v", p)
	}
	if notes := CheckIdentifiers(in.Field); len(notes) != 1 || strings.Contains(notes[0], "123") {
		t.Errorf("CheckIdentifiers = %q: want one note without the CPF value", notes)
	}
	var buf bytes.Buffer
	WritePayload(&buf, p)
	if strings.Contains(buf.String(), "cpfProdutor") {
		t.Error("invalid CPF written")
	}
	if !strings.Contains(buf.String(), `"plantioContorno":0,`) || !strings.Contains(buf.String(), `"terraceamento":0,`) {
		t.Errorf("undeclared practices sent as 0 should be written: %s", buf.String())
	}
	if !strings.Contains(buf.String(), `"interpretacoesManejo":[]`) {
		t.Errorf("no events should be an empty array: %s", buf.String())
	}
	if v := ValidatePayload(&buf); v != nil {
		t.Errorf("payload invalid: %v", v)
	}
}

// A cycle SINM has no label for (cycle 0: a cover crop before the main
// crop) stays out of interpretacoesCultura without failing the payload.
func TestBuildPayloadSkipsUnlabelledCycles(t *testing.T) {
	fx := exporttest.New(t)
	in := payloadInput(fx, "MT-SIN-002")
	want, err := BuildPayload(in, testCodes)
	if err != nil {
		t.Fatal(err)
	}
	in.Cycles = append(in.Cycles, export.CycleRow{FieldID: "MT-SIN-002", Season: "2025/26", Cycle: 0, Kind: "Planta de cobertura",
		StartDate: in.Cycles[0].StartDate - 90, EndDate: in.Cycles[0].StartDate - 20})
	got, err := BuildPayload(in, testCodes)
	if err != nil {
		t.Fatalf("BuildPayload with a cycle 0: %v", err)
	}
	if len(got.InterpretacoesCultura) != len(want.InterpretacoesCultura) {
		t.Errorf("interpretacoesCultura = %+v, want the %d labelled cycles only", got.InterpretacoesCultura, len(want.InterpretacoesCultura))
	}
}

// interpretacoesCultura carries the dates a farmer knows (issue 18 item 4,
// issue 30 item 4): the 1ª safra starts at the season's sowing, declared or
// detected, not at the green-up some 26 days later; the 2ª safra at its own
// sowing (cycles.sowing_date), or at its green-up when it has none; both
// end at the cycle's end.
func TestCulturaDatesAreSowingAndHarvest(t *testing.T) {
	fx := exporttest.New(t)
	for _, source := range []string{"declared", "detected"} {
		in := payloadInput(fx, "MT-SIN-002")
		in.Seasons = append(slices.Clone(in.Seasons), export.SeasonRow{FieldID: "MT-SIN-002", Season: "2025/26", Crop: "milho",
			SowingDate: exporttest.DayPtr("2025-09-23"), SowingSource: new(source)})
		// Another talhão's sowing of the same season must not leak in.
		in.Seasons = append(in.Seasons, export.SeasonRow{FieldID: "MT-SIN-001", Season: "2025/26", SowingDate: exporttest.DayPtr("2025-09-01")})
		p, err := BuildPayload(in, testCodes)
		if err != nil {
			t.Fatal(err)
		}
		want := []Cultura{{"Cultivo de 1ª safra", "2025-09-23", "2026-02-10"}, {"Cultivo de 2ª safra", "2026-02-12", "2026-06-15"}}
		if !slices.Equal(p.InterpretacoesCultura, want) {
			t.Errorf("%s sowing: cultura = %+v, want %+v", source, p.InterpretacoesCultura, want)
		}
	}
	in := payloadInput(fx, "MT-SIN-002")
	in.Cycles = slices.Clone(in.Cycles)
	for i := range in.Cycles {
		in.Cycles[i].SowingDate = nil
	}
	p, err := BuildPayload(in, testCodes)
	want := []Cultura{{"Cultivo de 1ª safra", "2025-11-12", "2026-02-10"}, {"Cultivo de 2ª safra", "2026-03-14", "2026-06-15"}}
	if err != nil || !slices.Equal(p.InterpretacoesCultura, want) {
		t.Errorf("no sowing dates: cultura = %+v, %v; want the green-ups %+v", p.InterpretacoesCultura, err, want)
	}
}

func TestBuildPayloadErrors(t *testing.T) {
	fx := exporttest.New(t)
	tests := []struct {
		name   string
		mutate func(in *PayloadInput, codes SatelliteCodes)
		want   error
		substr string
	}{
		{"collection without code", func(in *PayloadInput, c SatelliteCodes) { delete(c, "landsat-c2-l2") }, ErrNoSatelliteCode, `"landsat-c2-l2"`},
		{"dem without code", func(in *PayloadInput, c SatelliteCodes) { delete(c, "dem") }, ErrNoSatelliteCode, `"dem"`},
		{"no period", func(in *PayloadInput, c SatelliteCodes) { in.Indicator.PeriodEnd = nil }, ErrNoPeriod, "MT-SIN-002"},
		{"ndvi out of range", func(in *PayloadInput, c SatelliteCodes) {
			in.Observations = slices.Clone(in.Observations)
			in.Observations[0].NDVI = new(float32(1.079)) // max of the sits MT samples
		}, ErrBadValue, "S2B_21LXH_20250922_0_L2A"},
		{"slope over 100 %", func(in *PayloadInput, c SatelliteCodes) { in.Indicator.DeclividadeMedia = new(int32(101)) }, ErrBadValue, "declividadeMedia"},
		{"unknown operation", func(in *PayloadInput, c SatelliteCodes) {
			in.Events = slices.Clone(in.Events)
			in.Events[0].Operation = new("plantio direto")
		}, ErrBadValue, "plantio direto"},
		{"cycle 4", func(in *PayloadInput, c SatelliteCodes) {
			in.Cycles = slices.Clone(in.Cycles)
			in.Cycles[0].Cycle = 4
		}, ErrBadValue, "crop cycle 4"},
		{"event before the period", func(in *PayloadInput, c SatelliteCodes) {
			in.Events = slices.Clone(in.Events)
			in.Events[1].Date = exporttest.Day("2023-06-30")
		}, ErrOutsidePeriod, "2023-06-30"},
		{"index after the period", func(in *PayloadInput, c SatelliteCodes) { in.Indicator.PeriodEnd = exporttest.DayPtr("2025-09-21") }, ErrOutsidePeriod, "2025-09-22"},
		{"no clear observation", func(in *PayloadInput, c SatelliteCodes) { in.Observations = nil }, ErrNoIndices, "MT-SIN-002"},
		{"declared flag 2", func(in *PayloadInput, c SatelliteCodes) { in.Field.Terraceamento = new(2) }, ErrBadValue, "terraceamento"},
		{"terraceamento undeclared", func(in *PayloadInput, c SatelliteCodes) { in.Field.Terraceamento = nil }, ErrUndeclared, "terraceamento (0 or 1) is not a property of the talhão"},
		{"sowing after the harvest", func(in *PayloadInput, c SatelliteCodes) {
			in.Seasons = append(slices.Clone(in.Seasons), export.SeasonRow{FieldID: "MT-SIN-002", Season: "2025/26", SowingDate: exporttest.DayPtr("2026-03-01")})
		}, ErrBadValue, "ends 2026-02-10 before it starts 2026-03-01"},
		{"operator CNPJ invalid", func(in *PayloadInput, c SatelliteCodes) { in.CNPJEmpresaSensoriamento = "11.444.777/0001-62" }, ErrBadValue, "cnpjEmpresaSensoriamento is not a valid CNPJ"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := payloadInput(fx, "MT-SIN-002")
			codes := SatelliteCodes{}.Merge(testCodes)
			tc.mutate(&in, codes)
			_, err := BuildPayload(in, codes)
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.substr) {
				t.Errorf("BuildPayload = %v, want %v mentioning %s", err, tc.want, tc.substr)
			}
		})
	}
}

func TestValidatePayloadViolations(t *testing.T) {
	b, err := os.ReadFile(completeJSON)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		edit  func(m map[string]any)
		paths []string
	}{
		{"string slope", func(m map[string]any) { m["declividadeMedia"] = "4" }, []string{"$.declividadeMedia"}},
		{"bad code", func(m map[string]any) { m["codigoSateliteDeclividadeMedia"] = "S10" }, []string{"$.codigoSateliteDeclividadeMedia"}},
		{"ndvi > 1 and bad date", func(m map[string]any) {
			idx := m["indices"].([]any)
			idx[1].(map[string]any)["ndvi"] = 1.2
			idx[0].(map[string]any)["data"] = "2025-9-12"
		}, []string{"$.indices[0].data", "$.indices[1].ndvi"}},
		{"wrong operacao", func(m map[string]any) {
			m["interpretacoesManejo"].([]any)[0].(map[string]any)["operacao"] = "Gradagem"
		}, []string{"$.interpretacoesManejo[0].operacao"}},
		{"percent as float", func(m map[string]any) {
			m["interpretacoesCoberturaSolo"].([]any)[2].(map[string]any)["porcentualPalhada"] = 35.5
		}, []string{"$.interpretacoesCoberturaSolo[2].porcentualPalhada"}},
		{"unknown field and missing required", func(m map[string]any) {
			m["declividade"] = 4
			delete(m, "dataFinal")
		}, []string{"$"}},
		{"formatted CPF", func(m map[string]any) { m["cpfProdutor"] = "529.982.247-25" }, []string{"$.cpfProdutor"}},
		{"undeclared practices and a missing list", func(m map[string]any) {
			delete(m, "plantioContorno")
			delete(m, "interpretacoesCultura")
		}, []string{"$"}},
		// Check digits, which a pattern cannot check (issue 18 item 4): a
		// CPF and two CNPJs one digit off.
		{"CPF and CNPJ check digits", func(m map[string]any) {
			m["cpfProdutor"] = "52998224724"
			m["cnpjPropriedade"] = "11222333000182"
			m["cnpjEmpresaSensoriamento"] = "11444777000162"
		}, []string{"$.cnpjEmpresaSensoriamento", "$.cnpjPropriedade", "$.cpfProdutor"}},
		{"valid CPF and CNPJ", func(m map[string]any) {
			m["cpfProdutor"] = "52998224725"
			m["cnpjPropriedade"] = "11222333000181"
		}, nil},
		{"empty indices", func(m map[string]any) { m["indices"] = []any{} }, []string{"$.indices"}},
		{"numeric order of indices", func(m map[string]any) {
			idx := m["indices"].([]any)
			for len(idx) < 11 {
				idx = append(idx, idx[0])
			}
			idx[10] = map[string]any{}
			idx[2] = map[string]any{}
			m["indices"] = idx
		}, []string{"$.indices[2]", "$.indices[10]"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var m map[string]any
			if err := json.Unmarshal(b, &m); err != nil {
				t.Fatal(err)
			}
			tc.edit(m)
			doc, _ := json.Marshal(m)
			v := ValidatePayload(bytes.NewReader(doc))
			var paths []string
			for _, x := range v {
				if x.Message == "" {
					t.Errorf("violation at %s without a message", x.Path)
				}
				if !slices.Contains(paths, x.Path) {
					paths = append(paths, x.Path)
				}
			}
			if !slices.Equal(paths, tc.paths) {
				t.Errorf("violations = %v, want paths %v", v, tc.paths)
			}
		})
	}
	var m map[string]any
	json.Unmarshal(b, &m)
	m["cpfProdutor"] = "52998224724"
	doc, _ := json.Marshal(m)
	for _, v := range ValidatePayload(bytes.NewReader(doc)) {
		if strings.Contains(v.Message, "5299822472") {
			t.Errorf("violation repeats the CPF: %v", v)
		}
	}
	if v := ValidatePayload(strings.NewReader("{")); len(v) != 1 || v[0].Path != "$" {
		t.Errorf("ValidatePayload(malformed) = %v", v)
	}
}

func TestIdentifiers(t *testing.T) {
	tests := []struct {
		name, in, want string
		cnpj           bool
	}{
		{"cpf formatted", "529.982.247-25", "52998224725", false},
		{"cpf digits", "52998224725", "52998224725", false},
		{"cpf wrong check digit", "52998224724", "", false},
		{"cpf all equal", "111.111.111-11", "", false},
		{"cpf short", "5299822472", "", false},
		{"cpf letters", "52998224725x", "", false},
		{"cnpj formatted", "11.222.333/0001-81", "11222333000181", true},
		{"cnpj wrong", "11.222.333/0001-82", "", true},
		{"cnpj alphanumeric", "12.ABC.345/01DE-35", "", true}, // not accepted by the SINM schema either
		{"empty", "", "", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := NormalizeCPF(tc.in)
			if tc.cnpj {
				got, ok = NormalizeCNPJ(tc.in)
			}
			if got != tc.want || ok != (tc.want != "") {
				t.Errorf("Normalize(%q) = %q, %v; want %q", tc.in, got, ok, tc.want)
			}
		})
	}
}

// TestPayloadName: file names are injective (issue 19 defect 4: "a/b" and
// "a_b", ".." and "_.." used to share a file) and at most 255 bytes with
// room for the temporary name of an atomic write (defect 5: a 236-character
// or an 80-character CJK id used to abort the run).
func TestPayloadName(t *testing.T) {
	for in, want := range map[string]string{"MT-SIN-001": "sinm/MT-SIN-001.json", "a/b": "sinm/a%2Fb.json", "a_b": "sinm/a_b.json",
		"..": "sinm/%2E..json", "_..": "sinm/_...json", "talhão 7": "sinm/talh%C3%A3o%207.json", "a%2Fb": "sinm/a%252Fb.json"} {
		if got := PayloadName(in); got != want {
			t.Errorf("PayloadName(%q) = %q, want %q", in, got, want)
		}
	}
	long := []string{strings.Repeat("x", 236), strings.Repeat("x", 235) + "y", strings.Repeat("田", 80), strings.Repeat("田", 79) + "畑",
		strings.Repeat("a", 198) + "/", strings.Repeat("a", 199) + "/", strings.Repeat("a", 5000)}
	seen := map[string]string{}
	for _, id := range long {
		name := PayloadName(id)
		base := strings.TrimPrefix(name, "sinm/")
		if len(base) > MaxPayloadNameBytes+len(".json") || len("."+base+".tmp-1234567890") > 255 {
			t.Errorf("PayloadName(%d bytes) = %d bytes, over the cap", len(id), len(base))
		}
		if prev, dup := seen[name]; dup {
			t.Errorf("ids %.20q… and %.20q… share %s", prev, id, name)
		}
		seen[name] = id
	}
}

// testCodes maps the fixture's collections and the DEM to SINM codes.
var testCodes = SatelliteCodes{"sentinel-2-l2a": "S01", "landsat-c2-l2": "S02", "dem": "S09"}

// payloadInput selects the rows of talhão id of the shared fixture.
func payloadInput(fx exporttest.Fixture, id string) PayloadInput {
	return PayloadInput{Field: fx.Field(id), Indicator: fx.Indicator(id),
		Cells: fx.Cells, Observations: fx.Obs, Events: fx.Events, Seasons: fx.Seasons, Cycles: fx.Cycles}
}
