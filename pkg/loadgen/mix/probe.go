package mix

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/kvbench/kvbench/pkg/control"
)

// ErrUnsupported is wrapped by the error of a server that lacks commands
// (see CheckCommands).
var ErrUnsupported = errors.New("unsupported commands")

// CheckCommands asks the server at addr with COMMAND INFO whether it has
// the commands named, and fails with one error naming those it lacks
// (wrapping ErrUnsupported). A server without COMMAND is not checked.
func CheckCommands(ctx context.Context, addr string, o control.Options, names []string) error {
	var uniq []string
	seen := map[string]bool{}
	for _, n := range names {
		u := strings.ToUpper(n)
		if !seen[u] {
			seen[u] = true
			uniq = append(uniq, u)
		}
	}
	if len(uniq) == 0 {
		return nil
	}
	c, err := control.Dial(ctx, addr, o)
	if err != nil {
		return err
	}
	defer c.Close()
	v, err := c.Do(ctx, append([]string{"COMMAND", "INFO"}, uniq...)...)
	var re *control.ReplyError
	switch {
	case errors.As(err, &re):
		return nil // no COMMAND: nothing to check against
	case err != nil:
		return err
	}
	infos, ok := v.([]any)
	if !ok || len(infos) != len(uniq) {
		return fmt.Errorf("COMMAND INFO: unexpected reply %v", v)
	}
	var lack []string
	for i, info := range infos {
		if info == nil {
			lack = append(lack, uniq[i])
		}
	}
	if len(lack) > 0 {
		return fmt.Errorf("%w: %s has no %s", ErrUnsupported, addr, strings.Join(lack, ", "))
	}
	return nil
}
