package report

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"image"
	"image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/telemetry"
	"github.com/rocelab/rocelab/endpoint/collective"
	"github.com/rocelab/rocelab/lab/simulation/simlab"
	"gonum.org/v1/plot"
)

// svgDoc is what a test reads of a rendered SVG: its size, its texts
// (each must have a textLength), and the palette colours its paths stroke
// and fill.
type svgDoc struct {
	width, height string
	texts         []string
	strokes       map[string]int // palette index → paths
	fills         map[string]int
}

// parseSVG decodes an SVG document with encoding/xml.
func parseSVG(t *testing.T, data []byte) svgDoc {
	t.Helper()
	doc := svgDoc{strokes: map[string]int{}, fills: map[string]int{}}
	dec := xml.NewDecoder(bytes.NewReader(data))
	inText, root := false, true
	var text strings.Builder
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("svg does not parse: %v", err)
		}
		switch e := tok.(type) {
		case xml.StartElement:
			attr := func(name string) string {
				for _, a := range e.Attr {
					if a.Name.Local == name {
						return a.Value
					}
				}
				return ""
			}
			switch e.Name.Local {
			case "svg":
				if !root {
					t.Fatal("nested svg element")
				}
				root = false
				doc.width, doc.height = attr("width"), attr("height")
			case "text":
				if attr("textLength") == "" {
					t.Errorf("a text element has no textLength: %v", e.Attr)
				}
				inText = true
				text.Reset()
			case "path":
				for _, st := range strings.Split(attr("style"), ";") {
					k, v, _ := strings.Cut(st, ":")
					if c := paletteIndex(v); c != "" && k == "stroke" {
						doc.strokes[c]++
					} else if c != "" && k == "fill" {
						doc.fills[c]++
					}
				}
			}
		case xml.CharData:
			if inText {
				text.Write(e)
			}
		case xml.EndElement:
			if e.Name.Local == "text" {
				inText = false
				doc.texts = append(doc.texts, text.String())
			}
		}
	}
	if root {
		t.Fatal("no svg element")
	}
	return doc
}

// paletteIndex names the palette colour of an SVG colour ("#1F77B4"), or
// returns "".
func paletteIndex(v string) string {
	for i, c := range palette {
		if strings.EqualFold(v, fmt.Sprintf("#%02x%02x%02x", c.R, c.G, c.B)) {
			return fmt.Sprint(i)
		}
	}
	return ""
}

// checkPNG decodes a PNG, checks its size and returns how many of its
// pixels are of each palette colour (exactly, as fills are).
func checkPNG(t *testing.T, data []byte, w, h int) map[int]int {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("png does not decode: %v", err)
	}
	if b := img.Bounds(); b.Dx() != w || b.Dy() != h {
		t.Fatalf("png is %dx%d, want %dx%d", b.Dx(), b.Dy(), w, h)
	}
	return colourCount(img)
}

func colourCount(img image.Image) map[int]int {
	n := map[int]int{}
	b := img.Bounds()
	nonWhite := 0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if r>>8 != 255 || g>>8 != 255 || bl>>8 != 255 {
				nonWhite++
			}
			for i, c := range palette {
				if uint8(r>>8) == c.R && uint8(g>>8) == c.G && uint8(bl>>8) == c.B {
					n[i]++
				}
			}
		}
	}
	n[-1] = nonWhite
	return n
}

