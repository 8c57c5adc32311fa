package render

import (
	"bytes"
	"errors"
	"fmt"
	"math"

	"golang.org/x/image/font/sfnt"
	"golang.org/x/image/math/fixed"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// PlotSVG draws a gonum plot as an SVG whose letters are paths
// (outlineText), w wide and h high: the same in every browser and viewer,
// whatever fonts the machine has.
func PlotSVG(p *plot.Plot, w, h vg.Length) ([]byte, error) {
	c := &outlineText{Canvas: vgsvg.New(w, h)}
	p.Draw(draw.New(c))
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// outlineText is a canvas that draws text as the outlines of its glyphs,
// filled, instead of text elements: an SVG whose letters are paths shows
// the same in every viewer, while text elements are set in whatever font
// the viewer finds under the name, wider or narrower than the one the
// layout was measured with. It also keeps the box of every text it draws,
// in the canvas's coordinates, for the tests.
type outlineText struct {
	*vgsvg.Canvas
	m     affine   // the current transformation
	stack []affine // saved by Push
	boxes []textBox
}

// textBox is where a text was drawn: the four corners of its ink's box
// (the glyphs' outlines, control points included), counterclockwise from
// the bottom left, in the canvas's coordinates.
type textBox struct {
	text    string
	corners [4]vg.Point
}

// affine maps (x, y) to (a*x + b*y + e, c*x + d*y + f).
type affine struct{ a, b, c, d, e, f float64 }

var identity = affine{a: 1, d: 1}

func (m affine) apply(p vg.Point) vg.Point {
	x, y := float64(p.X), float64(p.Y)
	return vg.Point{X: vg.Length(m.a*x + m.b*y + m.e), Y: vg.Length(m.c*x + m.d*y + m.f)}
}

// then is m followed, in the drawing's own coordinates, by n: m·n.
func (m affine) then(n affine) affine {
	return affine{
		a: m.a*n.a + m.b*n.c, b: m.a*n.b + m.b*n.d,
		c: m.c*n.a + m.d*n.c, d: m.c*n.b + m.d*n.d,
		e: m.a*n.e + m.b*n.f + m.e, f: m.c*n.e + m.d*n.f + m.f,
	}
}

func (c *outlineText) cur() affine {
	if c.m == (affine{}) {
		return identity
	}
	return c.m
}

// Push implements vg.Canvas.
func (c *outlineText) Push() {
	c.stack = append(c.stack, c.cur())
	c.Canvas.Push()
}

// Pop implements vg.Canvas.
func (c *outlineText) Pop() {
	if n := len(c.stack); n > 0 {
		c.m, c.stack = c.stack[n-1], c.stack[:n-1]
	}
	c.Canvas.Pop()
}

// Translate implements vg.Canvas.
func (c *outlineText) Translate(pt vg.Point) {
	c.m = c.cur().then(affine{a: 1, d: 1, e: float64(pt.X), f: float64(pt.Y)})
	c.Canvas.Translate(pt)
}

// Rotate implements vg.Canvas.
func (c *outlineText) Rotate(rad float64) {
	sin, cos := math.Sincos(rad)
	c.m = c.cur().then(affine{a: cos, b: -sin, c: sin, d: cos})
	c.Canvas.Rotate(rad)
}

// Scale implements vg.Canvas.
func (c *outlineText) Scale(x, y float64) {
	c.m = c.cur().then(affine{a: x, d: y})
	c.Canvas.Scale(x, y)
}

// FillString implements vg.Canvas: the glyphs' outlines, filled in the
// current colour, placed and kerned as font.Face.Width measures them.
func (c *outlineText) FillString(f font.Face, pt vg.Point, str string) {
	path, err := glyphPath(f, pt, str)
	if err != nil {
		panic(fmt.Errorf("chart: text %q: %w", str, err)) // the embedded font lacks nothing it is asked for
	}
	if len(path) == 0 {
		return
	}
	c.Canvas.Fill(path)
	lo, hi := path[0].Pos, path[0].Pos
	for _, comp := range path {
		for _, p := range append([]vg.Point{comp.Pos}, comp.Control...) {
			if comp.Type == vg.CloseComp {
				continue
			}
			lo = vg.Point{X: min(lo.X, p.X), Y: min(lo.Y, p.Y)}
			hi = vg.Point{X: max(hi.X, p.X), Y: max(hi.Y, p.Y)}
		}
	}
	m := c.cur()
	c.boxes = append(c.boxes, textBox{text: str, corners: [4]vg.Point{
		m.apply(lo), m.apply(vg.Point{X: hi.X, Y: lo.Y}), m.apply(hi), m.apply(vg.Point{X: lo.X, Y: hi.Y}),
	}})
}

// glyphPath is the outline of str set in f with its baseline's origin at
// pt.
func glyphPath(f font.Face, pt vg.Point, str string) (vg.Path, error) {
	var (
		buf   sfnt.Buffer
		upem  = fixed.Int26_6(f.Face.UnitsPerEm()) // 1 unit of the results is 1 font unit
		scale = float64(f.Font.Size.Points()) / float64(upem)
		x     fixed.Int26_6
		prev  sfnt.GlyphIndex
		path  vg.Path
	)
	at := func(p fixed.Point26_6) vg.Point {
		// sfnt's y axis points down; the canvas's up.
		return vg.Point{X: pt.X + vg.Length(float64(x+p.X)*scale), Y: pt.Y - vg.Length(float64(p.Y)*scale)}
	}
	for i, r := range []rune(str) {
		idx, err := f.Face.GlyphIndex(&buf, r)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			k, err := f.Face.Kern(&buf, prev, idx, upem, 0)
			if err != nil && !errors.Is(err, sfnt.ErrNotFound) {
				return nil, err
			}
			x += k
		}
		segs, err := f.Face.LoadGlyph(&buf, idx, upem, nil)
		if err != nil {
			return nil, err
		}
		open := false
		for _, s := range segs {
			switch s.Op {
			case sfnt.SegmentOpMoveTo:
				if open {
					path.Close()
				}
				path.Move(at(s.Args[0]))
				open = true
			case sfnt.SegmentOpLineTo:
				path.Line(at(s.Args[0]))
			case sfnt.SegmentOpQuadTo:
				path.QuadTo(at(s.Args[0]), at(s.Args[1]))
			case sfnt.SegmentOpCubeTo:
				path.CubeTo(at(s.Args[0]), at(s.Args[1]), at(s.Args[2]))
			}
		}
		if open {
			path.Close()
		}
		adv, err := f.Face.GlyphAdvance(&buf, idx, upem, 0)
		if err != nil {
			return nil, err
		}
		x += adv
		prev = idx
	}
	return path, nil
}
