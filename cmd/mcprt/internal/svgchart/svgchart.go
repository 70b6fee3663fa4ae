// Package svgchart draws small line charts as standalone SVG: the status
// page's latency percentiles and mcprt bench -svg's latency distributions.
// It writes no script and no style sheet, and escapes every text it is
// given (a series or axis name may come from a backend's configuration),
// so its output can be inlined in an HTML page as it is.
package svgchart

import (
	"fmt"
	"html"
	"math"
	"strconv"
	"strings"
)

// Point is one point of a series, in the chart's units.
type Point struct{ X, Y float64 }

// Series is one line of a chart.
type Series struct {
	Name   string
	Points []Point
}

// Chart is a line chart. The axes span the points given (Y from 0 unless
// LogY); LogX and LogY put an axis on a logarithmic scale (its values must
// then be positive: the others are left out).
type Chart struct {
	Title          string
	XLabel, YLabel string
	Width, Height  int // pixels; 0: 480 by 240
	LogX, LogY     bool
	// XFrom and XTo, when XFrom < XTo, fix the X axis's span (points
	// outside it are left out); otherwise it spans the points.
	XFrom, XTo float64
	Series     []Series
}

// palette is the series' colours, in order, distinguishable in print.
var palette = []string{"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2"}

// margins around the plot, in pixels: room for the tick labels, the axis
// labels and the legend.
const (
	left, right, top, bottom = 56, 12, 24, 40
)

// SVG returns the chart as an <svg> element.
func (c Chart) SVG() string {
	w, h := c.Width, c.Height
	if w <= 0 {
		w = 480
	}
	if h <= 0 {
		h = 240
	}
	x := axis{log: c.LogX, lo: math.Inf(1), hi: math.Inf(-1)}
	y := axis{log: c.LogY, lo: math.Inf(1), hi: math.Inf(-1)}
	if !c.LogY {
		y.lo = 0
	}
	fixed := c.XFrom < c.XTo
	inX := func(v float64) bool { return !fixed || v >= c.XFrom && v <= c.XTo }
	for _, s := range c.Series {
		for _, p := range s.Points {
			if x.ok(p.X) && y.ok(p.Y) && inX(p.X) {
				x.take(p.X)
				y.take(p.Y)
			}
		}
	}
	if fixed {
		x.lo, x.hi = c.XFrom, c.XTo
	}
	x.settle()
	y.settle()
	pw, ph := float64(w-left-right), float64(h-top-bottom)
	px := func(v float64) float64 { return left + x.frac(v)*pw }
	py := func(v float64) float64 { return top + (1-y.frac(v))*ph }

	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" role="img" font-family="sans-serif" font-size="11">`, w, h, w, h)
	if c.Title != "" {
		fmt.Fprintf(&b, `<title>%s</title><text x="%d" y="14" font-weight="bold">%s</text>`, esc(c.Title), left, esc(c.Title))
	}
	// The frame, and the ticks with their labels.
	fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%s" height="%s" fill="none" stroke="#999"/>`, left, top, num(pw), num(ph))
	for _, t := range x.ticks() {
		fmt.Fprintf(&b, `<line x1="%s" y1="%d" x2="%s" y2="%s" stroke="#ddd"/><text x="%s" y="%s" text-anchor="middle">%s</text>`,
			num(px(t)), top, num(px(t)), num(top+ph), num(px(t)), num(top+ph+14), label(t))
	}
	for _, t := range y.ticks() {
		fmt.Fprintf(&b, `<line x1="%d" y1="%s" x2="%s" y2="%s" stroke="#ddd"/><text x="%d" y="%s" text-anchor="end">%s</text>`,
			left, num(py(t)), num(left+pw), num(py(t)), left-4, num(py(t)+4), label(t))
	}
	if c.XLabel != "" {
		fmt.Fprintf(&b, `<text x="%s" y="%d" text-anchor="middle">%s</text>`, num(left+pw/2), h-6, esc(c.XLabel))
	}
	if c.YLabel != "" {
		fmt.Fprintf(&b, `<text transform="translate(12 %s) rotate(-90)" text-anchor="middle">%s</text>`, num(top+ph/2), esc(c.YLabel))
	}
	// The lines, then the legend over them.
	for i, s := range c.Series {
		colour := palette[i%len(palette)]
		var pts []string
		var only Point
		for _, p := range s.Points {
			if x.ok(p.X) && y.ok(p.Y) && inX(p.X) {
				pts = append(pts, num(px(p.X))+","+num(py(p.Y)))
				only = p
			}
		}
		if len(pts) == 1 { // a line of one point would not show
			fmt.Fprintf(&b, `<circle cx="%s" cy="%s" r="2.5" fill="%s"/>`, num(px(only.X)), num(py(only.Y)), colour)
		} else if len(pts) > 1 {
			fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="1.5" points="%s"/>`, colour, strings.Join(pts, " "))
		}
		ly := top + 12 + 14*i
		fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2"/><text x="%d" y="%d">%s</text>`,
			left+8, ly-4, left+24, ly-4, colour, left+28, ly, esc(s.Name))
	}
	b.WriteString(`</svg>`)
	return b.String()
}

