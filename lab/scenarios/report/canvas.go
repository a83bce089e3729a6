package report

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"math"
	"strings"

	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"
)

// canvas is what a chart draws on: an SVG document or a PNG image. The
// origin is the top left; units are pixels.
type canvas interface {
	line(x1, y1, x2, y2 float64, c color.RGBA, width float64)
	polyline(pts [][2]float64, c color.RGBA, width float64)
	rect(x, y, w, h float64, fill color.RGBA)
	// text draws s with its baseline at y; anchor is 'l', 'm' or 'r'
	// (where x is); vertical text reads bottom to top, centred on (x, y).
	text(x, y float64, s string, anchor byte, c color.RGBA, vertical bool)
}

// Sizes of the font both backends use (basicfont 7×13 for PNG; SVG
// monospace at a size whose advance matches).
const (
	charW    = 7
	charH    = 13
	fontSize = 11.5
)

// svgCanvas writes SVG elements.
type svgCanvas struct {
	b    strings.Builder
	w, h int
}

func newSVG(w, h int) *svgCanvas {
	c := &svgCanvas{w: w, h: h}
	fmt.Fprintf(&c.b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="DejaVu Sans Mono, monospace" font-size="%g">`+"\n", w, h, w, h, fontSize)
	fmt.Fprintf(&c.b, `<rect x="0" y="0" width="%d" height="%d" fill="white"/>`+"\n", w, h)
	return c
}

func hex(c color.RGBA) string { return fmt.Sprintf("#%02x%02x%02x", c.R, c.G, c.B) }

func (c *svgCanvas) line(x1, y1, x2, y2 float64, col color.RGBA, w float64) {
	fmt.Fprintf(&c.b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="%g"/>`+"\n", x1, y1, x2, y2, hex(col), w)
}

func (c *svgCanvas) polyline(pts [][2]float64, col color.RGBA, w float64) {
	var b strings.Builder
	for i, p := range pts {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%.1f,%.1f", p[0], p[1])
	}
	fmt.Fprintf(&c.b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="%g" stroke-linejoin="round"/>`+"\n", b.String(), hex(col), w)
}

func (c *svgCanvas) rect(x, y, w, h float64, fill color.RGBA) {
	fmt.Fprintf(&c.b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"/>`+"\n", x, y, w, h, hex(fill))
}

func (c *svgCanvas) text(x, y float64, s string, anchor byte, col color.RGBA, vertical bool) {
	a := map[byte]string{'l': "start", 'm': "middle", 'r': "end"}[anchor]
	esc := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
	if vertical {
		fmt.Fprintf(&c.b, `<text x="%.1f" y="%.1f" text-anchor="middle" fill="%s" transform="rotate(-90 %.1f %.1f)">%s</text>`+"\n", x, y, hex(col), x, y, esc)
		return
	}
	fmt.Fprintf(&c.b, `<text x="%.1f" y="%.1f" text-anchor="%s" fill="%s">%s</text>`+"\n", x, y, a, hex(col), esc)
}

func (c *svgCanvas) bytes() []byte { return []byte(c.b.String() + "</svg>\n") }

// pngCanvas draws into an RGBA image.
type pngCanvas struct {
	img *image.RGBA
}

func newPNG(w, h int) *pngCanvas {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.Draw(img, img.Bounds(), image.White, image.Point{}, draw.Src)
	return &pngCanvas{img: img}
}

// dot paints a width×width square centred on (x, y).
func (c *pngCanvas) dot(x, y float64, col color.RGBA, w float64) {
	r := max(w/2, 0.5)
	x0, y0 := int(math.Round(x-r)), int(math.Round(y-r))
	x1, y1 := int(math.Round(x+r)), int(math.Round(y+r))
	if x1 == x0 {
		x1++
	}
	if y1 == y0 {
		y1++
	}
	draw.Draw(c.img, image.Rect(x0, y0, x1, y1), image.NewUniform(col), image.Point{}, draw.Over)
}

func (c *pngCanvas) line(x1, y1, x2, y2 float64, col color.RGBA, w float64) {
	n := int(math.Ceil(math.Max(math.Abs(x2-x1), math.Abs(y2-y1))))
	if n == 0 {
		c.dot(x1, y1, col, w)
		return
	}
	for i := 0; i <= n; i++ {
		t := float64(i) / float64(n)
		c.dot(x1+t*(x2-x1), y1+t*(y2-y1), col, w)
	}
}

func (c *pngCanvas) polyline(pts [][2]float64, col color.RGBA, w float64) {
	for i := 1; i < len(pts); i++ {
		c.line(pts[i-1][0], pts[i-1][1], pts[i][0], pts[i][1], col, w)
	}
	if len(pts) == 1 {
		c.dot(pts[0][0], pts[0][1], col, w)
	}
}

func (c *pngCanvas) rect(x, y, w, h float64, fill color.RGBA) {
	r := image.Rect(int(math.Round(x)), int(math.Round(y)), int(math.Round(x+w)), int(math.Round(y+h)))
	if r.Dx() == 0 && w > 0 {
		r.Max.X++
	}
	draw.Draw(c.img, r, image.NewUniform(fill), image.Point{}, draw.Over)
}

// asciiText replaces what basicfont cannot draw.
var asciiText = strings.NewReplacer("→", "->", "µ", "u", "…", "...", "—", "-", "×", "x")

func (c *pngCanvas) text(x, y float64, s string, anchor byte, col color.RGBA, vertical bool) {
	s = asciiText.Replace(s)
	width := len([]rune(s)) * charW
	if vertical {
		tmp := image.NewRGBA(image.Rect(0, 0, width, charH+3))
		d := font.Drawer{Dst: tmp, Src: image.NewUniform(col), Face: basicfont.Face7x13, Dot: fixed.P(0, charH-2)}
		d.DrawString(s)
		// Rotate 90° counter-clockwise, centred on (x, y).
		ox, oy := int(x)-(charH+3)/2, int(y)+width/2
		for ty := 0; ty < tmp.Bounds().Dy(); ty++ {
			for tx := 0; tx < width; tx++ {
				px := tmp.RGBAAt(tx, ty)
				if px.A == 0 {
					continue
				}
				c.img.SetRGBA(ox+ty, oy-tx, px)
			}
		}
		return
	}
	sx := x
	switch anchor {
	case 'm':
		sx -= float64(width) / 2
	case 'r':
		sx -= float64(width)
	}
	d := font.Drawer{Dst: c.img, Src: image.NewUniform(col), Face: basicfont.Face7x13, Dot: fixed.P(int(math.Round(sx)), int(math.Round(y)))}
	d.DrawString(s)
}

func (c *pngCanvas) bytes() ([]byte, error) {
	var b bytes.Buffer
	if err := png.Encode(&b, c.img); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
