package output

import (
	"bytes"
	"io"

	"github.com/kvbench/kvbench/pkg/render"
	"github.com/kvbench/kvbench/pkg/report"
)

// HTML writes the report as one self-contained HTML page
// (render.WritePage): the markdown's head (the settings and the
// side-by-side tables), the pictures (Pictures) drawn inline as SVG, the
// rest of the markdown, and the links to the flame graphs
// (Options.Profiles).
func HTML(r *report.Report, w io.Writer) error {
	pics, err := Pictures(r)
	if err != nil {
		return err
	}
	var head, body bytes.Buffer
	m := newMD(r, &head)
	mdHead(r, m, false)
	m.SetWriter(&body)
	mdBody(r, m)
	if err := m.Err(); err != nil {
		return err
	}
	return render.WritePage(w, m.l.Lang, m.l.Title,
		render.Section{Markdown: head.Bytes()},
		render.Section{Heading: m.l.Pictures, Pictures: pics},
		render.Section{Markdown: body.Bytes()},
		render.Section{HTML: profilesHTML(r)})
}

// profilesHTML is the Profiles section: a link to every flame graph, by
// scenario; nothing without profiles.
func profilesHTML(r *report.Report) []byte {
	if len(r.Options.Profiles) == 0 {
		return nil
	}
	w := &render.LabelsOf(r.Options.Lang).Profiles
	rows := make([][]render.Link, 0, len(r.Options.Profiles))
	for _, p := range r.Options.Profiles {
		diff := render.Link{}
		if p.Diff != "" {
			diff = render.Link{Text: p.Baseline, Href: p.Diff}
		}
		rows = append(rows, []render.Link{{Text: p.Target + "/" + p.Strategy + "/" + p.Mode}, {Text: p.Flame, Href: p.Flame}, diff})
	}
	return render.LinkTable(w.Title, w.Note, []string{w.Scenario, w.Flame, w.Diff}, rows)
}