// axis maps values onto [0, 1], linearly or logarithmically.
type axis struct {
	log    bool
	lo, hi float64
}

func (a *axis) ok(v float64) bool {
	return !math.IsNaN(v) && !math.IsInf(v, 0) && (!a.log || v > 0)
}

func (a *axis) take(v float64) { a.lo, a.hi = min(a.lo, v), max(a.hi, v) }

// settle gives an axis with no points, or one value, a span.
func (a *axis) settle() {
	switch {
	case math.IsInf(a.lo, 1) || math.IsInf(a.hi, -1):
		a.lo, a.hi = 0, 1
		if a.log {
			a.lo = 1
		}
	case a.hi <= a.lo:
		if a.log {
			a.lo, a.hi = a.lo/2, a.hi*2
		} else {
			a.hi = a.lo + 1
		}
	}
	if a.log {
		// Whole decades: the ticks fall on the frame.
		a.lo, a.hi = math.Pow(10, math.Floor(math.Log10(a.lo))), math.Pow(10, math.Ceil(math.Log10(a.hi)))
	}
}

func (a *axis) frac(v float64) float64 {
	if a.log {
		return (math.Log10(v) - math.Log10(a.lo)) / (math.Log10(a.hi) - math.Log10(a.lo))
	}
	return (v - a.lo) / (a.hi - a.lo)
}

// ticks are the decades of a log axis, else five round steps.
func (a *axis) ticks() []float64 {
	var ts []float64
	if a.log {
		for v := a.lo; v <= a.hi*1.0001; v *= 10 {
			ts = append(ts, v)
		}
		return ts
	}
	step := math.Pow(10, math.Floor(math.Log10((a.hi-a.lo)/4)))
	for _, m := range []float64{1, 2, 5, 10} {
		if (a.hi-a.lo)/(step*m) <= 5 {
			step *= m
			break
		}
	}
	for i := math.Ceil(a.lo / step); i*step <= a.hi+step/1e6; i++ {
		ts = append(ts, i*step)
	}
	return ts
}

func esc(s string) string { return html.EscapeString(s) }

func num(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

// label writes a tick's value short: 0.5, 20, 1000, 1e+06.
func label(v float64) string {
	if v != 0 && (math.Abs(v) >= 1e5 || math.Abs(v) < 1e-3) {
		return strconv.FormatFloat(v, 'g', 2, 64)
	}
	return strconv.FormatFloat(v, 'g', 6, 64)
}

// CDF is the cumulative distribution of sorted values (ascending) as at
// most n points (X the value, Y the fraction of values at or below it):
// few enough to draw whatever the samples.
func CDF(sorted []float64, n int) []Point {
	if len(sorted) == 0 || n < 2 {
		return nil
	}
	n = min(n, len(sorted))
	pts := make([]Point, 0, n)
	for i := range n {
		// The nearest-rank quantile at i/(n-1).
		k := int(math.Round(float64(i) / float64(n-1) * float64(len(sorted)-1)))
		pts = append(pts, Point{X: sorted[k], Y: float64(k+1) / float64(len(sorted))})
	}
	return pts
}
