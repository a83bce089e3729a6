package graph

import (
	"bufio"
	"cmp"
	"fmt"
	"html"
	"io"
	"slices"
	"strings"

	"github.com/rocelab/rocelab/topologies"
)

// Drawing constants (pixels).
const (
	boxW, boxH   = 96.0, 40.0
	gapX         = 14.0
	rowGap       = 105.0
	marginL      = 150.0
	regionGap    = 70.0
	titleH       = 64.0
	beColor      = "#d35400"
	feColor      = "#2471a3"
	hostFill     = "#f4f6f7"
	beSwitchFill = "#fdebd0"
	feSwitchFill = "#d6eaf8"
)

type svgLayout struct {
	width, height float64
	y0            float64 // host row centre
	busY          float64
	rowsBE        [][]*gbox // by tier
	rowsFE        [][]*gbox // tier 1.. (index 0 = storage)
	beX0, feX0    float64
	beW, feW      float64
}

func (g *graph) layout() *svgLayout {
	L := &svgLayout{}
	maxTier := 1
	for _, b := range g.boxes {
		maxTier = max(maxTier, b.tier)
	}
	L.rowsBE = make([][]*gbox, maxTier+1)
	L.rowsFE = make([][]*gbox, maxTier+1)
	for t := 0; t <= maxTier; t++ {
		if t == 0 {
			L.rowsBE[0] = g.row(topologies.BE, 0, topologies.KindHost)
			L.rowsFE[0] = g.row(topologies.FE, 0, topologies.KindStorage)
		} else {
			L.rowsBE[t] = g.row(topologies.BE, t, topologies.KindSwitch)
			L.rowsFE[t] = g.row(topologies.FE, t, topologies.KindSwitch)
		}
	}
	widest := func(rows [][]*gbox) float64 {
		w := 0.0
		for _, r := range rows {
			w = max(w, float64(len(r))*(boxW+gapX))
		}
		return w
	}
	L.beW, L.feW = max(widest(L.rowsBE), boxW+gapX), widest(L.rowsFE)
	L.beX0 = marginL
	L.feX0 = marginL + L.beW + regionGap
	L.y0 = titleH + float64(maxTier)*rowGap + boxH/2 + 10
	L.busY = L.y0 + boxH/2 + 16
	place := func(row []*gbox, x0, w, y float64) {
		rowW := float64(len(row)) * (boxW + gapX)
		x := x0 + (w-rowW)/2 + (boxW+gapX)/2
		for _, b := range row {
			b.x, b.y, b.w, b.h = x, y, boxW, boxH
			x += boxW + gapX
		}
	}
	for t := 0; t <= maxTier; t++ {
		y := L.y0 - float64(t)*rowGap
		place(L.rowsBE[t], L.beX0, L.beW, y)
		if t > 0 {
			place(L.rowsFE[t], L.feX0, L.feW, y)
		}
	}
	storageY := L.busY + 24 + float64(min(len(L.rowsFE[1]), 6))*5 + boxH/2
	place(L.rowsFE[0], L.feX0, L.feW, storageY)
	L.width = L.feX0 + L.feW + marginL
	if L.feW == 0 {
		L.width = L.beX0 + L.beW + marginL
	}
	L.height = L.y0 + boxH/2 + 40 + 56
	if len(L.rowsFE[0]) > 0 {
		L.height = max(L.height, storageY+boxH/2+56)
	}
	return L
}

// attach spreads the edges meeting one side of a box across that side,
// ordered by the x of their other end; it returns each edge's x there.
func attach(b *gbox, edges []*gedge, other func(*gedge) *gbox) map[*gedge]float64 {
	slices.SortStableFunc(edges, func(e, f *gedge) int { return cmp.Compare(other(e).x, other(f).x) })
	out := map[*gedge]float64{}
	span := b.w - 16
	for i, e := range edges {
		if len(edges) == 1 {
			out[e] = b.x
			continue
		}
		out[e] = b.x - span/2 + span*float64(i)/float64(len(edges)-1)
	}
	return out
}

