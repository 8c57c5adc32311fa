package report

import (
	"bytes"
	"io"

	"github.com/kvbench/kvbench/pkg/render"
)

// WriteHTML writes the report as one self-contained HTML page
// (render.WritePage): the markdown's head (the settings and the
// side-by-side tables), the pictures (Pictures) drawn inline as SVG, the
// rest of the markdown, and the links to the flame graphs
// (Options.Profiles).
func (r *Report) WriteHTML(w io.Writer) error {
	pics, err := r.Pictures()
	if err != nil {
		return err
	}
	var head, body bytes.Buffer
	m := r.md(&head)
	r.mdHead(m, false)
	m.SetWriter(&body)
	r.mdBody(m)
	if err := m.Err(); err != nil {
		return err
	}
	return render.WritePage(w, m.l.Lang, m.l.Title,
		render.Section{Markdown: head.Bytes()},
		render.Section{Heading: m.l.Pictures, Pictures: pics},
		render.Section{Markdown: body.Bytes()},
		render.Section{HTML: r.profilesHTML()})
}