// TestRender draws each kind of figure from known series and checks both
// outputs: the SVG parses, has the title, axis labels and legend entries,
// and draws each series in its own palette colour; the PNG decodes at
// the figure's size, is not blank and shows the series' colours.
func TestRender(t *testing.T) {
	for _, tc := range []struct {
		fig    *figure
		texts  []string // texts the SVG must hold
		series int      // distinct palette colours drawn
		stroke bool     // series are stroked (lines), else filled
	}{{
		fig: &figure{Title: "queues", XLabel: "fabric time (µs)", YLabel: "queue depth (KB)", XMax: 10, Lines: []lineSeries{
			{Name: "sw1:p1→sw2 tc3", X: []float64{0, 5, 10}, Y: []float64{0, 300, 100}, Step: true, Width: 1},
			{Name: "sw2:p1→r tc3", X: []float64{0, 5, 9}, Y: []float64{50, 250, 0}},
			{Name: "sw2:p2→vr tc3", X: []float64{0, 4, 8}, Y: []float64{0, 20, math.NaN()}},
		}},
		texts:  []string{"queues", "fabric time (µs)", "queue depth (KB)", "sw1:p1→sw2 tc3", "sw2:p1→r tc3", "sw2:p2→vr tc3"},
		series: 3, stroke: true,
	}, {
		fig: &figure{Title: "pfc", XLabel: "fabric time (µs)", XMax: 10, Kinds: pfcKinds, Rows: []bandRow{
			{Name: "sw2:p5→sw1 sends XOFF p3", Spans: [][2]float64{{2, 4}, {6, 9}}, Kind: PauseXOFF},
			{Name: "sw1:p5→sw2 paused p3", Spans: [][2]float64{{2.1, 4.2}}, Kind: PauseEgress},
		}},
		texts:  []string{"pfc", "sw2:p5→sw1 sends XOFF p3", "sw1:p5→sw2 paused p3", pfcKinds[PauseXOFF].Name, pfcKinds[PauseEgress].Name},
		series: 2,
	}, {
		fig: &figure{Title: "busbw", XLabel: "message size", YLabel: "busbw (Gb/s)", Categories: []string{"1MB", "4MB", "16MB"},
			Groups: []barGroup{{Name: "ar", Values: []float64{100, 200, 300}}, {Name: "a2a", Values: []float64{math.NaN(), 150, 250}}}},
		texts:  []string{"busbw", "message size", "busbw (Gb/s)", "1MB", "16MB", "ar", "a2a", "300", "250"},
		series: 2,
	}} {
		t.Run(tc.fig.Title, func(t *testing.T) {
			svg, pngData, err := tc.fig.render()
			if err != nil {
				t.Fatal(err)
			}
			doc := parseSVG(t, svg)
			w, h := tc.fig.size()
			if want := fmt.Sprintf("%gpt", w.Points()); doc.width != want {
				t.Errorf("svg width %q, want %q", doc.width, want)
			}
			for _, s := range tc.texts {
				if !slices.Contains(doc.texts, s) {
					t.Errorf("svg lacks the text %q (has %q)", s, doc.texts)
				}
			}
			if slices.Contains(doc.texts, pfcKinds[PauseNIC].Name) {
				t.Errorf("legend names a band kind no row has")
			}
			drawn := doc.fills
			if tc.stroke {
				drawn = doc.strokes
			}
			if len(drawn) != tc.series {
				t.Errorf("svg draws %d palette colours %v, want %d series", len(drawn), drawn, tc.series)
			}
			px := checkPNG(t, pngData, int(w.Dots(pngDPI)), int(h.Dots(pngDPI)))
			if px[-1] < 1000 {
				t.Errorf("png nearly blank: %d non-white pixels", px[-1])
			}
			for c := range drawn {
				var i int
				fmt.Sscan(c, &i)
				if px[i] < 20 {
					t.Errorf("png has %d pixels of series colour %d", px[i], i)
				}
			}
		})
	}
}

// TestRenderDegenerate draws figures with nothing or a single point to
// draw: they render, with their title, and the PNG is not blank.
func TestRenderDegenerate(t *testing.T) {
	for _, fig := range []*figure{
		{Title: "no points", XLabel: "t", XMax: 10, Lines: []lineSeries{{Name: "empty"}}},
		{Title: "one point", XLabel: "t", XMax: 10, Lines: []lineSeries{{Name: "one", X: []float64{3}, Y: []float64{7}}}},
		{Title: "one step", XLabel: "t", Lines: []lineSeries{{Name: "one", X: []float64{0}, Y: []float64{7}, Step: true, Width: 1}}},
		{Title: "all zero", XLabel: "t", XMax: 10, Lines: []lineSeries{{Name: "z", X: []float64{0, 1}, Y: []float64{0, 0}}}},
		{Title: "no spans", XLabel: "t", XMax: 10, Kinds: pfcKinds, Rows: []bandRow{{Name: "r"}}},
		{Title: "all NaN", XLabel: "size", Categories: []string{"1MB"}, Groups: []barGroup{{Name: "j", Values: []float64{math.NaN()}}}},
	} {
		t.Run(fig.Title, func(t *testing.T) {
			svg, pngData, err := fig.render()
			if err != nil {
				t.Fatal(err)
			}
			if doc := parseSVG(t, svg); !slices.Contains(doc.texts, fig.Title) {
				t.Errorf("svg lacks the title: %q", doc.texts)
			}
			w, h := fig.size()
			if px := checkPNG(t, pngData, int(w.Dots(pngDPI)), int(h.Dots(pngDPI))); px[-1] < 500 {
				t.Errorf("png nearly blank: %d non-white pixels", px[-1])
			}
			if fig.Title == "one point" {
				// The legend sits on the right: look left of it.
				img := mustPNG(t, pngData).(interface {
					image.Image
					SubImage(image.Rectangle) image.Image
				})
				b := img.Bounds()
				b.Max.X = b.Min.X + b.Dx()*3/4
				if px := colourCount(img.SubImage(b)); px[0] < 10 {
					t.Errorf("the single point is not drawn: %d pixels of its colour", px[0])
				}
			}
		})
	}
}

