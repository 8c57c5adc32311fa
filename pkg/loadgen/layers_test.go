package loadgen

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// layers ranks the load generator's packages: a package may import only
// those of a lower rank, never its parent (package loadgen, rank 3, which
// runs the engine over all of them), unless it ranks above it: a client of
// the engine (prefill), which package loadgen does not import.
var layers = map[string]int{
	"keyspace": 0, "replay": 0, // keys and values; captures
	"mix": 1, "cluster": 1, "link": 1, "series": 1, "schedule": 1, // commands, routing, sockets and TLS, intervals, the open loop's timetable
	"load":    2, // the description of a load, which every part reads
	"prefill": 4, // writing the keyspace and unmeasured requests, through the engine
}

// TestLayers: no package of the load generator imports one above its
// layer (layers), and every package beneath pkg/loadgen has a layer.
func TestLayers(t *testing.T) {
	const root = "github.com/kvbench/kvbench/pkg/loadgen"
	dirs, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		if !d.IsDir() || d.Name() == "testdata" {
			continue
		}
		rank, ok := layers[d.Name()]
		if !ok {
			t.Errorf("package %s has no layer", d.Name())
			continue
		}
		files, _ := filepath.Glob(filepath.Join(d.Name(), "*.go"))
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			file, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, imp := range file.Imports {
				path, _ := strconv.Unquote(imp.Path.Value)
				if path == root && rank <= 3 {
					t.Errorf("%s imports its parent, package loadgen", f)
					continue
				}
				if sub, ok := strings.CutPrefix(path, root+"/"); ok && layers[sub] >= rank {
					t.Errorf("%s (layer %d) imports %s (layer %d)", f, rank, sub, layers[sub])
				}
			}
		}
	}
}
