package report

import (
	"bytes"
	"fmt"
	"html"
)

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

// profileWords are the Profiles section's words, by language.
var profileWords = map[string]struct{ title, note, scenario, flame, diff string }{
	LangEN: {"Profiles", "The servers' CPU profiles, each taken in one more round of its scenario after the measured rounds (its figures are not in the tables). A differential graph colours each frame by the change of its share from the baseline strategy's: red grew, blue shrank.",
		"Scenario", "Flame graph", "Against the baseline"},
	LangZH: {"CPU 剖析", "服务器的 CPU 剖析，每个场景在计量轮次之后另跑一轮采集（其数据不计入表格）。差分图按各帧占比相对基线策略的变化着色：红色增加，蓝色减少。",
		"场景", "火焰图", "对比基线"},
}

// profilesHTML is the Profiles section: a link to every flame graph, by
// scenario; nothing without profiles.
func (r *Report) profilesHTML() []byte {
	if len(r.Options.Profiles) == 0 {
		return nil
	}
	w, ok := profileWords[r.lang()]
	if !ok {
		w = profileWords[LangEN]
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "<h2>%s</h2>\n<p>%s</p>\n<table>\n<thead><tr><th>%s</th><th>%s</th><th>%s</th></tr></thead>\n<tbody>\n",
		html.EscapeString(w.title), html.EscapeString(w.note), html.EscapeString(w.scenario), html.EscapeString(w.flame), html.EscapeString(w.diff))
	for _, p := range r.Options.Profiles {
		diff := ""
		if p.Diff != "" {
			diff = fmt.Sprintf("<a href=\"%s\">%s</a>", html.EscapeString(p.Diff), html.EscapeString(p.Baseline))
		}
		fmt.Fprintf(&b, "<tr><td>%s</td><td><a href=\"%s\">%s</a></td><td>%s</td></tr>\n",
			html.EscapeString(p.Target+"/"+p.Strategy+"/"+p.Mode), html.EscapeString(p.Flame), html.EscapeString(p.Flame), diff)
	}
	b.WriteString("</tbody>\n</table>\n")
	return b.Bytes()
}
