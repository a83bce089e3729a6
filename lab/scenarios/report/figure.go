package report

import (
	"bytes"
	"fmt"
	"html"
	"image/color"
	"math"
	"regexp"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// figure is one plot of a report, described apart from how it is drawn:
// time series (Lines), on/off intervals per row drawn as bands (Rows), or
// grouped bars (Categories with one value per Group). render draws it
// with gonum.org/v1/plot.
type figure struct {
	Title, XLabel, YLabel string
	// XMax is the end of the x axis of Lines and Rows (it starts at 0).
	XMax float64
	// Lines are time series.
	Lines []lineSeries
	// Rows are band rows, top first; Kinds names the colour of each
	// band kind (Row.Kind indexes it) in the legend.
	Rows  []bandRow
	Kinds []bandKind
	// Lanes splits each band row into that many lanes, top first
	// (bandRow.Lanes places a span); 0 or 1: one.
	Lanes int
	// Categories and Groups make a grouped bar chart.
	Categories []string
	Groups     []barGroup
	// Heat is a heat map of rows over time (heatmap.go).
	Heat *heatMap
	// Aligned figures put their data area at the same place (alignGutter
	// from the left, alignLegend from the right, on a wider canvas), so
	// that time figures with the same x range line up when stacked.
	Aligned bool
}

// lineSeries is one time series. Step draws it as a staircase that holds
// each value until the next point and, when Width > 0, the last value
// for Width more: the right style for a maximum per sampling window.
type lineSeries struct {
	Name  string
	X, Y  []float64
	Step  bool
	Width float64
	// Color, if above 0, is the line's palette colour plus one (else
	// the line's position picks it); Dashed dashes it.
	Color  int
	Dashed bool
}

// bandRow is one row of on intervals [start, end], all of Kind, or,
// when Kinds is set, span i of Kinds[i]; Lanes[i], if set, is span i's
// lane (figure.Lanes).
type bandRow struct {
	Name  string
	Spans [][2]float64
	Kind  int
	Kinds []int
	Lanes []int
}

// kind returns the kind of span i.
func (r bandRow) kind(i int) int {
	if i < len(r.Kinds) {
		return r.Kinds[i]
	}
	return r.Kind
}

// lane returns the lane of span i.
func (r bandRow) lane(i int) int {
	if i < len(r.Lanes) {
		return r.Lanes[i]
	}
	return 0
}

// bandKind is the legend entry and colour of one kind of band.
type bandKind struct {
	Name  string
	Color color.RGBA
}

// barGroup is one group of bars, one value per category; NaN: none.
type barGroup struct {
	Name   string
	Values []float64
}

// palette is the Tableau 10 colour cycle: distinct, and readable by most
// colour-blind readers.
var palette = []color.RGBA{
	{31, 119, 180, 255}, {255, 127, 14, 255}, {44, 160, 44, 255}, {214, 39, 40, 255}, {148, 103, 189, 255},
	{140, 86, 75, 255}, {227, 119, 194, 255}, {127, 127, 127, 255}, {188, 189, 34, 255}, {23, 190, 207, 255},
}

// Figure sizes. PNGs are drawn at pngDPI, so a 10 × 5 in figure is
// 960 × 480 pixels.
const (
	figW        = 10 * vg.Inch
	figH        = 5 * vg.Inch
	rowH        = 21 * vg.Length(1)  // points per band row
	laneH       = 13 * vg.Length(1)  // points per lane of a row of several
	alignW      = 12 * vg.Inch       // the width of aligned figures
	alignGutter = 170 * vg.Length(1) // from the canvas's left to the data area
	alignLegend = 250 * vg.Length(1) // from the data area to the canvas's right
	pngDPI      = 96
	legendRune  = 44 // longest legend entry, in runes
)

// size returns the figure's width and height.
func (f *figure) size() (vg.Length, vg.Length) {
	w := figW
	if f.Aligned {
		w = alignW
	}
	if len(f.Rows) > 0 {
		h := rowH
		if f.Lanes > 1 {
			h = max(rowH, vg.Length(f.Lanes)*laneH)
		}
		return w, 1.2*vg.Inch + vg.Length(max(len(f.Rows), 3))*h
	}
	return w, figH
}

// render draws the figure as an SVG document and a PNG image.
func (f *figure) render() (svg, pngData []byte, err error) {
	p, leg, err := f.plot()
	if err != nil {
		return nil, nil, err
	}
	w, h := f.size()
	sc := vgsvg.New(w, h)
	ic := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(pngDPI), vgimg.UseBackgroundColor(color.White))
	for _, c := range []vg.CanvasSizer{sc, ic} {
		if err := drawFigure(draw.New(c), p, leg, f.Aligned); err != nil {
			return nil, nil, err
		}
	}
	var sb, pb bytes.Buffer
	if _, err := sc.WriteTo(&sb); err != nil {
		return nil, nil, fmt.Errorf("svg: %w", err)
	}
	if _, err := (vgimg.PngCanvas{Canvas: ic}).WriteTo(&pb); err != nil {
		return nil, nil, fmt.Errorf("png: %w", err)
	}
	return fixSVGText(sb.Bytes()), pb.Bytes(), nil
}

