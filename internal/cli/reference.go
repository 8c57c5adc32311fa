package cli

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra/doc"
)

// WriteReference writes the command reference, one markdown page per
// command, into dir, replacing the markdown files it holds.
func WriteReference(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	old, err := filepath.Glob(filepath.Join(dir, "*.md"))
	if err != nil {
		return err
	}
	for _, f := range old {
		if err := os.Remove(f); err != nil {
			return err
		}
	}
	root := NewRootCmd()
	root.DisableAutoGenTag = true
	if err := doc.GenMarkdownTree(root, dir); err != nil {
		return fmt.Errorf("generate the reference: %w", err)
	}
	return nil
}
