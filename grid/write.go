package grid

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"
)

// WriteCellsGeoJSON writes the cell centres of grids to w as an RFC 7946
// GeoJSON FeatureCollection of Points (lon/lat, 8 decimals: about 1 mm),
// one Feature per cell in grid then cell order, with properties field_id,
// cell_id, row, col, cell_area_ha (geodesic area of the clipped cell),
// field_area_ha, cell_size_ha (nominal), border, fallback and modis (see
// Cell). Areas are rounded to 6 decimals (0.01 m²).
func WriteCellsGeoJSON(w io.Writer, grids []Grid) error {
	bw := bufio.NewWriter(w)
	bw.WriteString(`{"type":"FeatureCollection","features":[`)
	first := true
	var buf []byte
	for _, g := range grids {
		for _, c := range g.Cells {
			if !first {
				bw.WriteByte(',')
			}
			first = false
			buf = buf[:0]
			buf = append(buf, "\n{\"type\":\"Feature\",\"geometry\":{\"type\":\"Point\",\"coordinates\":["...)
			buf = appendFloat(buf, c.Centre[0], 8)
			buf = append(buf, ',')
			buf = appendFloat(buf, c.Centre[1], 8)
			buf = append(buf, "]},\"properties\":{\"field_id\":"...)
			buf = strconv.AppendQuote(buf, g.Field.ID)
			buf = append(buf, ",\"cell_id\":"...)
			buf = strconv.AppendQuote(buf, c.ID)
			buf = append(buf, ",\"row\":"...)
			buf = strconv.AppendInt(buf, int64(c.Row), 10)
			buf = append(buf, ",\"col\":"...)
			buf = strconv.AppendInt(buf, int64(c.Col), 10)
			buf = append(buf, ",\"cell_area_ha\":"...)
			buf = appendFloat(buf, c.AreaHa, 6)
			buf = append(buf, ",\"field_area_ha\":"...)
			buf = appendFloat(buf, g.AreaHa, 6)
			buf = append(buf, ",\"cell_size_ha\":"...)
			buf = appendFloat(buf, g.CellSizeHa, 6)
			buf = append(buf, ",\"border\":"...)
			buf = strconv.AppendBool(buf, c.Border)
			buf = append(buf, ",\"fallback\":"...)
			buf = strconv.AppendBool(buf, c.Fallback)
			buf = append(buf, ",\"modis\":"...)
			buf = strconv.AppendBool(buf, c.MODIS)
			buf = append(buf, "}}"...)
			if _, err := bw.Write(buf); err != nil {
				return fmt.Errorf("write cells: %w", err)
			}
		}
	}
	bw.WriteString("\n]}\n")
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write cells: %w", err)
	}
	return nil
}

// appendFloat appends v rounded to prec decimals, without trailing zeros.
func appendFloat(b []byte, v float64, prec int) []byte {
	p := math.Pow(10, float64(prec))
	v = math.Round(v*p) / p
	if v == 0 {
		v = 0 // no "-0"
	}
	return strconv.AppendFloat(b, v, 'f', -1, 64)
}