// svgText matches a text element of gonum/plot's SVG: its attributes
// up to the font size, the size, and the escaped text.
var svgText = regexp.MustCompile(`<text ([^>]*font-size:([0-9.]+)px[^"]*)">([^<]*)</text>`)

// fixSVGText makes the SVG's text keep its layout on every viewer.
// gonum/plot lays text out with Liberation Sans, whose metrics are
// Arial's: the SVG names Arial, then any sans-serif, as fallbacks, and
// gives each text its measured width (textLength), so that a fallback
// with other metrics is fitted to it instead of overflowing a label or
// the legend.
func fixSVGText(svg []byte) []byte {
	svg = bytes.ReplaceAll(svg, []byte("font-family:Liberation Sans;"),
		[]byte("font-family:'Liberation Sans',Arial,Helvetica,sans-serif;"))
	return svgText.ReplaceAllFunc(svg, func(m []byte) []byte {
		sub := svgText.FindSubmatch(m)
		size, err := strconv.ParseFloat(string(sub[2]), 64)
		if err != nil || len(sub[3]) == 0 {
			return m
		}
		face := font.DefaultCache.Lookup(sans(size), vg.Points(size))
		w := face.Width(html.UnescapeString(string(sub[3])))
		return fmt.Appendf(nil, `<text %s" textLength="%.4g" lengthAdjust="spacingAndGlyphs">%s</text>`, sub[1], w.Points(), sub[3])
	})
}

// drawFigure draws p on c with the legend (if any) to the right of the
// plot area, top-aligned with it; aligned, the data area starts
// alignGutter from the left and ends alignLegend from the right (where
// its y axis's labels or the legend fit). gonum/plot recovers its own
// panics as errors nowhere, so a drawing panic becomes an error here.
func drawFigure(c draw.Canvas, p *plot.Plot, leg *plot.Legend, aligned bool) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("draw %q: %v", p.Title.Text, r)
		}
	}()
	c.SetColor(color.White)
	c.Fill(c.Rectangle.Path())
	c = draw.Crop(c, vg.Points(6), -vg.Points(6), vg.Points(4), -vg.Points(4)) // margin
	if leg == nil && !aligned {
		p.Draw(c)
		return nil
	}
	lw := vg.Length(0)
	if leg != nil {
		lw = leg.Rectangle(c).Size().X + vg.Points(18)
	}
	if aligned {
		lw = max(lw, alignLegend)
	}
	pc := draw.Crop(c, 0, -lw, 0, 0)
	if aligned {
		if axis := p.DataCanvas(pc).Min.X - pc.Min.X; axis < alignGutter {
			pc.Min.X += alignGutter - axis
		}
	}
	p.Draw(pc)
	if leg == nil {
		return nil
	}
	da := p.DataCanvas(pc)
	lc := c
	lc.Min = vg.Point{X: c.Max.X - lw + vg.Points(8), Y: da.Min.Y}
	lc.Max.Y = da.Max.Y
	leg.Draw(lc)
	return nil
}

