package cli

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite docs/cli from the commands")

// TestReferenceIsCurrent fails when the committed command reference
// (docs/cli) differs from what the commands generate: run
// "go run ./cmd/gen-docs" (or this test with -update) after changing a
// flag or a help text.
func TestReferenceIsCurrent(t *testing.T) {
	committed := filepath.Join("..", "..", "docs", "cli")
	if *update {
		if err := WriteReference(committed); err != nil {
			t.Fatal(err)
		}
	}
	fresh := t.TempDir()
	if err := WriteReference(fresh); err != nil {
		t.Fatal(err)
	}
	want, _ := filepath.Glob(filepath.Join(fresh, "*.md"))
	have, _ := filepath.Glob(filepath.Join(committed, "*.md"))
	if len(want) != len(have) {
		t.Errorf("docs/cli has %d pages, the commands make %d: run go run ./cmd/gen-docs", len(have), len(want))
	}
	for _, w := range want {
		name := filepath.Base(w)
		gen, err := os.ReadFile(w)
		if err != nil {
			t.Fatal(err)
		}
		cur, err := os.ReadFile(filepath.Join(committed, name))
		if err != nil || !bytes.Equal(gen, cur) {
			t.Errorf("docs/cli/%s is not what the commands generate: run go run ./cmd/gen-docs", name)
		}
	}
}
