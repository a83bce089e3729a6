package report

import (
	"bytes"
	"image/png"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestTicks(t *testing.T) {
	for _, tc := range []struct {
		lo, hi float64
		n      int
		want   []float64
	}{
		{0, 20, 8, []float64{0, 2.5, 5, 7.5, 10, 12.5, 15, 17.5, 20}},
		{0, 4, 6, []float64{0, 1, 2, 3, 4}},
		{0, 1000, 8, []float64{0, 200, 400, 600, 800, 1000}},
	} {
		if d := cmp.Diff(tc.want, ticks(tc.lo, tc.hi, tc.n)); d != "" {
			t.Errorf("ticks(%v, %v, %d): %s", tc.lo, tc.hi, tc.n, d)
		}
	}
}

// TestRender draws each chart kind and checks both outputs: the SVG has
// the title, legend and a polyline; the PNG decodes at the chart's size
// and has coloured pixels of the first series.
func TestRender(t *testing.T) {
	for _, ch := range []*chart{
		{Title: "lines", XLabel: "t (µs)", YLabel: "KB", XMax: 10, Lines: []lineSeries{{Name: "q1", X: []float64{0, 5, 10}, Y: []float64{0, 3, 1}}}},
		{Title: "gantt", XLabel: "t", XMax: 10, Rows: []ganttRow{{Name: "sw1:p1", Spans: [][2]float64{{2, 4}}}}},
		{Title: "bars", XLabel: "size", Categories: []string{"1MB", "2MB"}, Groups: []barGroup{{Name: "j", Values: []float64{100, 200}}}},
	} {
		svg, pngData, err := ch.render()
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(svg), ">"+ch.Title+"<") || !strings.HasSuffix(string(svg), "</svg>\n") {
			t.Errorf("%s: svg lacks title or end", ch.Title)
		}
		img, err := png.Decode(bytes.NewReader(pngData))
		if err != nil {
			t.Fatal(err)
		}
		w, h := ch.size()
		if b := img.Bounds(); b.Dx() != w || b.Dy() != h {
			t.Errorf("%s: png %v, want %dx%d", ch.Title, b, w, h)
		}
		found := false
		for y := 0; y < h && !found; y++ {
			for x := 0; x < w; x++ {
				r, g, b, _ := img.At(x, y).RGBA()
				p := palette[0]
				if uint8(r>>8) == p.R && uint8(g>>8) == p.G && uint8(b>>8) == p.B {
					found = true
					break
				}
			}
		}
		if !found {
			t.Errorf("%s: no pixel of the first series' colour", ch.Title)
		}
	}
}
