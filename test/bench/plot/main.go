// Command plot draws, from one or several results.json files `make bench` writes, the single-PMW rows
// ("N = ...") against the number of works: the fan-out time (performance.png), the contenders' memory
// (performance-memory.png) and the template update time (performance-update.png). It is its own module so
// the project's go.mod does not carry gonum/plot.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"image/color"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

type step struct {
	Seconds float64 `json:"seconds"`
	Err     string  `json:"error"`
}

type row struct {
	Contender string `json:"contender"`
	Kind      string `json:"kind"`
	N         int    `json:"n"`
	FanOut    *step  `json:"fanOut"`
	Update    *step  `json:"update"`
	HWM       int64  `json:"peakRSSBytes"`
	RSSSteady int64  `json:"steadyRSSBytes"`
}

type results struct {
	Date  string `json:"date"`
	CPU   string `json:"cpu"`
	Cores int    `json:"cores"`
	Rows  []row  `json:"rows"`
}

// key is a single-PMW row: a contender at a number of clusters.
type key struct {
	contender string
	n         int
}

// merged are the single-PMW rows of several runs, each key's rows from the last run that has it (several
// rows when that run repeated the key), and the machines and dates of the runs.
type merged struct {
	rows            map[key][]row
	machines, dates []string
}

func main() {
	in := flag.String("in", "bin/bench/results.json", "results.json of a bench run; several, comma-separated, are merged by contender and clusters, the later file winning")
	dir := flag.String("dir", "docs", "directory to write performance.png, performance-memory.png and performance-update.png into")
	flag.Parse()
	if err := run(strings.Split(*in, ","), *dir); err != nil {
		fmt.Fprintln(os.Stderr, "plot:", err)
		os.Exit(1)
	}
}

func run(paths []string, dir string) error {
	var runs []results
	for _, path := range paths {
		data, err := os.ReadFile(strings.TrimSpace(path))
		if err != nil {
			return err
		}
		var res results
		if err := json.Unmarshal(data, &res); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		runs = append(runs, res)
	}
	m := merge(runs)
	for _, c := range []chart{fanOut(), memory(), update()} {
		if err := c.draw(m, filepath.Join(dir, c.file)); err != nil {
			return err
		}
	}
	return nil
}

// merge keeps the single-PMW rows of the runs by (contender, clusters); a key that is in several runs takes
// the rows of the last of them.
func merge(runs []results) merged {
	m := merged{rows: map[key][]row{}}
	for _, res := range runs {
		fresh := map[key][]row{}
		for _, r := range res.Rows {
			if r.Kind == "clusters" {
				k := key{r.Contender, r.N}
				fresh[k] = append(fresh[k], r)
			}
		}
		for k, rs := range fresh {
			m.rows[k] = rs
		}
		m.machines = appendNew(m.machines, fmt.Sprintf("%s, %d cores", res.CPU, res.Cores))
		m.dates = appendNew(m.dates, res.Date[:min(len(res.Date), 10)])
	}
	return m
}

// points are the contender's values against works (a single-PMW row writes one work per cluster), a key
// with several rows at their median; rows with no value (zero, or a failed step) are left out.
func (m merged) points(contender string, value func(row) float64) plotter.XYs {
	var pts plotter.XYs
	for k, rs := range m.rows {
		if k.contender != contender {
			continue
		}
		var vs []float64
		for _, r := range rs {
			if v := value(r); v > 0 {
				vs = append(vs, v)
			}
		}
		if len(vs) > 0 {
			pts = append(pts, plotter.XY{X: float64(k.n), Y: median(vs)})
		}
	}
	sort.Slice(pts, func(i, j int) bool { return pts[i].X < pts[j].X })
	return pts
}

// seconds is a step's time, 0 when the row has no such step or it failed.
func seconds(s func(row) *step) func(row) float64 {
	return func(r row) float64 {
		if st := s(r); st != nil && st.Err == "" {
			return st.Seconds
		}
		return 0
	}
}

func mib(b func(row) int64) func(row) float64 {
	return func(r row) float64 { return float64(b(r)) / (1 << 20) }
}

var (
	blue   = color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 255}
	red    = color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 255}
	green  = color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 255}
	purple = color.RGBA{R: 0x94, G: 0x67, B: 0xbd, A: 255}

	fanOutStep = seconds(func(r row) *step { return r.FanOut })
	updateStep = seconds(func(r row) *step { return r.Update })
)

// line is one contender's values in a chart.
type line struct {
	label, contender string
	value            func(row) float64
	c                color.RGBA
	shape            draw.GlyphDrawer
	dashed           bool
}

// chart is one PNG: its lines against works on a log x axis, a log y axis when logY, the y axis labelled at
// yTicks; value formats a value in the legend.
type chart struct {
	file, title, y, value string
	logY                  bool
	yTicks                []float64
	lines                 []line
}

var secondTicks = []float64{0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000}

