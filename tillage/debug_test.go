package tillage

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/manejo/manejo/sim/pheno"
)

// tilldebug enables the diagnostics below, all on the tuning seed (1):
// TestDebugFN lists missed tillages with the observations around them and
// tallies why the straw-drop test rejected them; TestDebugFP lists false
// cell breaks with the crop calendar around them; TestDebugTune runs the
// harness at 1,000 cells + 400 talhões with knobs from the environment (K,
// CELLK, RRATIO, RGAP, RHALF, RGAPL, RPREG, RCONFTOL, TRIM, Z1F, RMIN,
// RMAXG, ...; see debugParams). The knobs are Params values (the unexported
// Params.tune for the break tests' thresholds), never package state.
var tilldebug = flag.Bool("tilldebug", false, "print tillage harness diagnostics on the tuning seed")

func TestDebugFN(t *testing.T) {
	if !*tilldebug {
		t.Skip("-tilldebug not set")
	}
	p := debugParams()
	u, _ := newUnmixer(p)
	g := testGenerator().(*phenoGen)
	var sc *pheno.Scenario
	onScenario = func(s *pheno.Scenario) { sc = s }
	defer func() { onScenario = nil }()
	rng := rand.New(rand.NewPCG(1, 0x7a11a9e))
	cat := map[string]int{}
	defer func() { t.Log(cat) }()
	kinds := map[string][2]int{}
	for i := 0; i < 2000; i++ {
		till := i%2 == 0
		cells, truth := g.talhao(rng, till, false, 1, 0)
		det := DetectCell(cells[0].Obs, p)
		_, _, hit := matchFlags(det, truth)
		cs := prepare(cells[0].Obs, p, u)
		for k, tr := range truth {
			var kind string
			var ret float64
			for _, x := range sc.Tillage {
				if x.Date.Equal(tr) {
					kind, ret = x.Kind, x.Retention
				}
			}
			kk := kinds[kind]
			kk[1]++
			if hit[k] {
				kk[0]++
			}
			kinds[kind] = kk
			if hit[k] {
				continue
			}
			emerg := 9999
			for _, c := range sc.Cycles {
				if !c.Emergence.Before(tr) {
					emerg = int(c.Emergence.Sub(tr).Hours() / 24)
					break
				}
			}
			npost, npre := 0, 0
			for _, c := range cs {
				d := c.date.Sub(tr).Hours() / 24
				if d >= 0 && d <= 60 && c.green <= 0.6 {
					npost++
				}
				if d < 0 && d >= -30 {
					npre++
				}
			}
			key := fmt.Sprintf("post%d", min(npost, 3))
			if npre == 0 {
				key += "/nopre"
			}
			if sc.GroundStraw(tr.AddDate(0, 0, -1)) < 0.3 {
				key += "/lowstraw"
			}
			cat[key]++
			var sb strings.Builder
			fmt.Fprintf(&sb, "FN %s %s ret %.2f groundstraw %.2f→%.2f emerg +%dd:", tr.Format(time.DateOnly), kind, ret, sc.GroundStraw(tr.AddDate(0, 0, -1)), sc.GroundStraw(tr), emerg)
			for _, c := range cs {
				d := int(c.date.Sub(tr).Hours() / 24)
				if d < -25 || d > 60 {
					continue
				}
				fmt.Fprintf(&sb, " [%+d g%.2f s%.2f b%.2f r%.2f]", d, c.green, c.straw, c.soil, 1-c.groundSoil())
			}
			sg := newSigmas(cs, p)
			fmt.Fprintf(&sb, " σr %.3f σs %.3f", sg.r, sg.soil)
			for j := range cs {
				if !cs[j].date.Before(tr) && j > 0 {
					s5 := 999.0
					for k := j - 1; k >= 0; k-- {
						if cs[k].green >= 0.5 {
							s5 = cs[j].date.Sub(cs[k].date).Hours() / 24
							break
						}
					}
					fmt.Fprintf(&sb, " sinceG5 %.0f gap %.0f", s5, cs[j].date.Sub(cs[j-1].date).Hours()/24)
					w := why(cs, j, p, sg.r)
					if j+1 < len(cs) {
						w += "," + why(cs, j+1, p, sg.r)
					}
					cat["why "+w]++
					fmt.Fprintf(&sb, " WHY=%s", w)
					break
				}
			}
			for _, b := range det {
				d := int(b.After.Sub(tr).Hours() / 24)
				if d > -200 && d < 200 {
					fmt.Fprintf(&sb, " DET%+d", d)
				}
			}
			t.Log(sb.String())
		}
	}
	t.Log(kinds)
}