// plot builds the gonum plot of f and its legend (nil when it needs none).
func (f *figure) plot() (*plot.Plot, *plot.Legend, error) {
	p := plot.New()
	p.Title.Text = f.Title
	p.Title.TextStyle.Font = sans(13)
	p.Title.Padding = vg.Points(8)
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font = sans(11)
		a.Tick.Label.Font = sans(10)
		a.Tick.Marker = niceTicks{}
		a.Padding = 0
	}
	p.X.Label.Text = f.XLabel
	p.Y.Label.Text = f.YLabel
	leg := plot.NewLegend()
	leg.Top, leg.Left = true, true
	leg.TextStyle.Font = sans(10)
	leg.ThumbnailWidth = vg.Points(18)
	leg.Padding = vg.Points(3)
	var err error
	entries := 0
	switch {
	case f.Heat != nil:
		entries = f.plotHeat(p, &leg)
	case len(f.Rows) > 0:
		entries = f.plotBands(p, &leg)
	case len(f.Groups) > 0:
		entries, err = f.plotBars(p, &leg)
	default:
		entries, err = f.plotLines(p, &leg)
	}
	if err != nil {
		return nil, nil, err
	}
	if entries == 0 {
		return p, nil, nil
	}
	return p, &leg, nil
}

// sans is Liberation Sans (metric-compatible with Arial) at size points.
func sans(size float64) font.Font {
	return font.Font{Typeface: "Liberation", Variant: "Sans", Size: vg.Points(size)}
}

// niceTicks is a plot.Ticker with about six labelled ticks at 1, 2, 2.5
// or 5 times a power of ten and four minor ticks between labels.
type niceTicks struct{}

// Ticks implements plot.Ticker.
func (niceTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) {
		return []plot.Tick{{Value: lo, Label: tickLabel(lo)}}
	}
	step := niceStep((hi - lo) / 6)
	minor := step / 5
	var out []plot.Tick
	for i := math.Ceil(lo / minor); i*minor <= hi+minor*1e-9; i++ {
		v := i * minor
		t := plot.Tick{Value: v}
		if r := math.Round(v / step); math.Abs(v/step-r) < 1e-6 {
			t.Value = r * step
			t.Label = tickLabel(t.Value)
		}
		out = append(out, t)
	}
	return out
}

// niceStep returns the smallest of 1, 2, 2.5 and 5 times a power of ten
// that is at least raw.
func niceStep(raw float64) float64 {
	if raw <= 0 || math.IsNaN(raw) || math.IsInf(raw, 0) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 2.5, 5} {
		if m*p >= raw*(1-1e-9) {
			return m * p
		}
	}
	return 10 * p
}

// tickLabel writes a tick value without float noise.
func tickLabel(v float64) string {
	if v == 0 {
		return "0"
	}
	return strconv.FormatFloat(v, 'g', 6, 64)
}

// shortName cuts a legend entry to legendRune runes.
func shortName(s string) string {
	if r := []rune(s); len(r) > legendRune {
		return string(r[:legendRune-1]) + "…"
	}
	return s
}

// finite drops the points with a NaN or infinite coordinate.
func finite(x, y []float64) plotter.XYs {
	xy := make(plotter.XYs, 0, len(x))
	for i := range min(len(x), len(y)) {
		if !math.IsNaN(x[i]) && !math.IsInf(x[i], 0) && !math.IsNaN(y[i]) && !math.IsInf(y[i], 0) {
			xy = append(xy, plotter.XY{X: x[i], Y: y[i]})
		}
	}
	return xy
}

