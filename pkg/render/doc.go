// Package render draws what kvbench's commands print, from plain values,
// for every command alike: markdown tables (Doc, WriteTable), the
// self-contained HTML page (WritePage: markdown, pictures inline, no
// resource from anywhere), SVG plots whose letters are paths (PlotSVG,
// the report's bar chart and its other pictures), the report's words in
// each language (Labels), and the output formats (Format) with the one
// table per command that parses --format and dispatches to a writer
// (Writers).
//
// It knows no statistics and imports no model: package report computes
// the report and assembles its documents from render's parts; compare
// and history print their tables, pages and plots with the same parts,
// so every command's markdown and HTML look alike. A picture's data
// (BarChart, LatencyCurve, LoadPlot, TimePlot) is plain values; render
// chooses the geometry, the palette and the marks.
package render