func envF(name string, v *float64) {
	if s := os.Getenv(name); s != "" {
		f, err := strconv.ParseFloat(s, 64)
		if err == nil {
			*v = f
		}
	}
}

func TestDebugTune(t *testing.T) {
	if !*tilldebug {
		t.Skip("-tilldebug not set")
	}
	p := debugParams()
	n, nT := 1000, 400
	if v := os.Getenv("NT"); v != "" {
		nT, _ = strconv.Atoi(v)
	}
	if v := os.Getenv("N"); v != "" {
		n, _ = strconv.Atoi(v)
	}
	cell, talhao, bs, _ := runAccuracyT(testGenerator(), p, n, nT, 1)
	t.Logf("\ncell   : %v\ntalhão : %v\n%v", cell, talhao, bs)
}

func TestDebugFP(t *testing.T) {
	if !*tilldebug {
		t.Skip("-tilldebug not set")
	}
	p := debugParams()
	back := 35 // days of observations listed before each false break
	envI("DBGBACK", &back)
	u, _ := newUnmixer(p)
	g := testGenerator().(*phenoGen)
	var sc *pheno.Scenario
	onScenario = func(s *pheno.Scenario) { sc = s }
	defer func() { onScenario = nil }()
	rng := rand.New(rand.NewPCG(1, 0x7a11a9e))
	for i := 0; i < 2000; i++ {
		till := i%2 == 0
		cells, truth := g.talhao(rng, till, false, 1, 0)
		det := DetectCell(cells[0].Obs, p)
		cs := prepare(cells[0].Obs, p, u)
		used := make([]bool, len(det))
		for _, tr := range truth {
			for k, d := range det {
				if used[k] || d.After.Before(tr) {
					continue
				}
				if d.Before.Before(tr) || d.After.Sub(tr) <= matchTol {
					used[k] = true
					break
				}
			}
		}
		for k, d := range det {
			if used[k] {
				continue
			}
			var sb strings.Builder
			fmt.Fprintf(&sb, "FP %s z %.1f pre %.2f post %.2f sig %.3f:", d.Date.Format(time.DateOnly), d.MagnitudeSigma, d.PreLevel, d.PostLevel, d.Sigma)
			for _, c := range sc.Cycles {
				if dd := c.Harvest.Sub(d.Date).Hours() / 24; dd > -120 && dd < 30 {
					fmt.Fprintf(&sb, " %s harv%+.0f", c.Crop, dd)
				}
				if dd := c.Emergence.Sub(d.Date).Hours() / 24; dd > -60 && dd < 30 {
					fmt.Fprintf(&sb, " %s emer%+.0f", c.Crop, dd)
				}
			}
			for _, x := range sc.Tillage {
				fmt.Fprintf(&sb, " TILL%+.0f", x.Date.Sub(d.Date).Hours()/24)
			}
			for jb := range cs {
				if cs[jb].date.Equal(d.Date) {
					_, okS := tillageAt(cs, jb, p, newSigmas(cs, p).soil, nil, nil)
					sg := newSigmas(cs, p)
					br, okR := strawDropAt(cs, jb, p, sg.r, make([]float64, 0, 10), make([]float64, 0, 10))
					fmt.Fprintf(&sb, " soilpath=%v rpath=%v %+v prev=%s", okS, okR, br, cs[jb-1].date.Format(time.DateOnly))
				}
			}
			fmt.Fprintf(&sb, " |")
			for _, c := range cs {
				dd := int(c.date.Sub(d.Date).Hours() / 24)
				if dd < -back || dd > 30 {
					continue
				}
				gt, st, _ := sc.Fractions(c.date)
				fmt.Fprintf(&sb, " [%+d g%.2f r%.2f b%.2f (g%.2f s%.2f)]", dd, c.green, c.strawShare(), c.soil, gt, st)
			}
			t.Log(sb.String())
		}
	}
}

// why names the first condition of the straw-drop test (strawDrop) that
// rejects cs[j] as the first post-break observation (with the z of the
// shift when that is the one), or "ok".
func why(cs []clearObs, j int, p Params, sigma float64) string {
	b, w := strawDrop(cs, j, p, sigma, make([]float64, 0, len(cs)), make([]float64, 0, 16))
	switch w {
	case "":
		w = "ok"
	case "z":
		w = fmt.Sprintf("z%.0f", b.MagnitudeSigma)
	}
	return w
}

