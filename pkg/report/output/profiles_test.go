package output

import (
	"github.com/kvbench/kvbench/pkg/report/internal/fixture"

	"bytes"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/pkg/report"
)

// TestProfilesHTML: the HTML page lists every flame graph by scenario,
// its differential graph named by the baseline, the names escaped; and
// has no Profiles section without profiles.
func TestProfilesHTML(t *testing.T) {
	rows := append(fixture.Rows("kv<s>", "none", "none", "set", 100, 110, 120), fixture.Rows("kv<s>", "aof", "everysec", "set", 90, 95, 99)...)
	profiles := []report.Profile{
		{Target: "kv<s>", Strategy: "none", Mode: "set", Flame: "kvbench_flame_kv_s__none_set_T.svg"},
		{Target: "kv<s>", Strategy: "aof", Mode: "set", Flame: "kvbench_flame_kv_s__aof_set_T.svg", Diff: "kvbench_flame_diff_kv_s__aof_set_T.svg", Baseline: "none"},
	}
	for _, tc := range []struct {
		name     string
		profiles []report.Profile
		want     []string
		not      []string
	}{
		{"with", profiles, []string{
			"<h2>Profiles</h2>",
			`<tr><td>kv&lt;s&gt;/none/set</td><td><a href="kvbench_flame_kv_s__none_set_T.svg">kvbench_flame_kv_s__none_set_T.svg</a></td><td></td></tr>`,
			`<td>kv&lt;s&gt;/aof/set</td><td><a href="kvbench_flame_kv_s__aof_set_T.svg">kvbench_flame_kv_s__aof_set_T.svg</a></td><td><a href="kvbench_flame_diff_kv_s__aof_set_T.svg">none</a></td>`,
		}, nil},
		{"without", nil, nil, []string{"<h2>Profiles</h2>", "_flame_"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := report.Build(rows, report.Options{Profiles: tc.profiles})
			if err != nil {
				t.Fatal(err)
			}
			var page bytes.Buffer
			if err := HTML(rep, &page); err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(page.String(), w) {
					t.Errorf("the page lacks %s", w)
				}
			}
			for _, w := range tc.not {
				if strings.Contains(page.String(), w) {
					t.Errorf("the page holds %s", w)
				}
			}
		})
	}
}