func fanOut() chart {
	return chart{
		file: "performance.png", title: "Fan-out: PMW (or MWRS) created to every ManifestWork written", y: "seconds", value: "%.1f s", logY: true, yTicks: secondTicks,
		lines: []line{
			{"PlacementManifestWork manager (default flags)", "manager", fanOutStep, blue, draw.CircleGlyph{}, false},
			{"OCM ManifestWorkReplicaSet controller v1.2.0 (default flags)", "OCM MWRS", fanOutStep, red, draw.TriangleGlyph{}, false},
			{"limit: plain client, the manager's works, all creates at once", "limit", fanOutStep, green, draw.SquareGlyph{}, false},
			{"limit: plain client, plain works (as OCM writes them)", "limit plain", fanOutStep, purple, draw.BoxGlyph{}, true},
			{"plain client, 64 creates in flight", "limit-64", fanOutStep, green, draw.RingGlyph{}, true},
			{"manager with --kube-api-qps=-1", "manager --kube-api-qps=-1", fanOutStep, blue, draw.RingGlyph{}, true},
		},
	}
}

func memory() chart {
	peak, steady := mib(func(r row) int64 { return r.HWM }), mib(func(r row) int64 { return r.RSSSteady })
	return chart{
		file: "performance-memory.png", title: "Memory of the contender's process: peak and steady-state RSS", y: "MiB", value: "%.0f MiB",
		yTicks: []float64{0, 50, 100, 150, 200, 250, 300, 350, 400, 500, 600, 800, 1000, 1500, 2000},
		lines: []line{
			{"manager: peak RSS", "manager", peak, blue, draw.CircleGlyph{}, false},
			{"manager: steady RSS", "manager", steady, blue, draw.RingGlyph{}, true},
			{"OCM MWRS controller: peak RSS", "OCM MWRS", peak, red, draw.TriangleGlyph{}, false},
			{"OCM MWRS controller: steady RSS", "OCM MWRS", steady, red, draw.RingGlyph{}, true},
		},
	}
}

func update() chart {
	return chart{
		file: "performance-update.png", title: "Template update: spec changed to every ManifestWork updated", y: "seconds", value: "%.1f s", logY: true, yTicks: secondTicks,
		lines: []line{
			{"PlacementManifestWork manager (default flags)", "manager", updateStep, blue, draw.CircleGlyph{}, false},
			{"OCM ManifestWorkReplicaSet controller v1.2.0 (default flags)", "OCM MWRS", updateStep, red, draw.TriangleGlyph{}, false},
			{"limit: plain client updating the reported works, all at once", "limit", updateStep, green, draw.SquareGlyph{}, false},
		},
	}
}

// draw writes the chart's PNG; each line's legend ends with its value at its largest number of works.
func (c chart) draw(m merged, out string) error {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s\n%s; runs of %s", c.title, strings.Join(m.machines, "; "), strings.Join(m.dates, ", "))
	p.X.Label.Text = "works (clusters, one ManifestWork each)"
	p.Y.Label.Text = c.y
	p.X.Scale = plot.LogScale{}
	if c.logY {
		p.Y.Scale = plot.LogScale{}
	}
	p.Legend.Top, p.Legend.Left = true, true
	p.Add(plotter.NewGrid())
	var works []float64
	for _, l := range c.lines {
		pts := m.points(l.contender, l.value)
		if len(pts) == 0 {
			continue
		}
		lp, pp, err := plotter.NewLinePoints(pts)
		if err != nil {
			return err
		}
		lp.Color, pp.Color, pp.Shape = l.c, l.c, l.shape
		lp.Width, pp.Radius = vg.Points(1.5), vg.Points(3.5)
		if l.dashed {
			lp.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
		}
		p.Add(lp, pp)
		last := pts[len(pts)-1]
		p.Legend.Add(fmt.Sprintf("%s ("+c.value+" at %g works)", l.label, last.Y, last.X), lp, pp)
		for _, pt := range pts {
			works = append(works, pt.X)
		}
	}
	if len(works) == 0 {
		return fmt.Errorf("%s: no single-PMW rows to draw", c.file)
	}
	p.X.Tick.Marker = ticks(works...)
	// Labels up to the highest point only, so that no grid line crosses the legend above it.
	var ys []float64
	for _, y := range c.yTicks {
		if y <= p.Y.Max*1.1 {
			ys = append(ys, y)
		}
	}
	p.Y.Tick.Marker = ticks(ys...)
	// Room around the points, and above them for the legend.
	p.X.Min, p.X.Max = p.X.Min/1.25, p.X.Max*1.25
	if c.logY {
		p.Y.Min, p.Y.Max = p.Y.Min/1.25, p.Y.Max*2.5
	} else {
		p.Y.Min, p.Y.Max = 0, p.Y.Max*1.25
	}
	return p.Save(8*vg.Inch, 5*vg.Inch, out)
}

// ticks labels exactly the given values.
func ticks(values ...float64) plot.ConstantTicks {
	seen := map[float64]bool{}
	var out plot.ConstantTicks
	for _, v := range values {
		if !seen[v] {
			seen[v] = true
			out = append(out, plot.Tick{Value: v, Label: fmt.Sprintf("%g", v)})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Value < out[j].Value })
	return out
}

func appendNew(xs []string, x string) []string {
	for _, y := range xs {
		if y == x {
			return xs
		}
	}
	return append(xs, x)
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