// debugParams returns DefaultParams with the break tests' thresholds
// (Params.tune, at their defaults) and some public fields overridden from
// the environment.
func debugParams() Params {
	t := tuning{}.withDefaults()
	envF("RMAXG", &t.rMaxGreen)
	envF("RMIN", &t.rMinStraw)
	envF("RRATIO", &t.rRatio)
	envF("RGAP", &t.rMaxGap)
	envF("RPREG", &t.rPreGreen)
	envF("RCONFTOL", &t.rConfirmTol)
	envF("RHALF", &t.rHalfLife)
	envF("RGAPL", &t.rMaxGapLong)
	envF("TRIM", &t.levelTrim)
	envF("Z1F", &t.firstObsK)
	envF("CONFK", &t.confirmK)
	envF("SZ1F", &t.soilFirstK)
	envI("REXTRA", &t.rExtraPre)
	envF("RNEWG", &t.rNewGreen)
	envF("RDROP", &t.rDroppedRatio)
	envF("RDEEP", &t.rDeepRatio)
	envI("RPREMIN", &t.rPreMin)
	envF("MDNDVI", &t.mdBareNDVI)
	envF("MDGAP", &t.mdMaxGap)
	envF("MDPOSTD", &t.mdPostDays)
	envI("MDPOSTN", &t.mdPostObs)
	envI("MDPOSTMIN", &t.mdPostMin)
	envF("MDWET", &t.mdWet)
	envF("MDSTEP", &t.mdStep)
	envF("MDCNDVI", &t.mdCanopyNDVI)
	envF("MDCDAYS", &t.mdCanopyDays)
	envF("MDREL", &t.mdRel)
	p := DefaultParams()
	p.tune = t
	envI("PREOBS", &p.PreObs)
	envI("PREWIN", &p.PreWindowDays)
	envI("PERSIST", &p.PersistObs)
	envF("K", &p.K)
	envF("CELLK", &p.CellK)
	return p
}

func envI(name string, v *int) {
	if s := os.Getenv(name); s != "" {
		*v, _ = strconv.Atoi(s)
	}
}

// TestDebugBorder lists the talhão events of border-only negatives that fall
// near the border revolving, and whether they remain without border cells.
func TestDebugBorder(t *testing.T) {
	if !*tilldebug {
		t.Skip("-tilldebug not set")
	}
	p := debugParams()
	u, _ := newUnmixer(p)
	g := testGenerator().(*phenoGen)
	var sc *pheno.Scenario
	onScenario = func(s *pheno.Scenario) { sc = s }
	defer func() { onScenario = nil }()
	rng := rand.New(rand.NewPCG(1, 0x7a11a9e))
	for i := 0; i < 2*1000; i++ {
		g.talhao(rng, i%2 == 0, false, 1, 0)
	}
	for i := 0; i < 2*1000; i++ {
		till := i%2 == 0
		borderOnly := !till && i%4 == 1
		cells, _ := g.talhao(rng, till, borderOnly, 6, 3)
		if !borderOnly {
			continue
		}
		ev := Detect(cells, p)
		for _, e := range ev {
			d := e.Date.Sub(g.borderDate())
			if d <= -30*24*time.Hour || d >= 60*24*time.Hour {
				continue
			}
			inner := Detect(cells[:6], p)
			t.Logf("talhão %d: event %s (border %s, %+.0f d) n=%d/%d int, interior-only events %d", i, e.Date.Format(time.DateOnly), g.borderDate().Format(time.DateOnly), d.Hours()/24, e.NInterior, e.NCells, len(inner))
			for k := 0; k < 6; k++ {
				cs := prepare(cells[k].Obs, p, u)
				var sb strings.Builder
				for _, c := range cs {
					dd := int(c.date.Sub(e.Date).Hours() / 24)
					if dd < -30 || dd > 25 {
						continue
					}
					gt, st, _ := sc.Fractions(c.date)
					fmt.Fprintf(&sb, " [%+d g%.2f r%.2f (g%.2f s%.2f)]", dd, c.green, c.strawShare(), gt, st)
				}
				t.Logf("  cell %d:%s", k, sb.String())
			}
		}
	}
}
