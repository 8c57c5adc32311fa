package bench

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/kvbench/kvbench/pkg/loadgen"
)

// An agent receives its load as the Config's JSON (loadgen's codec, the
// settings of a result), so that the load is described once: "kvbench
// run --agents N" writes it to each agent's standard input
// (--load-json -), "kvbench k8s job" puts it in each pod's arguments
// (--load-json '{...}'). The JSON carries no password (the agent takes
// it from $KVBENCH_PASSWORD) and no TLS material (the agent is given the
// TLS flags, and its JSON says whether the load runs over TLS). An agent
// given the flags of the load instead still runs: they are bench's own.

// readLoad sets the Config from LoadJSON, refusing the options that
// describe the load beside it.
func (o *Options) readLoad() error {
	var extra []string
	for name, on := range o.Given {
		if on && !slices.Contains(AgentFlags, name) {
			extra = append(extra, name)
		}
	}
	if len(extra) > 0 {
		sort.Strings(extra)
		return fmt.Errorf("--load-json and --%s cannot be used together: the JSON describes the load; beside it give only --%s",
			extra[0], strings.Join(AgentFlags[1:], ", --"))
	}
	b, src, err := o.loadBytes()
	if err != nil {
		return fmt.Errorf("--load-json %s: %w", src, err)
	}
	var c loadgen.Config
	if err := json.Unmarshal(b, &c); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return fmt.Errorf("--load-json %s: offset %d: %w", src, se.Offset, err)
		}
		return fmt.Errorf("--load-json %s: %w", src, err)
	}
	if tlsOn := c.TLS != nil; tlsOn != o.TLSFiles.Enabled {
		if tlsOn {
			return fmt.Errorf("--load-json %s: the load runs over TLS (\"tls\": true): give --tls and its files (--cacert, --cert, --key)", src)
		}
		return fmt.Errorf("--tls: the load of --load-json %s is plaintext (\"tls\": false)", src)
	}
	if c.TLS, err = o.TLSFiles.Config(); err != nil {
		return err
	}
	c.Password = o.Password
	o.Config = c
	return nil
}

// loadBytes reads LoadJSON: the document itself when it starts with "{",
// Stdin for "-", else a file; src names it for messages.
func (o *Options) loadBytes() (b []byte, src string, err error) {
	switch s := strings.TrimSpace(o.LoadJSON); {
	case strings.HasPrefix(s, "{"):
		return []byte(s), "(inline)", nil
	case s == "-":
		if o.Stdin == nil {
			return nil, "-", errors.New("no standard input")
		}
		b, err = io.ReadAll(o.Stdin)
		return b, "(standard input)", err
	default:
		b, err = os.ReadFile(s)
		return b, s, err
	}
}
