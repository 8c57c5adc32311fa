package cli

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/kvbench/kvbench/pkg/agents"
	"github.com/kvbench/kvbench/pkg/bench/output"
	"github.com/spf13/cobra"
)

// mergeOptions is what "kvbench merge" was asked to do.
type mergeOptions struct {
	// Inputs are the files to read, "-" for standard input.
	Inputs []string
	// Agents, when positive, is the number of agents expected.
	Agents int
	// Output is output.FormatText or output.FormatJSON.
	Output string
	streams
}

// newMergeCmd is "kvbench merge": flags into mergeOptions, then runF
// (runMerge when nil).
func newMergeCmd(runF func(context.Context, *mergeOptions) error) *cobra.Command {
	if runF == nil {
		runF = runMerge
	}
	o := &mergeOptions{}
	cmd := &cobra.Command{
		Use:   "merge FILE...",
		Short: "Merge the JSON results of agents that shared one load",
		Long: `merge reads the results of "kvbench bench --segment I/N --output json" agents
(files, or "-" for a stream of JSON documents on standard input, such as
"kubectl logs" prints) and reports them as one run: the latency histograms
added bucket by bucket (percentiles are never averaged), the counters
summed, QPS the total requests over the time from the earliest start to the
latest end. The output is bench's (--output text|json), plus one line (or
JSON object) per agent.

It warns when the agents' measured windows overlap less than 90% (their
intersection over their union) or when their settings differ. With
--agents N it fails when a segment of the N did not report, naming it.

Exit status: 0 on success, 1 when a result cannot be read or agents are
missing, 2 for a usage error.`,
		Example: `  kvbench merge agent-0.json agent-1.json
  kubectl logs -l job-name=kvbench --tail=-1 | kvbench merge --agents 4 -`,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Inputs = args
			if len(args) == 0 {
				return &usageError{errors.New("merge: give at least one result file, or - for standard input")}
			}
			if o.Output != output.FormatText && o.Output != output.FormatJSON {
				return &usageError{fmt.Errorf("--output %q: want text or json", o.Output)}
			}
			if o.Agents < 0 {
				return &usageError{fmt.Errorf("--agents %d: want >= 1", o.Agents)}
			}
			o.streams = streamsOf(cmd)
			return runF(cmd.Context(), o)
		},
	}
	f := cmd.Flags()
	f.IntVar(&o.Agents, "agents", 0, "the number of agents expected: fail, naming them, when some did not report")
	f.StringVar(&o.Output, "output", output.FormatText, "report format: text or json")
	return cmd
}

// runMerge reads the agents' results, merges them and prints the merge.
func runMerge(_ context.Context, o *mergeOptions) error {
	var all []agents.Agent
	for _, in := range o.Inputs {
		var (
			as    []agents.Agent
			notes []error
			err   error
		)
		if in == "-" {
			as, notes, err = agents.Read(o.In, "stdin")
		} else {
			f, ferr := os.Open(in)
			if ferr != nil {
				return ferr
			}
			as, notes, err = agents.Read(f, in)
			f.Close()
		}
		for _, n := range notes {
			fmt.Fprintln(o.ErrOut, "note:", n)
		}
		if err != nil {
			return err
		}
		all = append(all, as...)
	}
	if len(all) == 0 {
		return fmt.Errorf("no agent result in %v", o.Inputs)
	}
	m, err := agents.Merge(all, o.Agents)
	if err != nil {
		return err
	}
	if o.Output == output.FormatJSON {
		return agents.WriteJSON(o.Out, m)
	}
	return agents.WriteText(o.Out, m)
}
