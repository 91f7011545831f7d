package calibrate

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html/template"
	"image/color"
	"io"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/distfeat/distfeat/spec"
)

// WriteReport writes one self-contained HTML page: the proposal with its rules, the
// self-check, and plots rendered here as PNG (data URIs; no script, no external resource):
// the exact kernel heat map of the sample per family, the histogram of within-set distances
// with the mmd bandwidths marked, the histograms of set-to-set distances with each sigma
// marked, the mmd bandwidth criterion, and approximate vs exact kernel per family; with a
// marginal-transfer search (r.Marginal), its decision, σ grid and D sweep as tables.
func (r *Result) WriteReport(w io.Writer) error {
	var specJSON bytes.Buffer
	if err := json.Indent(&specJSON, r.Spec.CanonicalJSON(), "", "  "); err != nil {
		return err
	}
	data := reportData{Result: r, SpecJSON: specJSON.String(), SpecID: r.Spec.ID(), MT: newMTReport(r.Marginal)}
	add := func(title string, p *plot.Plot, err error) error {
		if err != nil {
			return fmt.Errorf("%s: %w", title, err)
		}
		uri, err := pngURI(p)
		if err != nil {
			return fmt.Errorf("%s: %w", title, err)
		}
		data.Plots = append(data.Plots, reportPlot{Title: title, URI: template.URL(uri)})
		return nil
	}
	var mmdMarks []Mark
	for _, f := range r.Families {
		if f.Kind == spec.KindMMD {
			mmdMarks = append(mmdMarks, f.Marks[:2]...)
		}
	}
	p, err := histogramPlot("within-set distances (normalised units)", r.WithinDist, mmdMarks)
	if err := add("Within-set distances", p, err); err != nil {
		return err
	}
	for _, f := range r.Families {
		if f.Gram == nil {
			continue
		}
		p, err := heatPlot(f.Name+": exact kernel between sampled sets", f.Gram)
		if err := add(f.Name+": kernel heat map", p, err); err != nil {
			return err
		}
		if len(f.Grid) > 0 && len(f.Marks) >= 2 {
			p, err := spreadPlot(f)
			if err := add(f.Name+": bandwidth criterion", p, err); err != nil {
				return err
			}
		}
		if len(f.Between) > 0 {
			p, err := histogramPlot(f.Name+": distances between sets", f.Between, f.Marks[len(f.Marks)-1:])
			if err := add(f.Name+": set-to-set distances", p, err); err != nil {
				return err
			}
		}
	}
	for _, c := range r.Checks {
		if c.Exact || len(c.Truth) == 0 {
			continue
		}
		p, err := scatterPlot(c)
		if err := add(c.Family+": self-check", p, err); err != nil {
			return err
		}
	}
	tmpl, err := template.New("report").Parse(reportHTML)
	if err != nil {
		return fmt.Errorf("report template: %w", err) // a constant: cannot fail short of a bug
	}
	return tmpl.Execute(w, data)
}

type reportPlot struct {
	Title string
	URI   template.URL
}

type reportData struct {
	*Result
	SpecJSON, SpecID string
	Plots            []reportPlot
	MT               *mtReport // the marginal-transfer search, nil without one
}

func pngURI(p *plot.Plot) (string, error) {
	wt, err := p.WriterTo(6*vg.Inch, 4*vg.Inch, "png")
	if err != nil {
		return "", err
	}
	var b bytes.Buffer
	if _, err := wt.WriteTo(&b); err != nil {
		return "", err
	}
	return "data:image/png;base64," + base64.StdEncoding.EncodeToString(b.Bytes()), nil
}

var markColors = []color.Color{
	color.RGBA{R: 214, G: 39, B: 40, A: 255},
	color.RGBA{R: 31, G: 119, B: 180, A: 255},
	color.RGBA{R: 44, G: 160, B: 44, A: 255},
}

