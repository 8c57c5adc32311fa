package report

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestLayers: the report, its printing, the shared rendering and the
// commands built on them import nothing of the engine that measures: the
// detail rows (package results) and measure's modes are all they know of
// a run.
func TestLayers(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool on the PATH to list the imports")
	}
	engine := []string{"pkg/loadgen", "pkg/runner", "pkg/target", "pkg/agents", "pkg/control", "kvstore"}
	for _, pkg := range []string{"./", "./output", "../render", "../compare", "../history"} {
		out, err := exec.Command(goTool, "list", "-deps", "-f", "{{.ImportPath}}", pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list %s: %v\n%s", pkg, err, out)
		}
		deps := strings.Fields(string(out))
		if !slices.Contains(deps, "github.com/kvbench/kvbench/pkg/results") { // they all read or draw the rows
			t.Fatalf("go list %s: no package results among %d dependencies", pkg, len(deps))
		}
		for _, dep := range deps {
			for _, e := range engine {
				if strings.HasPrefix(dep, "github.com/kvbench/kvbench/"+e) {
					t.Errorf("%s imports %s, a part of the engine", pkg, dep)
				}
			}
		}
	}
}
