package report

import (
	"fmt"
	"image/color"
	"math"
	"strconv"
)

// chart is one plot: a line chart (Lines), a Gantt chart of intervals
// (Rows) or a grouped bar chart (Categories with one value per Group).
type chart struct {
	Title, XLabel, YLabel string
	Lines                 []lineSeries
	Rows                  []ganttRow
	XMin, XMax            float64 // x range of lines and rows
	Categories            []string
	Groups                []barGroup
}

type lineSeries struct {
	Name string
	X, Y []float64
}

type ganttRow struct {
	Name  string
	Spans [][2]float64
	Color int // palette index
}

type barGroup struct {
	Name   string
	Values []float64 // one per category; NaN: none
}

var (
	black   = color.RGBA{0, 0, 0, 255}
	grey    = color.RGBA{110, 110, 110, 255}
	light   = color.RGBA{225, 225, 225, 255}
	palette = []color.RGBA{
		{31, 119, 180, 255}, {255, 127, 14, 255}, {44, 160, 44, 255}, {214, 39, 40, 255}, {148, 103, 189, 255},
		{140, 86, 75, 255}, {227, 119, 194, 255}, {127, 127, 127, 255}, {188, 189, 34, 255}, {23, 190, 207, 255},
	}
)

const (
	chartW = 960
	chartH = 480
)

// layout is the plot area inside the canvas.
type layout struct {
	left, top, right, bottom float64 // plot area edges
}

func (ch *chart) size() (int, int) {
	if len(ch.Rows) > 0 {
		return chartW, 110 + max(len(ch.Rows), 3)*28
	}
	return chartW, chartH
}

func (ch *chart) layout() layout {
	w, h := ch.size()
	left := 80.0
	if len(ch.Rows) > 0 {
		n := 0
		for _, r := range ch.Rows {
			n = max(n, len(r.Name))
		}
		left = float64(n*charW + 20)
	}
	right := float64(w) - 20
	if len(ch.Lines) > 0 || len(ch.Groups) > 1 {
		n := 0
		for _, l := range ch.Lines {
			n = max(n, len(l.Name))
		}
		for _, g := range ch.Groups {
			n = max(n, len(g.Name))
		}
		right = float64(w) - float64(min(n, 40)*charW) - 45
	}
	return layout{left: left, top: 40, right: right, bottom: float64(h) - 55}
}

// draw renders the chart.
func (ch *chart) draw(c canvas) {
	w, _ := ch.size()
	L := ch.layout()
	c.text(float64(w)/2, 24, ch.Title, 'm', black, false)
	switch {
	case len(ch.Rows) > 0:
		ch.drawGantt(c, L)
	case len(ch.Groups) > 0:
		ch.drawBars(c, L)
	default:
		ch.drawLines(c, L)
	}
	c.text((L.left+L.right)/2, L.bottom+42, ch.XLabel, 'm', black, false)
	if ch.YLabel != "" {
		c.text(18, (L.top+L.bottom)/2, ch.YLabel, 'm', black, true)
	}
}

// xAxis draws x ticks for [lo, hi] and returns the mapping.
func xAxis(c canvas, L layout, lo, hi float64) func(float64) float64 {
	if hi <= lo {
		hi = lo + 1
	}
	fx := func(x float64) float64 { return L.left + (x-lo)/(hi-lo)*(L.right-L.left) }
	for _, t := range ticks(lo, hi, 8) {
		x := fx(t)
		c.line(x, L.top, x, L.bottom, light, 1)
		c.line(x, L.bottom, x, L.bottom+5, black, 1)
		c.text(x, L.bottom+19, fmtTick(t), 'm', black, false)
	}
	return fx
}

// yAxis draws y ticks for [lo, hi] and returns the mapping.
func yAxis(c canvas, L layout, lo, hi float64) func(float64) float64 {
	if hi <= lo {
		hi = lo + 1
	}
	fy := func(y float64) float64 { return L.bottom - (y-lo)/(hi-lo)*(L.bottom-L.top) }
	for _, t := range ticks(lo, hi, 6) {
		y := fy(t)
		c.line(L.left, y, L.right, y, light, 1)
		c.line(L.left-5, y, L.left, y, black, 1)
		c.text(L.left-8, y+4, fmtTick(t), 'r', black, false)
	}
	return fy
}

func frame(c canvas, L layout) {
	c.line(L.left, L.bottom, L.right, L.bottom, black, 1)
	c.line(L.left, L.top, L.left, L.bottom, black, 1)
}