// plotLines adds the time series; the y axis starts at 0 and leaves 5 %
// above the highest point. It returns the number of legend entries.
func (f *figure) plotLines(p *plot.Plot, leg *plot.Legend) (int, error) {
	p.Add(grid(true, true))
	ymax := 0.0
	for i, s := range f.Lines {
		xy := finite(s.X, s.Y)
		if s.Step && s.Width > 0 && len(xy) > 0 {
			xy = append(xy, plotter.XY{X: xy[len(xy)-1].X + s.Width, Y: xy[len(xy)-1].Y})
		}
		for _, pt := range xy {
			ymax = math.Max(ymax, pt.Y)
		}
		l, err := plotter.NewLine(xy)
		if err != nil {
			return 0, fmt.Errorf("series %q: %w", s.Name, err)
		}
		col := i
		if s.Color > 0 {
			col = s.Color - 1
		}
		l.Color = palette[col%len(palette)]
		l.Width = vg.Points(1.4)
		if i >= len(palette) || s.Dashed {
			l.Dashes = []vg.Length{vg.Points(5), vg.Points(2)}
		}
		if s.Step {
			l.StepStyle = plotter.PostStep
		}
		p.Add(l)
		if len(xy) == 1 { // a line of one point draws nothing: mark it
			sc, err := plotter.NewScatter(xy)
			if err != nil {
				return 0, fmt.Errorf("series %q: %w", s.Name, err)
			}
			sc.Color = l.Color
			sc.Shape = draw.CircleGlyph{}
			sc.Radius = vg.Points(2.5)
			p.Add(sc)
		}
		leg.Add(shortName(s.Name), l)
	}
	p.X.Min, p.X.Max = 0, math.Max(f.XMax, 1e-9)
	p.Y.Min, p.Y.Max = 0, 1
	if ymax > 0 {
		p.Y.Max = ymax * 1.05
	}
	return len(f.Lines), nil
}

// grid returns light grid lines at the labelled ticks of the x axis
// (vertical) and of the y axis (horizontal).
func grid(vertical, horizontal bool) *plotter.Grid {
	g := plotter.NewGrid()
	g.Vertical.Color, g.Horizontal.Color = nil, nil
	if vertical {
		g.Vertical.Color = color.Gray{Y: 222}
	}
	if horizontal {
		g.Horizontal.Color = color.Gray{Y: 222}
	}
	return g
}

// plotBars adds one bar per group and category, side by side, each
// labelled with its value. It returns the number of legend entries.
func (f *figure) plotBars(p *plot.Plot, leg *plot.Legend) (int, error) {
	p.Add(grid(false, true))
	p.X.Tick.Label.Font.Size = vg.Points(10)
	n, ng := len(f.Categories), len(f.Groups)
	w, _ := f.size()
	bw := min((w-2*vg.Inch)*0.8/vg.Length(max(n, 1)*ng), vg.Points(60))
	ymax := 0.0
	for gi, g := range f.Groups {
		col := palette[gi%len(palette)]
		var first *plotter.BarChart
		off := (vg.Length(gi) - vg.Length(ng-1)/2) * bw
		var labels plotter.XYLabels
		for ci, v := range g.Values {
			if math.IsNaN(v) || math.IsInf(v, 0) || ci >= n {
				continue
			}
			b, err := plotter.NewBarChart(plotter.Values{v}, bw)
			if err != nil {
				return 0, fmt.Errorf("group %q: %w", g.Name, err)
			}
			b.XMin, b.Offset = float64(ci), off
			b.Color, b.LineStyle.Width = col, 0
			p.Add(b)
			if first == nil {
				first = b
			}
			ymax = math.Max(ymax, v)
			labels.XYs = append(labels.XYs, plotter.XY{X: float64(ci), Y: v})
			labels.Labels = append(labels.Labels, strconv.FormatFloat(round3(v), 'f', -1, 64))
		}
		if first != nil && ng > 1 {
			leg.Add(shortName(g.Name), first)
		}
		if len(labels.XYs) > 0 && (ng == 1 || bw >= vg.Points(30)) {
			l, err := plotter.NewLabels(labels)
			if err != nil {
				return 0, fmt.Errorf("group %q: %w", g.Name, err)
			}
			for i := range l.TextStyle {
				l.TextStyle[i].Font = sans(9)
				l.TextStyle[i].Color = color.Gray{Y: 80}
				l.TextStyle[i].XAlign = draw.XCenter
			}
			l.Offset = vg.Point{X: off, Y: vg.Points(3)}
			p.Add(l)
		}
	}
	p.NominalX(f.Categories...)
	p.X.Min, p.X.Max = -0.5, float64(n)-0.5
	p.Y.Min, p.Y.Max = 0, 1
	if ymax > 0 {
		p.Y.Max = ymax * 1.12
	}
	if ng > 1 {
		return ng, nil
	}
	return 0, nil
}

