package main

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// module is the module path; every package below is named relative to it.
const module = "github.com/kvbench/kvbench/"

// layers ranks the tree's packages: a package imports only packages of a
// lower rank. From the bottom: what knows nothing of the rest (the RESP
// codec, statistics, the machine); the one control client and the
// measurement; the detail CSV, the targets, the load's parts and the
// server; the load's description; the engine; the prefill (the
// engine's client that every runner of loads calls); what runs loads (and
// reads what a server said of one) and models reports; what prints them;
// what spreads and keeps them; the two commands' libraries; the command
// layer; main.
var layers = map[string]int{
	"pkg/resp": 0, "pkg/keyslot": 0, "pkg/stats": 0, "pkg/tlsconf": 0, "pkg/machine": 0, "pkg/flame": 0,
	"pkg/lazyfs": 0, "pkg/loadgen/keyspace": 0, "kvstore/internal/iouring": 0, "internal/testutil": 0,

	"pkg/control": 1, "pkg/measure": 1, "pkg/loadgen/replay": 1,

	"pkg/results": 2, "pkg/target": 2, "kvstore": 2, "pkg/loadgen/mix": 2, "pkg/loadgen/link": 2,
	"pkg/loadgen/cluster": 2, "pkg/loadgen/schedule": 2, "pkg/loadgen/series": 2,

	"pkg/loadgen/load": 3, "pkg/render": 3, "pkg/target/targetfile": 3, "internal/testutil/rediscluster": 3,
	"pkg/report/internal/fixture": 3, "pkg/report/attempt": 3, "pkg/report/figure": 3,

	"pkg/loadgen": 4, "pkg/report/persistjob": 4,

	"pkg/loadgen/prefill": 5,

	"pkg/curve": 6, "pkg/workload": 6, "pkg/metrics": 6, "pkg/bench/rbtests": 6, "pkg/report": 6,
	"pkg/runner/telemetry": 6, "pkg/runner/persistjob": 6,

	"pkg/bench/output": 7, "pkg/report/output": 7, "pkg/compare": 7,

	"pkg/agents": 8, "pkg/history": 8, "pkg/runner/recovery": 8, "pkg/runner/series": 8,
	"pkg/runner/tmpdir": 8, "pkg/runner/calibration": 8, "pkg/runner/workloadrun": 8,
	"pkg/runner/status": 8, "pkg/runner/placement": 8, "pkg/runner/adaptive": 8,
	"pkg/runner/record": 8, "pkg/runner/resultfiles": 8,

	"pkg/bench": 9, "pkg/runner": 9,

	"internal/cli": 10,

	"cmd/kvbench": 11, "cmd/gen-docs": 11,
}

// TestLayers: no package imports one of its own rank or above (layers),
// and every package of the tree has a rank. Test files may import what
// they test with.
func TestLayers(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		pkg := filepath.ToSlash(rel)
		seen[pkg] = true
		rank, ok := layers[pkg]
		if !ok {
			return nil // said once, below
		}
		file, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range file.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			dep, ok := strings.CutPrefix(p, module)
			if !ok {
				continue
			}
			if r, known := layers[dep]; known && r >= rank {
				t.Errorf("%s: package %s (rank %d) imports %s (rank %d): an import that runs upward or sideways", strings.TrimPrefix(path, root+"/"), pkg, rank, dep, r)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for pkg := range seen {
		if _, ok := layers[pkg]; !ok {
			t.Errorf("package %s has no rank in layers: give it one", pkg)
		}
	}
	for pkg := range layers {
		if !seen[pkg] {
			t.Errorf("layers ranks %s, which is not in the tree", pkg)
		}
	}
}
