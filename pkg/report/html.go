package report

import (
	"bytes"
	"fmt"
	"html"
	"io"
	"regexp"
	"strings"

	"github.com/russross/blackfriday/v2"
)

// htmlStyle is the page's only styling: the browser's own sans-serif
// font, no resource from anywhere.
const htmlStyle = `body{font-family:sans-serif;max-width:75em;margin:1em auto;padding:0 1em;color:#222;line-height:1.4}
table{border-collapse:collapse;margin:.5em 0;font-size:.85em;display:block;overflow-x:auto;max-width:100%}
th,td{border:1px solid #ccc;padding:2px 6px}
th{background:#f2f2f2}
td{font-variant-numeric:tabular-nums;white-space:nowrap}
figure{margin:1.5em 0}
figure svg{max-width:100%;height:auto;display:block}
figcaption{font-size:.9em;color:#555}`

// WriteHTML writes the report as one self-contained HTML page: the
// markdown's tables and notes, with the pictures (Pictures) drawn inline
// as SVG after the side-by-side tables. The page loads nothing: no
// script, no stylesheet, no font, no image from anywhere, so it reads the
// same offline.
func (r *Report) WriteHTML(w io.Writer) error {
	pics, err := r.Pictures()
	if err != nil {
		return err
	}
	var head, body bytes.Buffer
	m := r.mdWriter(&head)
	r.mdHead(m, false)
	m.w = &body
	r.mdBody(m)
	if m.err != nil {
		return m.err
	}
	l := langs[r.lang()]
	var figures bytes.Buffer
	fmt.Fprintf(&figures, "<h2>%s</h2>\n", html.EscapeString(l.pictures))
	for _, p := range pics {
		fmt.Fprintf(&figures, "<figure>\n%s\n<figcaption>%s</figcaption>\n</figure>\n", inlineSVG(p.SVG), html.EscapeString(p.Title))
	}
	return writePage(w, r.lang(), l.title, markdownHTML(head.Bytes()), figures.Bytes(), markdownHTML(body.Bytes()), r.profilesHTML())
}

// WriteMarkdownHTML writes markdown (tables and notes, as the commands'
// md format prints them) as one self-contained HTML page in the report's
// style, titled title, in language lang ("en", "zh").
func WriteMarkdownHTML(w io.Writer, lang, title string, md []byte) error {
	return writePage(w, lang, title, markdownHTML(md))
}

// writePage writes an HTML page of the parts, which are HTML already.
func writePage(w io.Writer, lang, title string, parts ...[]byte) error {
	var page bytes.Buffer
	fmt.Fprintf(&page, "<!DOCTYPE html>\n<html lang=%q>\n<head>\n<meta charset=\"utf-8\">\n<title>%s</title>\n<style>\n%s\n</style>\n</head>\n<body>\n",
		lang, html.EscapeString(title), htmlStyle)
	for _, p := range parts {
		page.Write(p)
	}
	page.WriteString("</body>\n</html>\n")
	if _, err := w.Write(page.Bytes()); err != nil {
		return fmt.Errorf("write html: %w", err)
	}
	return nil
}

// markdownHTML renders the report's markdown as HTML. The data in it
// (names, error messages) is text: its & and < are escaped first, so that
// nothing in a CSV can become markup. Typography is left as written
// (blackfriday's Smartypants would make the rounds "5/5" a fraction, a
// "--flag" a dash and an error's quotes curly).
func markdownHTML(md []byte) []byte {
	md = []byte(strings.NewReplacer("&", "&amp;", "<", "&lt;").Replace(string(md)))
	r := blackfriday.NewHTMLRenderer(blackfriday.HTMLRendererParameters{Flags: blackfriday.UseXHTML})
	return blackfriday.Run(md, blackfriday.WithRenderer(r),
		blackfriday.WithExtensions(blackfriday.Tables|blackfriday.NoIntraEmphasis|blackfriday.SpaceHeadings))
}

// svgPrologue is what comes before the <svg element; svgNamespaces are
// its namespace attributes, which HTML does not need.
var (
	svgPrologue   = regexp.MustCompile(`(?s)^.*?(<svg\b)`)
	svgNamespaces = regexp.MustCompile(`\s+xmlns(:\w+)?="[^"]*"`)
)

// inlineSVG makes an SVG file an element of an HTML page: without the XML
// declaration and comment before it, and without namespace attributes
// (HTML knows svg), so the page names no URL at all.
func inlineSVG(svg []byte) []byte {
	svg = svgPrologue.ReplaceAll(svg, []byte("$1"))
	return svgNamespaces.ReplaceAll(svg, nil)
}
