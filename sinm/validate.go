package sinm

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// PayloadSchema is the project's schema of the SINM payload (JSON Schema
// 2020-12): the SINM notes' monitoramento-satelite.schema.json with the
// fields the current integrator client always sends made required
// (plantioContorno, terraceamento and the three interpretacoes* lists;
// sinm/testdata/README.md). A test pins its sha256.
//
//go:embed monitoramento-satelite.schema.json
var PayloadSchema []byte

const payloadSchemaURL = "https://manejo.invalid/sinm/monitoramento-satelite.schema.json"

var compiled = sync.OnceValues(func() (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(PayloadSchema))
	if err != nil {
		return nil, fmt.Errorf("sinm: decode embedded schema: %w", err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(payloadSchemaURL, doc); err != nil {
		return nil, fmt.Errorf("sinm: add embedded schema: %w", err)
	}
	s, err := c.Compile(payloadSchemaURL)
	if err != nil {
		return nil, fmt.Errorf("sinm: compile embedded schema: %w", err)
	}
	return s, nil
})

// Violation is one way a payload breaks the schema: Path is a JSON path to
// the offending value ("$.indices[3].ndvi", "$" for the document), Message
// says what is wrong.
type Violation struct {
	Path    string
	Message string
}

// String formats the violation as "path: message".
func (v Violation) String() string { return v.Path + ": " + v.Message }

var printer = message.NewPrinter(language.English)

// ValidatePayload checks one JSON document against the SINM payload schema,
// and the check digits of its cpfProdutor, cnpjPropriedade and
// cnpjEmpresaSensoriamento (which the schema cannot), and returns its
// violations, sorted by path; nil means valid. Malformed JSON is one
// violation at "$". Messages never repeat a CPF or CNPJ.
func ValidatePayload(r io.Reader) []Violation {
	sch, err := compiled()
	if err != nil {
		return []Violation{{Path: "$", Message: err.Error()}}
	}
	inst, err := jsonschema.UnmarshalJSON(r)
	if err != nil {
		return []Violation{{Path: "$", Message: "not JSON: " + err.Error()}}
	}
	err = sch.Validate(inst)
	if err == nil {
		return identifierViolations(inst)
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return []Violation{{Path: "$", Message: err.Error()}}
	}
	type leaf struct {
		loc []string
		v   Violation
	}
	var leaves []leaf
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			leaves = append(leaves, leaf{e.InstanceLocation, Violation{Path: jsonPath(e.InstanceLocation), Message: e.ErrorKind.LocalizedString(printer)}})
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	// Document order: array indices compare as numbers ($.indices[2] before [10]).
	slices.SortStableFunc(leaves, func(a, b leaf) int {
		for i := 0; i < len(a.loc) && i < len(b.loc); i++ {
			x, errx := strconv.Atoi(a.loc[i])
			y, erry := strconv.Atoi(b.loc[i])
			if errx == nil && erry == nil {
				if c := x - y; c != 0 {
					return c
				}
				continue
			}
			if c := strings.Compare(a.loc[i], b.loc[i]); c != 0 {
				return c
			}
		}
		return len(a.loc) - len(b.loc)
	})
	out := make([]Violation, len(leaves))
	for i, l := range leaves {
		out[i] = l.v
	}
	return slices.Compact(out)
}

// identifierViolations checks the check digits of the CPF/CNPJ properties
// of a payload that passed the schema (so each is 11 or 14 digits).
func identifierViolations(inst any) []Violation {
	m, _ := inst.(map[string]any)
	var out []Violation
	for _, x := range []struct {
		name, kind string
		ok         func(string) (string, bool)
	}{{"cnpjEmpresaSensoriamento", "CNPJ", NormalizeCNPJ}, {"cnpjPropriedade", "CNPJ", NormalizeCNPJ}, {"cpfProdutor", "CPF", NormalizeCPF}} {
		if s, isStr := m[x.name].(string); isStr {
			if _, ok := x.ok(s); !ok {
				out = append(out, Violation{Path: "$." + x.name, Message: "not a valid " + x.kind + ": its check digits are wrong (the value is not repeated)"})
			}
		}
	}
	return out
}

// jsonPath renders an instance location as a JSON path: $.a.b[2].c.
func jsonPath(loc []string) string {
	var b strings.Builder
	b.WriteString("$")
	for _, tok := range loc {
		if _, err := strconv.Atoi(tok); err == nil {
			b.WriteString("[" + tok + "]")
			continue
		}
		b.WriteString("." + tok)
	}
	return b.String()
}