func mustPNG(t *testing.T, data []byte) image.Image {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	return img
}

func TestNiceTicks(t *testing.T) {
	labels := func(ts []plot.Tick) []string {
		var out []string
		for _, tk := range ts {
			if tk.Label != "" {
				out = append(out, tk.Label)
			}
		}
		return out
	}
	for _, tc := range []struct {
		lo, hi float64
		want   []string
		minors int
	}{
		{0, 2000, []string{"0", "500", "1000", "1500", "2000"}, 16},
		{0, 4.8, []string{"0", "1", "2", "3", "4"}, 20},
		{0, 0.3, []string{"0", "0.05", "0.1", "0.15", "0.2", "0.25", "0.3"}, 24},
		{-0.5, 2.5, []string{"-0.5", "0", "0.5", "1", "1.5", "2", "2.5"}, 24},
		{3, 3, []string{"3"}, 0},
	} {
		ts := niceTicks{}.Ticks(tc.lo, tc.hi)
		if d := cmp.Diff(tc.want, labels(ts)); d != "" {
			t.Errorf("ticks(%v, %v) labels: %s", tc.lo, tc.hi, d)
		}
		if n := len(ts) - len(tc.want); n != tc.minors {
			t.Errorf("ticks(%v, %v): %d minor ticks, want %d", tc.lo, tc.hi, n, tc.minors)
		}
	}
}

// TestWritePlots writes the plots of a small run's data and checks each
// file pair: the queue plot names the hottest queue, the PFC plot has a
// row per paused link direction, the busbw plot each size.
func TestWritePlots(t *testing.T) {
	us := func(n int) clock.Time { return clock.Time(0).Add(clock.Duration(n) * clock.Microsecond) }
	lbl := func(kv ...string) []telemetry.Label {
		var l []telemetry.Label
		for i := 0; i < len(kv); i += 2 {
			l = append(l, telemetry.Label{Name: kv[i], Value: kv[i+1]})
		}
		return l
	}
	var q, xoff, nic simlab.Series
	q = simlab.Series{Name: "switch_queue_depth_bytes", Labels: lbl("node", "sw1", "port", "0", "tc", "3"), Width: 10 * clock.Microsecond}
	xoff = simlab.Series{Name: "switch_pg_xoff", Labels: lbl("node", "sw2", "port", "4", "pg", "3"), Width: 10 * clock.Microsecond}
	nic = simlab.Series{Name: "nic_paused", Labels: lbl("node", "h1", "prio", "3"), Width: 10 * clock.Microsecond}
	for i := range 100 {
		v := float64(min(i, 50) * 20_000)
		q.Points = append(q.Points, simlab.Point{T: us(10 * i), V: v, Max: v})
		on := float64(0)
		if i >= 30 && i < 60 {
			on = 1
		}
		xoff.Points = append(xoff.Points, simlab.Point{T: us(10 * i), V: on, Max: on})
		nic.Points = append(nic.Points, simlab.Point{T: us(10 * i), V: on, Max: on})
	}
	q.Totals.Max = 1e6
	d := Data{Verdict: Verdict{FabricTime: clock.Millisecond}, Series: []simlab.Series{q, xoff, nic},
		Jobs: []Job{{Name: "ar", Kind: "collective", Collective: []collective.Result{{Size: 1 << 20, BusBW: 10}, {Size: 4 << 20, BusBW: 20}}}}}
	dir := t.TempDir()
	names, err := writePlots(dir, d)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"queues", "pfc", "busbw"}, names); d != "" {
		t.Fatalf("plots: %s", d)
	}
	for name, texts := range map[string][]string{
		"queues": {"queue depth (KB)", "fabric time (µs)", "sw1:0 tc3"},
		"pfc":    {"sw2:4 sends XOFF p3", "h1 NIC paused p3", pfcKinds[PauseXOFF].Name, pfcKinds[PauseNIC].Name},
		"busbw":  {"1MB", "4MB", "busbw (Gb/s)", "160"},
	} {
		svg, err := os.ReadFile(filepath.Join(dir, name+".svg"))
		if err != nil {
			t.Fatal(err)
		}
		doc := parseSVG(t, svg)
		for _, s := range texts {
			if !slices.Contains(doc.texts, s) {
				t.Errorf("%s.svg lacks %q (has %q)", name, s, doc.texts)
			}
		}
		pngData, err := os.ReadFile(filepath.Join(dir, name+".png"))
		if err != nil {
			t.Fatal(err)
		}
		if px := colourCount(mustPNG(t, pngData)); px[-1] < 1000 {
			t.Errorf("%s.png nearly blank", name)
		}
	}
}
