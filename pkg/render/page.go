package render

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

// Picture is one drawing of a page, an SVG whose letters are paths
// (PlotSVG).
type Picture struct {
	// Title says what it shows.
	Title string
	// SVG is the drawing.
	SVG []byte
}

// Section is part of a page, in this order: markdown, as the commands' md
// format prints it; a heading; pictures; HTML written by the caller
// (LinkTable's). Each part is optional.
type Section struct {
	Markdown []byte
	Heading  string
	Pictures []Picture
	HTML     []byte
}

// WritePage writes sections as one self-contained HTML page, titled
// title, in language lang ("en", "zh"): the markdown's tables and notes,
// the pictures drawn inline as SVG. The page loads nothing: no script, no
// stylesheet, no font, no image from anywhere, so it reads the same
// offline.
func WritePage(w io.Writer, lang, title string, sections ...Section) error {
	var page bytes.Buffer
	fmt.Fprintf(&page, "<!DOCTYPE html>\n<html lang=%q>\n<head>\n<meta charset=\"utf-8\">\n<title>%s</title>\n<style>\n%s\n</style>\n</head>\n<body>\n",
		lang, html.EscapeString(title), htmlStyle)
	for _, s := range sections {
		if s.Markdown != nil {
			page.Write(markdownHTML(s.Markdown))
		}
		if s.Heading != "" {
			fmt.Fprintf(&page, "<h2>%s</h2>\n", html.EscapeString(s.Heading))
		}
		for _, p := range s.Pictures {
			fmt.Fprintf(&page, "<figure>\n%s\n<figcaption>%s</figcaption>\n</figure>\n", InlineSVG(p.SVG), html.EscapeString(p.Title))
		}
		page.Write(s.HTML)
	}
	page.WriteString("</body>\n</html>\n")
	if _, err := w.Write(page.Bytes()); err != nil {
		return fmt.Errorf("write html: %w", err)
	}
	return nil
}

// markdownHTML renders markdown as HTML. The data in it (names, error
// messages) is text: its & and < are escaped first, so that nothing in a
// CSV can become markup. Typography is left as written (blackfriday's
// Smartypants would make the rounds "5/5" a fraction, a "--flag" a dash
// and an error's quotes curly).
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

// InlineSVG makes an SVG file an element of an HTML page: without the XML
// declaration and comment before it, and without namespace attributes
// (HTML knows svg), so the page names no URL at all.
func InlineSVG(svg []byte) []byte {
	svg = svgPrologue.ReplaceAll(svg, []byte("$1"))
	return svgNamespaces.ReplaceAll(svg, nil)
}

// Link is a table cell of LinkTable: text, linked to Href when set.
type Link struct{ Text, Href string }

// LinkTable is an HTML section of links: a heading, a note and a table
// whose cells may link to files beside the page (a report's flame
// graphs). Everything in it is escaped.
func LinkTable(title, note string, header []string, rows [][]Link) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "<h2>%s</h2>\n<p>%s</p>\n<table>\n<thead><tr>", html.EscapeString(title), html.EscapeString(note))
	for _, h := range header {
		fmt.Fprintf(&b, "<th>%s</th>", html.EscapeString(h))
	}
	b.WriteString("</tr></thead>\n<tbody>\n")
	for _, row := range rows {
		b.WriteString("<tr>")
		for _, c := range row {
			if c.Href != "" {
				fmt.Fprintf(&b, "<td><a href=\"%s\">%s</a></td>", html.EscapeString(c.Href), html.EscapeString(c.Text))
			} else {
				fmt.Fprintf(&b, "<td>%s</td>", html.EscapeString(c.Text))
			}
		}
		b.WriteString("</tr>\n")
	}
	b.WriteString("</tbody>\n</table>\n")
	return b.Bytes()
}
