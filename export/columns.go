package export

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// Column documents one top-level column of a dataset, derived from the row
// type's struct tags and its Parquet schema.
type Column struct {
	Name     string // Parquet column name
	Type     string // DATE, FLOAT, DOUBLE, INT32, BOOLEAN, STRING, BINARY (WKB), LIST<STRING>, STRUCT<...>
	Nullable bool
	Unit     string
	Doc      string
}

// Columns returns the columns of d in file order.
func (d Dataset) Columns() []Column {
	schema := parquet.SchemaOf(reflect.New(d.rowType).Interface())
	var out []Column
	t := d.rowType
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("parquet"), ",")
		var node parquet.Field
		for _, sf := range schema.Fields() {
			if sf.Name() == name {
				node = sf
			}
		}
		if node == nil {
			panic("export: column " + name + " not in schema of " + d.Name)
		}
		out = append(out, Column{
			Name:     name,
			Type:     typeName(node, name),
			Nullable: node.Optional(),
			Unit:     f.Tag.Get("unit"),
			Doc:      f.Tag.Get("doc"),
		})
	}
	return out
}

// typeName names a Parquet node the way analysts read it.
func typeName(n parquet.Node, name string) string {
	if n.Leaf() {
		if lt := n.Type().LogicalType(); lt != nil {
			switch v := lt.Value.(type) {
			case *format.DateType:
				return "DATE"
			case *format.StringType:
				return "STRING"
			case *format.IntType:
				return fmt.Sprintf("INT%d", v.BitWidth)
			}
		}
		switch n.Type().Kind() {
		case parquet.Float:
			return "FLOAT"
		case parquet.Double:
			return "DOUBLE"
		case parquet.Boolean:
			return "BOOLEAN"
		case parquet.Int32:
			return "INT32"
		case parquet.ByteArray:
			if name == "geometry" {
				return "BINARY (WKB)"
			}
			return "BINARY"
		}
		return n.Type().String()
	}
	if lt := n.Type().LogicalType(); lt != nil && isList(lt) {
		elem := n.Fields()[0].Fields()[0]
		return "LIST<" + typeName(elem, "") + ">"
	}
	var parts []string
	for _, f := range n.Fields() {
		parts = append(parts, f.Name()+" "+typeName(f, f.Name()))
	}
	return "STRUCT<" + strings.Join(parts, ", ") + ">"
}

func isList(lt *format.LogicalType) bool {
	_, ok := lt.Value.(*format.ListType)
	return ok
}

// schemaMarkdown renders one Markdown table per dataset (column, type,
// unit, meaning), the schema section of docs/outputs.md.
func schemaMarkdown() string {
	var b strings.Builder
	for _, d := range Datasets {
		fmt.Fprintf(&b, "### `%s` — %s\n\nSorted by %s.\n\n", d.File(), d.Title, "`"+strings.Join(d.SortedBy, "`, `")+"`")
		b.WriteString("| column | type | unit | meaning |\n|---|---|---|---|\n")
		for _, c := range d.Columns() {
			typ := c.Type
			if c.Nullable {
				typ += ", nullable"
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", c.Name, typ, c.Unit, strings.ReplaceAll(c.Doc, "|", `\|`))
		}
		b.WriteString("\n")
	}
	return b.String()
}
