package flame

import (
	"bufio"
	"encoding/xml"
	"fmt"
	"hash/fnv"
	"io"
	"maps"
	"math"
	"slices"
	"strings"
)

// Frame is one box of a flame graph: a function at a depth of the stacks
// that share the frames below it.
type Frame struct {
	// Name is the function (the root frame is "all").
	Name string
	// Path is the frames from the root's first child to this one, joined
	// by ";": the frame's identity when two profiles are compared.
	Path string
	// Depth is 0 for the root, 1 for the stacks' first frames, ...
	Depth int
	// Offset is the samples of the frames left of this one at its depth
	// (its x), Samples the samples of the stacks through it (its width).
	Offset, Samples int64
}

// node is a frame of the call tree.
type node struct {
	name     string
	total    int64
	children map[string]*node
}

func (n *node) child(name string) *node {
	c := n.children[name]
	if c == nil {
		c = &node{name: name, children: make(map[string]*node)}
		n.children[name] = c
	}
	return c
}

// Frames lays the profile out: every frame of its call tree, parents
// before children, siblings ordered by name (so that two profiles of the
// same code line up), each with its offset and width in samples.
func Frames(p *Profile) []Frame {
	root := &node{name: "all", children: make(map[string]*node)}
	for stack, n := range p.Stacks {
		root.total += n
		at := root
		for _, f := range strings.Split(stack, ";") {
			at = at.child(f)
			at.total += n
		}
	}
	var out []Frame
	var walk func(n *node, path string, depth int, off int64)
	walk = func(n *node, path string, depth int, off int64) {
		out = append(out, Frame{Name: n.name, Path: path, Depth: depth, Offset: off, Samples: n.total})
		for _, name := range slices.Sorted(maps.Keys(n.children)) {
			c := n.children[name]
			p := name
			if path != "" {
				p = path + ";" + name
			}
			walk(c, p, depth+1, off)
			off += c.total
		}
	}
	walk(root, "", 0, 0)
	return out
}

// Options are a flame graph's title and size.
type Options struct {
	// Title is drawn above the graph.
	Title string
	// Width is the width in pixels (DefaultWidth when 0).
	Width int
}

// Drawing constants.
const (
	// DefaultWidth is a flame graph's width in pixels.
	DefaultWidth = 1200
	frameHeight  = 16
	top          = 36 // the title's band
	bottom       = 8
	// minWidth hides frames narrower than this many pixels: they would be
	// a line of unreadable slivers.
	minWidth = 0.3
)

// WriteSVG draws p as a flame graph: the root at the bottom, each frame
// over its caller, as wide as its share of the samples, coloured by its
// name. Each frame's title (shown on hover) names the function, its
// samples and share; a click zooms on a frame, a click on the root
// zooms out.
func WriteSVG(w io.Writer, p *Profile, opts Options) error {
	return writeSVG(w, p, nil, opts)
}

// WriteDiffSVG draws p as a flame graph coloured by the change of each
// frame's share of the samples from base to p: red where it grew, blue
// where it shrank, the deeper the larger the change; a frame's title
// gives both shares.
func WriteDiffSVG(w io.Writer, p, base *Profile, opts Options) error {
	if base.Total() == 0 {
		return fmt.Errorf("baseline: %w", ErrEmpty)
	}
	return writeSVG(w, p, base, opts)
}