func legend(c canvas, L layout, names []string) {
	x := L.right + 15
	for i, n := range names {
		y := L.top + 10 + float64(i)*18
		c.rect(x, y-8, 14, 8, palette[i%len(palette)])
		if len(n) > 40 {
			n = n[:39] + "…"
		}
		c.text(x+20, y, n, 'l', black, false)
	}
}

func (ch *chart) drawLines(c canvas, L layout) {
	ymax := 0.0
	for _, l := range ch.Lines {
		for _, y := range l.Y {
			ymax = math.Max(ymax, y)
		}
	}
	if ymax == 0 {
		ymax = 1
	}
	ymax = niceCeil(ymax * 1.05)
	fx := xAxis(c, L, ch.XMin, ch.XMax)
	fy := yAxis(c, L, 0, ymax)
	frame(c, L)
	var names []string
	for i, l := range ch.Lines {
		pts := make([][2]float64, len(l.X))
		for k := range l.X {
			pts[k] = [2]float64{fx(l.X[k]), fy(l.Y[k])}
		}
		c.polyline(pts, palette[i%len(palette)], 1.6)
		names = append(names, l.Name)
	}
	legend(c, L, names)
}

func (ch *chart) drawGantt(c canvas, L layout) {
	fx := xAxis(c, L, ch.XMin, ch.XMax)
	frame(c, L)
	rowH := (L.bottom - L.top) / float64(len(ch.Rows))
	for i, r := range ch.Rows {
		y := L.top + float64(i)*rowH
		if i%2 == 1 {
			c.rect(L.left+1, y, L.right-L.left-1, rowH, color.RGBA{246, 246, 246, 255})
		}
		c.text(L.left-8, y+rowH/2+4, r.Name, 'r', black, false)
		for _, s := range r.Spans {
			x0, x1 := fx(s[0]), fx(s[1])
			c.rect(x0, y+rowH*0.2, math.Max(x1-x0, 1), rowH*0.6, palette[r.Color%len(palette)])
		}
	}
}

func (ch *chart) drawBars(c canvas, L layout) {
	ymax := 0.0
	for _, g := range ch.Groups {
		for _, v := range g.Values {
			if !math.IsNaN(v) {
				ymax = math.Max(ymax, v)
			}
		}
	}
	if ymax == 0 {
		ymax = 1
	}
	fy := yAxis(c, L, 0, niceCeil(ymax*1.1))
	frame(c, L)
	n := len(ch.Categories)
	slot := (L.right - L.left) / float64(max(n, 1))
	bw := slot * 0.8 / float64(len(ch.Groups))
	for i, cat := range ch.Categories {
		x0 := L.left + float64(i)*slot + slot*0.1
		for gi, g := range ch.Groups {
			v := g.Values[i]
			if math.IsNaN(v) {
				continue
			}
			x := x0 + float64(gi)*bw
			c.rect(x, fy(v), bw-2, L.bottom-fy(v), palette[gi%len(palette)])
			if len(ch.Groups) == 1 || bw > 40 {
				c.text(x+bw/2, fy(v)-4, fmtTick(round3(v)), 'm', grey, false)
			}
		}
		c.text(L.left+float64(i)*slot+slot/2, L.bottom+19, cat, 'm', black, false)
	}
	if len(ch.Groups) > 1 {
		var names []string
		for _, g := range ch.Groups {
			names = append(names, g.Name)
		}
		legend(c, L, names)
	}
}

func round3(v float64) float64 {
	if v == 0 {
		return 0
	}
	p := math.Pow(10, 2-math.Floor(math.Log10(math.Abs(v))))
	return math.Round(v*p) / p
}

// ticks returns about n round tick values in [lo, hi].
func ticks(lo, hi float64, n int) []float64 {
	step := niceStep((hi - lo) / float64(n))
	var out []float64
	for t := math.Ceil(lo/step) * step; t <= hi+step*1e-9; t += step {
		out = append(out, math.Round(t/step)*step)
	}
	return out
}

func niceStep(raw float64) float64 {
	if raw <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*p >= raw {
			return m * p
		}
	}
	return 10 * p
}

func niceCeil(v float64) float64 {
	s := niceStep(v / 5)
	return math.Ceil(v/s) * s
}

func fmtTick(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e9 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return fmt.Sprintf("%.3g", v)
}

// render returns the chart as SVG and PNG.
func (ch *chart) render() (svg, pngData []byte, err error) {
	w, h := ch.size()
	s := newSVG(w, h)
	ch.draw(s)
	p := newPNG(w, h)
	ch.draw(p)
	pngData, err = p.bytes()
	return s.bytes(), pngData, err
}