// histogramPlot is a histogram of xs with vertical lines at the marks.
func histogramPlot(title string, xs []float64, marks []Mark) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "distance"
	p.Y.Label.Text = "count"
	if len(xs) == 0 {
		return p, nil
	}
	h, err := plotter.NewHist(plotter.Values(xs), 50)
	if err != nil {
		return nil, err
	}
	h.FillColor = color.RGBA{R: 150, G: 170, B: 200, A: 255}
	p.Add(h)
	top := 0.0
	for _, b := range h.Bins {
		top = math.Max(top, b.Weight)
	}
	for k, m := range marks {
		l, err := plotter.NewLine(plotter.XYs{{X: m.Value, Y: 0}, {X: m.Value, Y: top * 1.05}})
		if err != nil {
			return nil, err
		}
		l.Color = markColors[k%len(markColors)]
		l.Width = vg.Points(2)
		l.Dashes = []vg.Length{vg.Points(6), vg.Points(3)}
		p.Add(l)
		p.Legend.Add(fmt.Sprintf("%s %.3g", m.Label, m.Value), l)
	}
	p.Legend.Top = true
	return p, nil
}

// gram is an S×S matrix as a GridXYZ (row 0 at the top).
type gram struct {
	z []float64
	n int
}

func (g gram) Dims() (int, int)   { return g.n, g.n }
func (g gram) Z(c, r int) float64 { return g.z[(g.n-1-r)*g.n+c] }
func (g gram) X(c int) float64    { return float64(c) }
func (g gram) Y(r int) float64    { return float64(g.n - 1 - r) }

func heatPlot(title string, z []float64) (*plot.Plot, error) {
	n := int(math.Round(math.Sqrt(float64(len(z)))))
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "set"
	p.Y.Label.Text = "set"
	pal := moreland.SmoothBlueRed().Palette(255)
	h := plotter.NewHeatMap(gram{z: z, n: n}, pal)
	p.Add(h)
	p.Title.Text = fmt.Sprintf("%s (blue %.3g … red %.3g)", title, h.Min, h.Max)
	return p, nil
}

// spreadPlot shows a bandwidth criterion over its candidate grid: the variance of the
// set-to-set kernel values (mmd) or the leave-one-out log-likelihood of the KDE (hdd).
func spreadPlot(f FamilyResult) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = f.Name + ": estimated sd of the true kernel over pairs of sets"
	p.Y.Label.Text = "ratio"
	if f.Kind == spec.KindHDD {
		p.Title.Text = f.Name + ": estimated R² against the true kernel"
		p.Y.Label.Text = "R² (coefficient kernel)"
	}
	p.X.Label.Text = "bandwidth (log scale)"
	var xy plotter.XYs
	var ys []float64
	for k := range f.Grid {
		if y := f.Spread[k]; !math.IsNaN(y) && !math.IsInf(y, 0) {
			xy = append(xy, plotter.XY{X: f.Grid[k], Y: y})
			ys = append(ys, y)
		}
	}
	if len(xy) == 0 { // nothing could be measured (e.g. one set): an empty plot
		return p, nil
	}
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.DefaultTicks{} // log ticks label only powers of ten, often none here
	l, s, err := plotter.NewLinePoints(xy)
	if err != nil {
		return nil, err
	}
	p.Add(l, s)
	for k, m := range f.Marks[:2] {
		v, err := plotter.NewLine(plotter.XYs{{X: m.Value, Y: minOf(ys)}, {X: m.Value, Y: maxOf(ys)}})
		if err != nil {
			return nil, err
		}
		v.Color = markColors[k%len(markColors)]
		v.Dashes = []vg.Length{vg.Points(6), vg.Points(3)}
		p.Add(v)
		p.Legend.Add(fmt.Sprintf("%s %.3g", m.Label, m.Value), v)
	}
	return p, nil
}

// scatterPlot is approximate vs exact kernel for one family's self-check.
func scatterPlot(c Check) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s: features vs exact kernel, R² = %.4f", c.Family, c.R2)
	p.X.Label.Text = "exact kernel"
	p.Y.Label.Text = "feature inner product"
	xy := make(plotter.XYs, len(c.Truth))
	for k := range c.Truth {
		xy[k] = plotter.XY{X: c.Truth[k], Y: c.Approx[k]}
	}
	s, err := plotter.NewScatter(xy)
	if err != nil {
		return nil, err
	}
	s.GlyphStyle.Radius = vg.Points(1.5)
	lo, hi := math.Min(minOf(c.Truth), minOf(c.Approx)), math.Max(maxOf(c.Truth), maxOf(c.Approx))
	diag, err := plotter.NewLine(plotter.XYs{{X: lo, Y: lo}, {X: hi, Y: hi}})
	if err != nil {
		return nil, err
	}
	diag.Color = markColors[0]
	p.Add(s, diag)
	p.Legend.Add("y = x", diag)
	p.Legend.Top = true
	p.Legend.Left = true
	return p, nil
}

