package usworld

import (
	"bufio"
	"fmt"
	"io"
	"time"
)

// TableHeader is the header of the analyse table WriteCSV writes
// (docs/series.md, "Observation tables").
const TableHeader = "field_id,point_id,lon,lat,date,collection,item_id,crop,red,nir,swir16,swir22"

// WriteCSV writes the clear readings of the given crop years of fields as
// a `manejo analyse` table: one row per point and date, surface
// reflectances, crop "corn" (as the real set names it). Masked readings
// (cloud, snow, SLC-off gaps) are left out, as an export of clear pixels
// leaves them.
func WriteCSV(w io.Writer, fields []Field, cropYears ...int) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	fmt.Fprintln(bw, TableHeader)
	for _, f := range fields {
		for _, y := range cropYears {
			fy, ok := f.Year(y)
			if !ok {
				continue
			}
			rs := append([]Reading(nil), fy.Readings...)
			sortReadings(rs)
			for _, r := range rs {
				d := r.Date()
				fmt.Fprintf(bw, "%s,%s_p%03d,%.6f,%.6f,%s,%s,%s,corn,%.4f,%.4f,%.4f,%.4f\n", f.ID, f.ID, r.Point,
					f.Lon[r.Point], f.Lat[r.Point], d.Format(time.DateOnly), r.Sensor.Collection(), r.Sensor.ItemID(d, 20),
					r.Red, r.NIR, r.SWIR16, r.SWIR22)
			}
		}
	}
	return bw.Flush()
}

// Year is the field's window of a crop year.
func (f Field) Year(cropYear int) (FieldYear, bool) {
	for _, fy := range f.Years {
		if fy.CropYear == cropYear {
			return fy, true
		}
	}
	return FieldYear{}, false
}
