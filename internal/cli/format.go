package cli

import (
	"fmt"

	"github.com/kvbench/kvbench/pkg/render"
)

// parseFormat parses a --format value with the writers of a command's
// library: a format they do not write is a usage error naming those they
// do.
func parseFormat[T any](ws render.Writers[T], s string) (render.Format, error) {
	f, err := ws.Parse(s)
	if err != nil {
		return "", &usageError{fmt.Errorf("--format %q: want %s", s, ws)}
	}
	return f, nil
}
