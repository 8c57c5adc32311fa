package report

import "github.com/kvbench/kvbench/pkg/render"

// Profile is a scenario's CPU profile, as flame graphs beside the report.
type Profile struct {
	// Target, Strategy and Mode (a mode or a workload) name the scenario.
	Target, Strategy, Mode string
	// Flame is the flame graph's file, relative to the report.
	Flame string
	// Diff is the differential flame graph against the Baseline strategy
	// of the same target and mode ("" when there is none).
	Diff, Baseline string
}

// profilesHTML is the Profiles section: a link to every flame graph, by
// scenario; nothing without profiles.
func (r *Report) profilesHTML() []byte {
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
