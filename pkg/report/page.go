package report

import (
	"bytes"
	"fmt"
	"html"
	"io"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
)

// PlotSVG draws a gonum plot as the report draws its pictures: an SVG
// whose letters are paths, the same in every browser.
func PlotSVG(p *plot.Plot, w, h vg.Length) ([]byte, error) { return svgOf(p, w, h) }

// Section is part of a page: markdown, as the commands' md format prints
// it, followed by pictures.
type Section struct {
	Markdown []byte
	Pictures []Picture
}

// WriteSectionsHTML writes sections as one self-contained HTML page in
// the report's style (see WriteHTML), titled title, in language lang:
// each section's markdown, then its pictures inline.
func WriteSectionsHTML(w io.Writer, lang, title string, sections []Section) error {
	var parts [][]byte
	for _, s := range sections {
		parts = append(parts, markdownHTML(s.Markdown))
		var figs bytes.Buffer
		for _, p := range s.Pictures {
			fmt.Fprintf(&figs, "<figure>\n%s\n<figcaption>%s</figcaption>\n</figure>\n", inlineSVG(p.SVG), html.EscapeString(p.Title))
		}
		parts = append(parts, figs.Bytes())
	}
	return writePage(w, lang, title, parts...)
}