func maxOf(x []float64) float64 {
	m := math.Inf(-1)
	for _, v := range x {
		m = math.Max(m, v)
	}
	return m
}

func minOf(x []float64) float64 {
	m := math.Inf(1)
	for _, v := range x {
		m = math.Min(m, v)
	}
	return m
}

// reportHTML is the report's html/template, parsed when a report is written (not at every
// start of the binary).
const reportHTML = `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>distfeat calibrate report</title>
<style>
body{font-family:system-ui,sans-serif;margin:2em;max-width:1300px;color:#222}
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#eef}td.num{text-align:right;font-family:monospace}.rule{font-size:90%;color:#444}
.plots{display:flex;flex-wrap:wrap;gap:12px}figure{margin:0}figcaption{font-weight:600}
pre{background:#f6f6f6;padding:1em;overflow:auto}
table.mt-decision th{white-space:nowrap}table.mt-grid td.num{min-width:6em}table.mt-grid th.num{text-align:right}tr.pool>*{border-bottom:2px solid #888}td.mt-cell.chosen{outline:3px solid #d62728;outline-offset:-3px;font-weight:700}
td.mt-cell.rowbest .best{color:#8a5a00}span.se{color:#666;font-size:85%;margin-left:.3em}tr.chosen td{background:#fde8e8;font-weight:700}
</style></head><body>
<h1>distfeat calibrate</h1>
<p>{{.Sets}} sets read, {{.Sampled}} sampled ({{.Points}} points); dim {{.Spec.Dim}}; spec_id <code>{{.SpecID}}</code>.</p>
{{with .Warnings}}<h2>Warnings</h2>
<ul class="warnings">{{range .}}<li>{{.}}</li>
{{end}}</ul>{{end}}
<h2>Self-check</h2>
<p>Approximate Gram matrix (inner products of the proposed features) against the kernel between the true distributions, estimated from the sample (a finer reference, its noise measured by splitting each set in halves), over every pair of sampled sets.</p>
<table><tr><th>family</th><th>R²</th><th>max |error|</th><th>pairs</th><th>exact kernel</th></tr>
{{range .Checks}}<tr><td>{{.Family}}</td>{{if .Exact}}<td colspan="3">exact (no random stage)</td>{{else}}<td class="num">{{printf "%.4f" .R2}}</td><td class="num">{{printf "%.3f" .MaxErr}}</td><td class="num">{{.Pairs}}</td>{{end}}<td>{{.Kernel}}</td></tr>
{{end}}</table>
{{if .Trials}}<h2>Alternatives tried</h2>
{{if .Labelled}}<p>{{.Labelled}} labelled sets ({{.Labels}}); accuracies are cross-validated ridge on the features.</p>{{end}}
<table><tr><th>family</th><th>setting</th><th>score</th><th>what</th><th>chosen</th></tr>
{{range .Trials}}<tr><td>{{.Family}}</td><td>{{.Setting}}</td><td class="num">{{printf "%.4f" .Score}}</td><td>{{.What}}</td><td>{{if .Chosen}}✔{{end}}</td></tr>
{{end}}</table>{{end}}
<h2>Proposal</h2>
<table><tr><th>field</th><th>value</th><th>rule</th></tr>
{{range .Notes}}<tr><td><code>{{.Field}}</code></td><td class="num">{{.Value}}</td><td class="rule">{{.Rule}}</td></tr>
{{end}}</table>
{{with .MT}}<h2 id="marginal-transfer">Per-point features (marginal transfer)</h2>
<p>The <code>marginal_transfer</code> family <code>{{.Family.Name}}</code> was chosen by cross-validation over the labelled sets: {{.Sets}} sets in {{.Folds}} folds, whole sets held out (never points of a set); a one-vs-rest ridge classifier on the per-point features of the other folds, each set weighted equally, is scored by its accuracy on the held-out sets' points. The grids are built on the median ‖Ψ(P)−Ψ(P′)‖ between sets, {{printf "%.4g" .MedianPsi}} (σ<sub>P</sub>), and the median distance between two points of a set, {{printf "%.4g" .MedianX}} (σ<sub>X</sub>, normalised units).</p>
<table class="mt-decision"><tr><th>proposed</th><td>{{if .Chosen.Pooling}}<strong>pooling</strong> (σ<sub>P</sub> = ∞: the point's features alone){{else}}<strong>marginal transfer</strong> (Ψ(P) from <code>{{.Family.SetFamily}}</code>): σ<sub>P</sub> = {{printf "%.4g" .Chosen.SigmaP}}{{end}}, σ<sub>X</sub> = {{printf "%.4g" .Chosen.SigmaX}}, D = {{.Chosen.Features}}, λ = {{printf "%.0e" .Chosen.Lambda}}; held-out accuracy {{printf "%.3f" .Chosen.Accuracy}} ± {{printf "%.3f" .Chosen.SE}}</td></tr>
<tr><th>best pooled</th><td>{{printf "%.3f" .BestPooling.Accuracy}} ± {{printf "%.3f" .BestPooling.SE}} (σ<sub>X</sub> = {{printf "%.4g" .BestPooling.SigmaX}})</td></tr>
<tr><th>best marginal transfer</th><td>{{printf "%.3f" .BestMarginal.Accuracy}} ± {{printf "%.3f" .BestMarginal.SE}} (σ<sub>P</sub> = {{printf "%.4g" .BestMarginal.SigmaP}}, σ<sub>X</sub> = {{printf "%.4g" .BestMarginal.SigmaX}})</td></tr>
<tr><th>rule</th><td class="rule">{{.Rule}}</td></tr></table>
<h3>Held-out accuracy over the σ grid (D = {{.GridD}})</h3>
<table class="mt-grid"><tr><th>σ<sub>P</sub> \ σ<sub>X</sub></th>{{range .SigmaX}}<th class="num">{{printf "%.4g" .}}</th>{{end}}</tr>
{{range .Rows}}<tr{{if .Pooling}} class="pool"{{end}}><th>{{.Label}}</th>{{range .Cells}}{{if .Present}}<td class="num mt-cell{{if .Chosen}} chosen{{end}}{{if .RowBest}} rowbest{{end}}" style="{{.Style}}" data-sp="{{.SP}}" data-sx="{{.SX}}" title="λ = {{printf "%.0e" .Lambda}}">{{printf "%.3f" .Accuracy}}<span class="se">±{{printf "%.3f" .SE}}</span>{{if .RowBest}}<span class="best"> ★</span>{{end}}</td>{{else}}<td class="num">—</td>{{end}}{{end}}</tr>
{{end}}</table>
<p class="rule">Each cell: mean held-out accuracy over the sets ± its standard error, at the cell's best ridge penalty λ (hover for it); shaded from the grid's lowest accuracy (white) to its highest (green). ★ the best of its row; red border: the proposed σ's. The pooling row is the constant set kernel (σ<sub>P</sub> = ∞).</p>
<h3>Feature count D at the proposed σ's</h3>
<table><tr><th>D</th><th>λ</th><th>accuracy</th><th>SE</th><th>proposed</th></tr>
{{range .Sweep}}<tr{{if .Chosen}} class="chosen"{{end}}><td class="num">{{.Features}}</td><td class="num">{{printf "%.0e" .Lambda}}</td><td class="num">{{printf "%.3f" .Accuracy}}</td><td class="num">{{printf "%.3f" .SE}}</td><td>{{if .Chosen}}✔{{end}}</td></tr>
{{end}}</table>
<p class="rule">The smallest D within 0.005 of the best accuracy at the proposed σ's is proposed.</p>
{{end}}<h2>Plots</h2>
<div class="plots">{{range .Plots}}<figure><figcaption>{{.Title}}</figcaption><img src="{{.URI}}" width="576" height="384" alt="{{.Title}}"></figure>
{{end}}</div>
<h2>Spec</h2>
<pre>{{.SpecJSON}}</pre>
</body></html>
`