func (g *graph) writeSVG(w io.Writer) error {
	L := g.layout()
	bw := bufio.NewWriter(w)
	s := g.t.Summary()
	fmt.Fprintf(bw, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="Helvetica, Arial, sans-serif">`+"\n",
		L.width, L.height, L.width, L.height)
	fmt.Fprintf(bw, `<rect width="100%%" height="100%%" fill="#ffffff"/>`+"\n")
	fmt.Fprintf(bw, `<text x="20" y="30" font-size="18" font-weight="bold" fill="#1c2833">%s</text>`+"\n", esc(g.t.Name))
	fmt.Fprintf(bw, `<text x="20" y="50" font-size="12" fill="#566573">%d hosts · %d GPUs · %d switches · %d storage · %d links</text>`+"\n",
		s.Hosts, s.GPUs, s.Switches, s.Storage, s.Links)
	// Legend.
	lx := L.width - 250
	fmt.Fprintf(bw, `<line x1="%.0f" y1="26" x2="%.0f" y2="26" stroke="%s" stroke-width="2.5"/><text x="%.0f" y="30" font-size="12" fill="#1c2833">back-end (RoCE)</text>`+"\n", lx, lx+28, beColor, lx+34)
	fmt.Fprintf(bw, `<line x1="%.0f" y1="46" x2="%.0f" y2="46" stroke="%s" stroke-width="2" stroke-dasharray="5 3"/><text x="%.0f" y="50" font-size="12" fill="#1c2833">front-end</text>`+"\n", lx, lx+28, feColor, lx+34)

	// Region captions.
	fmt.Fprintf(bw, `<text x="%.0f" y="%.0f" font-size="12" font-weight="bold" fill="%s" text-anchor="middle">BACK-END</text>`+"\n", L.beX0+L.beW/2, L.height-14, beColor)
	if L.feW > 0 {
		fmt.Fprintf(bw, `<text x="%.0f" y="%.0f" font-size="12" font-weight="bold" fill="%s" text-anchor="middle">FRONT-END</text>`+"\n", L.feX0+L.feW/2, L.height-14, feColor)
	}

	// Edges: attachment points first.
	tops := map[*gbox][]*gedge{}
	bottoms := map[*gbox][]*gedge{}
	busEdges := map[*gbox][]*gedge{}
	for _, e := range g.edges {
		if e.plane == topologies.FE && e.a.kind == topologies.KindHost {
			busEdges[e.a] = append(busEdges[e.a], e)
			bottoms[e.b] = append(bottoms[e.b], e)
			continue
		}
		lower, upper := e.a, e.b
		if lower.y < upper.y { // storage below its switch: a is drawn lower on screen
			lower, upper = upper, lower
		}
		tops[lower] = append(tops[lower], e)
		bottoms[upper] = append(bottoms[upper], e)
	}
	other := func(b *gbox) func(*gedge) *gbox {
		return func(e *gedge) *gbox {
			if e.a == b {
				return e.b
			}
			return e.a
		}
	}
	topX, botX, busX := map[*gedge]float64{}, map[*gedge]float64{}, map[*gedge]float64{}
	for b, es := range tops {
		for e, x := range attach(b, es, other(b)) {
			topX[e] = x
		}
	}
	for b, es := range bottoms {
		for e, x := range attach(b, es, other(b)) {
			botX[e] = x
		}
	}
	for b, es := range busEdges {
		for e, x := range attach(b, es, other(b)) {
			busX[e] = x
		}
	}
	lane := map[*gbox]float64{}
	for i, b := range L.rowsFE[1] {
		lane[b] = float64(i%6) * 5
	}
	// Parallel-link counts (×N) are labelled where the edges between two
	// rows are few enough to read; the margins give each layer's total.
	pairEdges := map[[2]int]int{}
	rowKey := func(b *gbox) int {
		k := b.tier * 2
		if b.plane == topologies.FE {
			k++
		}
		return k
	}
	for _, e := range g.edges {
		pairEdges[[2]int{rowKey(e.a), rowKey(e.b)}]++
	}
	var labels []string
	for _, plane := range []topologies.Plane{topologies.FE, topologies.BE} {
		for _, e := range g.edges {
			if e.plane != plane {
				continue
			}
			width := 1.2 + min(float64(e.count), 8)*0.25
			style := fmt.Sprintf(`stroke="%s" stroke-width="%.2f" fill="none"`, beColor, width)
			if plane == topologies.FE {
				style = fmt.Sprintf(`stroke="%s" stroke-width="%.2f" fill="none" stroke-dasharray="5 3" opacity="0.85"`, feColor, width)
			}
			var mx, my float64
			if x, ok := busX[e]; ok {
				up := e.b
				by := L.busY + lane[up]
				ux := botX[e]
				fmt.Fprintf(bw, `<path d="M%.1f %.1f V%.1f H%.1f V%.1f" %s/>`+"\n", x, e.a.y+e.a.h/2, by, ux, up.y+up.h/2, style)
				mx, my = ux, (by+up.y+up.h/2)/2
			} else {
				lower, upper := e.a, e.b
				if lower.y < upper.y {
					lower, upper = upper, lower
				}
				x1, y1 := topX[e], lower.y-lower.h/2
				x2, y2 := botX[e], upper.y+upper.h/2
				ym := (y1 + y2) / 2
				fmt.Fprintf(bw, `<path d="M%.1f %.1f C%.1f %.1f %.1f %.1f %.1f %.1f" %s/>`+"\n", x1, y1, x1, ym, x2, ym, x2, y2, style)
				mx, my = (x1+x2)/2, ym
			}
			if e.count > 1 && pairEdges[[2]int{rowKey(e.a), rowKey(e.b)}] <= 12 {
				labels = append(labels, fmt.Sprintf(`<text x="%.1f" y="%.1f" font-size="10" text-anchor="middle" fill="#1c2833" stroke="#ffffff" stroke-width="3" paint-order="stroke">×%d</text>`, mx, my+3, e.count))
			}
		}
	}
	for _, l := range labels {
		bw.WriteString(l + "\n")
	}

	// Layer summaries in the margins: "512 × 400G".
	for t := 1; t < len(L.rowsBE); t++ {
		if txt := g.layerSummary(L.rowsBE[t-1], L.rowsBE[t]); txt != "" {
			y := L.y0 - (float64(t)-0.5)*rowGap
			fmt.Fprintf(bw, `<text x="%.0f" y="%.0f" font-size="11" fill="%s" text-anchor="end">%s</text>`+"\n", marginL-12, y+4, beColor, esc(txt))
		}
		if t < len(L.rowsFE) && L.feW > 0 {
			lower := L.rowsFE[t-1]
			if t == 1 {
				lower = append(slices.Clone(L.rowsBE[0]), L.rowsFE[0]...)
			}
			if txt := g.layerSummary(lower, L.rowsFE[t]); txt != "" {
				y := L.y0 - (float64(t)-0.5)*rowGap
				fmt.Fprintf(bw, `<text x="%.0f" y="%.0f" font-size="11" fill="%s">%s</text>`+"\n", L.feX0+L.feW+12, y+4, feColor, esc(txt))
			}
		}
	}

	// Boxes.
	for _, b := range g.boxes {
		fill, stroke := hostFill, "#7f8c8d"
		switch {
		case b.kind == topologies.KindSwitch && b.plane == topologies.BE:
			fill, stroke = beSwitchFill, beColor
		case b.kind == topologies.KindSwitch:
			fill, stroke = feSwitchFill, feColor
		case b.kind == topologies.KindStorage:
			fill, stroke = "#eaf2f8", feColor
		}
		dash := ""
		if b.elided > 0 {
			dash = ` stroke-dasharray="3 2"`
		}
		rx := 6
		if b.kind == topologies.KindStorage {
			rx = 14
		}
		fmt.Fprintf(bw, `<g><title>%s</title><rect x="%.1f" y="%.1f" width="%.0f" height="%.0f" rx="%d" fill="%s" stroke="%s" stroke-width="1.3"%s/>`,
			esc(g.tooltip(b)), b.x-b.w/2, b.y-b.h/2, b.w, b.h, rx, fill, stroke, dash)
		fmt.Fprintf(bw, `<text x="%.1f" y="%.1f" font-size="12" font-weight="bold" text-anchor="middle" fill="#1c2833">%s</text>`, b.x, b.y-3, esc(fit(b.label(), 14)))
		fmt.Fprintf(bw, `<text x="%.1f" y="%.1f" font-size="10" text-anchor="middle" fill="#566573">%s</text></g>`+"\n", b.x, b.y+12, esc(fit(b.sub(), 17)))
	}
	bw.WriteString("</svg>\n")
	return bw.Flush()
}

// tooltip lists a box's members.
func (g *graph) tooltip(b *gbox) string {
	var names []string
	for _, m := range b.members {
		names = append(names, m.Name)
	}
	if len(names) > 12 {
		names = append(names[:10], "…", names[len(names)-1])
	}
	return strings.Join(names, ", ")
}

func fit(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

func esc(s string) string { return html.EscapeString(s) }
