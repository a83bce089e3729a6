package report

import (
	"fmt"
	"image"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
)

// Heat map limits: at most maxBands rows (switches are binned into
// bands of consecutive rows) and heatCols columns (time bins), whatever
// the size of the fabric or the length of the run.
const (
	maxBands = 200
	heatCols = 200
	// heatLabels is the most rows named on the y axis.
	heatLabels = 16
)

// heatMap is a grid of values, rows top first, columns from time 0 in
// steps of XMax/len(V[i]); NaN is no data. Values are coloured from 0
// (white) to Max (dark red) on heatRamp.
type heatMap struct {
	Rows []string
	V    [][]float64
	Max  float64
	// Unit formats a value for the legend.
	Unit func(float64) string
}

// heatRamp is a sequential ramp (ColorBrewer's YlOrRd, from white):
// light for little, dark for much, readable in grey.
var heatRamp = []color.RGBA{
	{255, 255, 255, 255}, {255, 237, 160, 255}, {254, 178, 76, 255}, {240, 59, 32, 255}, {128, 0, 38, 255},
}

// noData is the colour of a cell without readings.
var noData = color.RGBA{225, 225, 225, 255}

// heatColor returns the colour of v on [0, hi].
func heatColor(v, hi float64) color.RGBA {
	if math.IsNaN(v) {
		return noData
	}
	if hi <= 0 || v <= 0 {
		return heatRamp[0]
	}
	x := min(v/hi, 1) * float64(len(heatRamp)-1)
	i := min(int(x), len(heatRamp)-2)
	f := x - float64(i)
	a, b := heatRamp[i], heatRamp[i+1]
	mix := func(p, q uint8) uint8 { return uint8(math.Round(float64(p) + f*(float64(q)-float64(p)))) }
	return color.RGBA{mix(a.R, b.R), mix(a.G, b.G), mix(a.B, b.B), 255}
}

// bandStarts splits n rows into at most limit bands of consecutive rows,
// as even as can be (sizes differ by one at most, the larger first): band
// i holds rows [starts[i], starts[i+1]). It returns len(bands)+1 bounds.
func bandStarts(n, limit int) []int {
	if n <= 0 {
		return []int{0}
	}
	b := min(n, max(limit, 1))
	out := make([]int, b+1)
	size, extra := n/b, n%b
	for i := range b {
		out[i+1] = out[i] + size
		if i < extra {
			out[i+1]++
		}
	}
	return out
}

// binRows folds rows of cells (one per switch, each of the same number
// of columns) into bands (bandStarts): a band's cell is the max or the
// mean (mean true) of its rows' cells that have data, NaN if none has.
func binRows(rows [][]float64, starts []int, mean bool) [][]float64 {
	out := make([][]float64, len(starts)-1)
	for b := range out {
		lo, hi := starts[b], starts[b+1]
		if lo >= hi {
			continue
		}
		cols := len(rows[lo])
		band := make([]float64, cols)
		for c := range cols {
			acc, n := 0.0, 0
			for r := lo; r < hi; r++ {
				v := rows[r][c]
				if math.IsNaN(v) {
					continue
				}
				if mean {
					acc += v
				} else if n == 0 || v > acc {
					acc = v
				}
				n++
			}
			switch {
			case n == 0:
				band[c] = math.NaN()
			case mean:
				band[c] = acc / float64(n)
			default:
				band[c] = acc
			}
		}
		out[b] = band
	}
	return out
}

// bandName names a band by its first and last row.
func bandName(names []string, lo, hi int) string {
	if hi-lo <= 1 {
		return names[lo]
	}
	return names[lo] + "…" + names[hi-1]
}

// image draws the grid one pixel per cell, scaled up by whole pixels
// (sharp edges in any viewer) to about 960 × 480.
func (h *heatMap) image() image.Image {
	rows := len(h.V)
	cols := 0
	if rows > 0 {
		cols = len(h.V[0])
	}
	sx, sy := max(960/max(cols, 1), 1), max(480/max(rows, 1), 1)
	img := image.NewRGBA(image.Rect(0, 0, max(cols*sx, 1), max(rows*sy, 1)))
	for r, row := range h.V {
		for c, v := range row {
			col := heatColor(v, h.Max)
			for y := r * sy; y < (r+1)*sy; y++ {
				for x := c * sx; x < (c+1)*sx; x++ {
					img.SetRGBA(x, y, col)
				}
			}
		}
	}
	return img
}

// plotHeat adds the heat map (row 0 on top), names up to heatLabels rows
// on the y axis and puts the colour scale in the legend. It returns the
// number of legend entries.
func (f *figure) plotHeat(p *plot.Plot, leg *plot.Legend) int {
	h := f.Heat
	n := len(h.V)
	p.Add(plotter.NewImage(h.image(), 0, -0.5, math.Max(f.XMax, 1e-9), float64(n)-0.5))
	var ticks []plot.Tick
	step := max((n+heatLabels-1)/heatLabels, 1)
	for i := 0; i < n; i += step {
		ticks = append(ticks, plot.Tick{Value: float64(n - 1 - i), Label: h.Rows[i]})
	}
	p.Y.Tick.Marker = plot.ConstantTicks(ticks)
	p.Y.Tick.Label.Font = sans(8)
	p.X.Min, p.X.Max = 0, math.Max(f.XMax, 1e-9)
	p.Y.Min, p.Y.Max = -0.5, float64(n)-0.5
	unit := h.Unit
	if unit == nil {
		unit = func(v float64) string { return fmt.Sprintf("%.3g", v) }
	}
	k := len(heatRamp) - 1
	for i := k; i >= 0; i-- {
		v := h.Max * float64(i) / float64(k)
		leg.Add(unit(v), swatch(heatColor(v, h.Max)))
	}
	leg.Add("no reading", swatch(noData))
	return k + 2
}