// round3 rounds v to three significant digits.
func round3(v float64) float64 {
	if v == 0 {
		return 0
	}
	p := math.Pow(10, 2-math.Floor(math.Log10(math.Abs(v))))
	return math.Round(v*p) / p
}

// plotBands adds one row of filled bands per bandRow, the first row on
// top, named on the y axis. It returns the number of legend entries: the
// band kinds that occur.
func (f *figure) plotBands(p *plot.Plot, leg *plot.Legend) int {
	p.Add(grid(true, false))
	n := len(f.Rows)
	names := make([]string, n)
	for i, r := range f.Rows {
		names[n-1-i] = r.Name
	}
	p.Add(&bands{rows: f.Rows, kinds: f.Kinds, lanes: max(f.Lanes, 1)})
	p.NominalY(names...)
	p.Y.Tick.Label.Font = sans(9)
	p.X.Min, p.X.Max = 0, math.Max(f.XMax, 1e-9)
	p.Y.Min, p.Y.Max = -0.5, float64(n)-0.5
	entries := 0
	used := map[int]bool{}
	for _, r := range f.Rows {
		if r.Kinds == nil {
			used[r.Kind] = true
		}
		for _, k := range r.Kinds {
			used[k] = true
		}
	}
	for k, kind := range f.Kinds {
		if used[k] {
			leg.Add(kind.Name, swatch(kind.Color))
			entries++
		}
	}
	return entries
}

// bands is a plot.Plotter of band rows: row i of n sits at y = n-1-i,
// split into lanes (top first).
type bands struct {
	rows  []bandRow
	kinds []bandKind
	lanes int
}

// Plot draws a band per span in its lane; a span shorter than half a
// point is drawn half a point wide, so that a short pause stays visible.
func (b *bands) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	n := len(b.rows)
	for i, r := range b.rows {
		y := float64(n - 1 - i)
		if i%2 == 1 {
			c.FillPolygon(color.Gray{Y: 246}, c.ClipPolygonXY(rect(trX(p.X.Min), trX(p.X.Max), trY(y-0.5), trY(y+0.5))))
		}
		half := 0.32 // half a band's height, in rows
		if b.lanes > 1 {
			half = 0.42
		}
		lh := 2 * half / float64(b.lanes) // a lane's height
		for j, s := range r.Spans {
			col := palette[0]
			if k := r.kind(j); k >= 0 && k < len(b.kinds) {
				col = b.kinds[k].Color
			}
			top := y + half - float64(min(max(r.lane(j), 0), b.lanes-1))*lh
			bot := top - lh
			if b.lanes > 1 {
				bot += 0.04 // a gap between lanes
			}
			x0, x1 := trX(s[0]), trX(s[1])
			x1 = max(x1, x0+vg.Points(0.5))
			c.FillPolygon(col, c.ClipPolygonXY(rect(x0, x1, trY(bot), trY(top))))
		}
	}
}

// DataRange spans the rows' intervals.
func (b *bands) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, xmax = math.Inf(1), math.Inf(-1)
	for _, r := range b.rows {
		for _, s := range r.Spans {
			xmin, xmax = math.Min(xmin, s[0]), math.Max(xmax, s[1])
		}
	}
	return xmin, xmax, -0.5, float64(len(b.rows)) - 0.5
}

// rect is the polygon of a rectangle.
func rect(x0, x1, y0, y1 vg.Length) []vg.Point {
	return []vg.Point{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}}
}

// swatch is a legend thumbnail filled with one colour.
type swatch color.RGBA

// Thumbnail implements plot.Thumbnailer.
func (s swatch) Thumbnail(c *draw.Canvas) {
	r := c.Rectangle
	c.FillPolygon(color.RGBA(s), rect(r.Min.X, r.Max.X, r.Min.Y+1, r.Max.Y-1))
}