func writeSVG(w io.Writer, p, base *Profile, opts Options) error {
	total := p.Total()
	if total == 0 {
		return ErrEmpty
	}
	width := opts.Width
	if width <= 0 {
		width = DefaultWidth
	}
	frames := Frames(p)
	var baseShare map[string]float64
	var maxDelta float64
	if base != nil {
		baseShare = make(map[string]float64)
		bt := float64(base.Total())
		for _, f := range Frames(base) {
			baseShare[f.Path] = float64(f.Samples) / bt
		}
		for _, f := range frames {
			maxDelta = math.Max(maxDelta, math.Abs(float64(f.Samples)/float64(total)-baseShare[f.Path]))
		}
	}
	scale := float64(width-20) / float64(total)
	depth := 0
	for _, f := range frames {
		if float64(f.Samples)*scale >= minWidth {
			depth = max(depth, f.Depth)
		}
	}
	height := top + (depth+1)*frameHeight + bottom
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, `<?xml version="1.0" standalone="no"?>
<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="Verdana,sans-serif" font-size="12" onload="init()">
<style>.f{cursor:pointer}.f:hover rect{stroke:#000;stroke-width:.5}text{pointer-events:none}</style>
<rect width="100%%" height="100%%" fill="#f8f8f8"/>
<text x="%d" y="22" text-anchor="middle" font-size="16">%s</text>
<g id="frames">
`, width, height, width, height, width/2, esc(opts.Title))
	for _, f := range frames {
		fw := float64(f.Samples) * scale
		if fw < minWidth {
			continue
		}
		x := 10 + float64(f.Offset)*scale
		y := height - bottom - (f.Depth+1)*frameHeight
		share := float64(f.Samples) / float64(total)
		title := fmt.Sprintf("%s\n%d samples, %.2f%%", f.Name, f.Samples, 100*share)
		fill := nameColour(f.Name)
		if base != nil {
			b := baseShare[f.Path]
			title += fmt.Sprintf("\nbaseline %.2f%%, %+.2f points", 100*b, 100*(share-b))
			fill = diffColour(share-b, maxDelta)
		}
		if f.Depth == 0 {
			fill = "rgb(230,230,230)"
		}
		fmt.Fprintf(bw, `<g class="f" data-x="%.2f" data-w="%.2f" data-d="%d"><title>%s</title><rect x="%.2f" y="%d" width="%.2f" height="%d" fill="%s" rx="2"/><text x="%.2f" y="%d">%s</text></g>
`, x, fw, f.Depth, esc(title), x, y, fw, frameHeight-1, fill, x+3, y+frameHeight-4, esc(fit(f.Name, fw)))
	}
	fmt.Fprintf(bw, "</g>\n<script><![CDATA[%s]]></script>\n</svg>\n", strings.ReplaceAll(zoomScript, "WIDTH", fmt.Sprint(width)))
	return bw.Flush()
}

// zoomScript zooms on a clicked frame: the frame and what it calls fill
// the width, its callers span it, the rest is hidden; a click on the root
// shows everything again. Labels are cut to the frames' new widths.
const zoomScript = `
function init(){for(const g of document.querySelectorAll('.f')){g.dataset.n=g.querySelector('title').textContent.split('\n')[0];g.addEventListener('click',()=>zoom(g));}}
function zoom(z){const W=WIDTH-20,zx=+z.dataset.x,zw=+z.dataset.w,zd=+z.dataset.d;
for(const g of document.querySelectorAll('.f')){const x=+g.dataset.x,w=+g.dataset.w,d=+g.dataset.d;
let nx=10+(x-zx)/zw*W,nw=w/zw*W;
if(d<zd){if(x+w<=zx||x>=zx+zw){g.style.display='none';continue}nx=10;nw=W}
else if(x+w<=zx+1e-6||x>=zx+zw-1e-6){g.style.display='none';continue}
g.style.display='';const r=g.querySelector('rect'),t=g.querySelector('text');r.setAttribute('x',nx);r.setAttribute('width',nw);t.setAttribute('x',nx+3);
const n=g.dataset.n,c=Math.floor((nw-6)/7);t.textContent=c<3?'':(n.length<=c?n:n.slice(0,c-2)+'..')}}
`

// fit cuts a frame's label to its width (about 7 pixels a character).
func fit(name string, width float64) string {
	c := int((width - 6) / 7)
	if c < 3 {
		return ""
	}
	if r := []rune(name); len(r) > c {
		return string(r[:c-2]) + ".."
	}
	return name
}

// nameColour is a warm colour derived from a frame's name, so that a
// function has the same colour in every graph.
func nameColour(name string) string {
	h := fnv.New32a()
	h.Write([]byte(name))
	v := h.Sum32()
	return fmt.Sprintf("rgb(%d,%d,%d)", 205+v%50, 80+(v>>8)%150, 40+(v>>16)%50)
}

// diffColour is red for a grown share, blue for a shrunk one, white for
// no change, saturated at the largest change of the graph.
func diffColour(delta, maxDelta float64) string {
	if maxDelta == 0 || delta == 0 {
		return "rgb(250,250,250)"
	}
	k := int(math.Round(200 * math.Min(1, math.Abs(delta)/maxDelta)))
	if delta > 0 {
		return fmt.Sprintf("rgb(255,%d,%d)", 250-k, 250-k)
	}
	return fmt.Sprintf("rgb(%d,%d,255)", 250-k, 250-k)
}

// esc escapes text for XML.
func esc(s string) string {
	var b strings.Builder
	xml.EscapeText(&b, []byte(s))
	return b.String()
}
