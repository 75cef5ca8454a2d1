// Command plot draws the fan-out time against the number of clusters, for the manager, OCM's
// ManifestWorkReplicaSet controller and the limit, from the results.json `make bench` writes. It is its own
// module so the project's go.mod does not carry gonum/plot.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"image/color"
	"os"
	"sort"

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
}

type results struct {
	Date  string `json:"date"`
	CPU   string `json:"cpu"`
	Cores int    `json:"cores"`
	Rows  []row  `json:"rows"`
}

func main() {
	in := flag.String("in", "bin/bench/results.json", "results.json of a bench run")
	out := flag.String("out", "docs/performance.png", "PNG to write")
	flag.Parse()
	if err := draw1(*in, *out); err != nil {
		fmt.Fprintln(os.Stderr, "plot:", err)
		os.Exit(1)
	}
}

func draw1(in, out string) error {
	data, err := os.ReadFile(in)
	if err != nil {
		return err
	}
	var res results
	if err := json.Unmarshal(data, &res); err != nil {
		return err
	}
	p := plot.New()
	p.Title.Text = fmt.Sprintf("Fan-out: PMW (or MWRS) created to every ManifestWork written\n%s, %d cores, %s", res.CPU, res.Cores, res.Date[:10])
	p.X.Label.Text = "clusters (one ManifestWork each)"
	p.Y.Label.Text = "seconds"
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.Y.Tick.Marker = ticks(0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500)
	p.Legend.Top, p.Legend.Left = true, true
	p.Add(plotter.NewGrid())

	blue, red, green := color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 255}, color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 255}, color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 255}
	series := []struct {
		name, label string
		c           color.RGBA
		shape       draw.GlyphDrawer
		dashed      bool
	}{
		{"manager", "PlacementManifestWork manager (default flags)", blue, draw.CircleGlyph{}, false},
		{"OCM MWRS", "OCM ManifestWorkReplicaSet controller v1.2.0 (default flags)", red, draw.TriangleGlyph{}, false},
		{"limit", "limit: plain client, all creates at once, no rate limit", green, draw.SquareGlyph{}, false},
		{"limit-64", "plain client, 64 creates in flight, no rate limit", green, draw.BoxGlyph{}, true},
		{"manager --kube-api-qps=-1", "manager with --kube-api-qps=-1 (no client rate limit)", blue, draw.RingGlyph{}, true},
	}
	var ns []float64
	for _, r := range res.Rows {
		if r.Kind == "clusters" {
			ns = append(ns, float64(r.N))
		}
	}
	p.X.Tick.Marker = ticks(ns...)
	drawn := 0
	for _, s := range series {
		// A row that ran several times is drawn at the median of its runs, as the tables show it.
		byN := map[int][]float64{}
		for _, r := range res.Rows {
			if r.Contender == s.name && r.Kind == "clusters" && r.FanOut != nil && r.FanOut.Err == "" && r.FanOut.Seconds > 0 {
				byN[r.N] = append(byN[r.N], r.FanOut.Seconds)
			}
		}
		var pts plotter.XYs
		for n, ts := range byN {
			pts = append(pts, plotter.XY{X: float64(n), Y: median(ts)})
		}
		if len(pts) == 0 {
			continue
		}
		sort.Slice(pts, func(i, j int) bool { return pts[i].X < pts[j].X })
		line, points, err := plotter.NewLinePoints(pts)
		if err != nil {
			return err
		}
		line.Color, points.Color, points.Shape = s.c, s.c, s.shape
		line.Width, points.Radius = vg.Points(1.5), vg.Points(3.5)
		if s.dashed {
			line.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
		}
		p.Add(line, points)
		p.Legend.Add(s.label, line, points)
		drawn++
	}
	if drawn == 0 {
		return fmt.Errorf("no fan-out rows in %s", in)
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

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
