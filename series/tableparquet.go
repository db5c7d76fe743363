package series

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/manejo/manejo/zarc"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// parquetRows reads the top-level scalar columns of a Parquet file as text,
// so that CSV and Parquet tables are checked by the same code.
type parquetRows struct {
	head  []string
	pos   map[int]int // leaf column index → header position
	conv  []func(parquet.Value) string
	rgs   []parquet.RowGroup
	rg    int
	rows  parquet.Rows
	buf   []parquet.Row
	n, i  int
	count int
}

func newParquetRows(b []byte) (*parquetRows, error) {
	f, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return nil, fmt.Errorf("not a readable Parquet file: %v", err)
	}
	p := &parquetRows{pos: map[int]int{}, rgs: f.RowGroups(), buf: make([]parquet.Row, 256)}
	for _, path := range f.Schema().Columns() {
		leaf, ok := f.Schema().Lookup(path...)
		if !ok || len(path) != 1 || leaf.MaxRepetitionLevel > 0 {
			continue // nested and list columns are not observation columns
		}
		p.pos[leaf.ColumnIndex] = len(p.head)
		p.head = append(p.head, path[0])
		p.conv = append(p.conv, valueText(leaf.Node))
	}
	return p, nil
}

func (p *parquetRows) header() []string { return p.head }
func (p *parquetRows) headerRow() int   { return 0 }

func (p *parquetRows) next() (int, []string, error) {
	for p.i >= p.n {
		if p.rows == nil {
			if p.rg >= len(p.rgs) {
				return 0, nil, io.EOF
			}
			p.rows = p.rgs[p.rg].Rows()
			p.rg++
		}
		n, err := p.rows.ReadRows(p.buf)
		p.n, p.i = n, 0
		if err != nil && err != io.EOF {
			return 0, nil, fmt.Errorf("row group %d of the Parquet file: %v", p.rg, err)
		}
		if err == io.EOF || n == 0 {
			p.rows.Close()
			p.rows = nil
		}
	}
	row := p.buf[p.i]
	p.i++
	p.count++
	rec := make([]string, len(p.head))
	for _, v := range row {
		if k, ok := p.pos[v.Column()]; ok && !v.IsNull() {
			rec[k] = p.conv[k](v)
		}
	}
	return p.count, rec, nil
}

// valueText returns how a value of the column is written as text: DATE
// and TIMESTAMP as YYYY-MM-DD (UTC), FLOAT with the digits of a float32.
func valueText(n parquet.Node) func(parquet.Value) string {
	if lt := n.Type().LogicalType(); lt != nil {
		switch t := lt.Value.(type) {
		case *format.DateType:
			return func(v parquet.Value) string { return zarc.Date(v.Int32()).String() }
		case *format.TimestampType:
			unit := time.Millisecond
			if t.Unit.Value != nil {
				unit = t.Unit.Value.Duration()
			}
			return func(v parquet.Value) string {
				return time.Unix(0, v.Int64()*int64(unit)).UTC().Format(time.DateOnly)
			}
		}
	}
	switch n.Type().Kind() {
	case parquet.Boolean:
		return func(v parquet.Value) string { return strconv.FormatBool(v.Boolean()) }
	case parquet.Int32:
		return func(v parquet.Value) string { return strconv.FormatInt(int64(v.Int32()), 10) }
	case parquet.Int64:
		return func(v parquet.Value) string { return strconv.FormatInt(v.Int64(), 10) }
	case parquet.Float:
		return func(v parquet.Value) string { return strconv.FormatFloat(float64(v.Float()), 'g', -1, 32) }
	case parquet.Double:
		return func(v parquet.Value) string { return strconv.FormatFloat(v.Double(), 'g', -1, 64) }
	}
	return func(v parquet.Value) string { return string(v.ByteArray()) }
}
