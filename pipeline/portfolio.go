package pipeline

import (
	"strings"

	"github.com/manejo/manejo/grid"
	"github.com/manejo/manejo/series"
	"github.com/manejo/manejo/tillage"
	"golang.org/x/sync/errgroup"
)

// portfolios returns, for each talhão of grids (a batch of a run, the
// talhões of a table), what the others say about its dates
// (tillage.NewPortfolios: the NDTI offsets they share on the dates and
// sensors they were read together — atmosphere, sensor calibration, a
// regional wetting — and their own steps; issue 30). byField holds each
// talhão's observations. The talhões' median series are built Workers at
// a time and dropped once measured.
func (s *stage) portfolios(grids []grid.Grid, byField map[string][]series.Obs) []tillage.Portfolio {
	ms := make([]tillage.Medians, len(grids))
	var eg errgroup.Group
	eg.SetLimit(s.in.cfg.Workers)
	for i, g := range grids {
		eg.Go(func() error {
			ms[i] = tillage.NewMedians(tillageCells(g, seriesByCell(g, byField[g.Field.ID])), s.in.cfg.Tillage)
			return nil
		})
	}
	_ = eg.Wait() // nothing fails: a talhão without readings has an empty series
	return tillage.NewPortfolios(ms)
}

// tillageCells converts a talhão's cell series into tillage's cells, each
// reading with its sensor.
func tillageCells(g grid.Grid, byCell map[string]*cellSeries) []tillage.Cell {
	tcells := make([]tillage.Cell, 0, len(g.Cells))
	for _, c := range g.Cells {
		cs := byCell[c.ID]
		tc := tillage.Cell{ID: c.ID, Border: c.Border}
		for i, d := range cs.dates {
			r := cs.refl[i]
			tc.Obs = append(tc.Obs, tillage.Obs{Date: d, NDVI: cs.ndvi[i], NDTI: cs.ndti[i], Red: r[0], NIR: r[1], SWIR1: r[2], SWIR2: r[3], Sensor: cs.coll[i]})
		}
		tcells = append(tcells, tc)
	}
	return tcells
}

// landsatPlatforms are the item id prefixes of the Landsat Collection 2
// platforms, which share one collection (landsat-c2-l2) but not their
// band responses (ETM+ against OLI: Roy et al. 2016).
var landsatPlatforms = []string{"LT04", "LT05", "LE07", "LC08", "LC09"}

// sensorOf names the sensor of a reading for tillage: its collection,
// with "/" and the Landsat platform when the item id starts with one
// (landsat-c2-l2/LE07).
func sensorOf(o series.Obs) string {
	for _, p := range landsatPlatforms {
		if strings.HasPrefix(o.ItemID, p+"_") {
			return o.Collection + "/" + p
		}
	}
	return o.Collection
}
