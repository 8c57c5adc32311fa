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
	// SkipBad skips, with a note, an input that is empty, unreadable or
	// not a valid result, instead of failing.
	SkipBad bool
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
Every count is checked: a negative count, or totals that do not fit in
64 bits, fail the merge naming the file. An input that is empty,
unreadable or not a valid result fails it too, unless --skip-bad, which
skips it with a note (and --agents still counts who is missing).

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
	f.BoolVar(&o.SkipBad, "skip-bad", false, "skip an input that is empty, unreadable or not a valid result, with a note, instead of failing")
	return cmd
}

// runMerge reads the agents' results, merges them and prints the merge.
func runMerge(_ context.Context, o *mergeOptions) error {
	var all []agents.Agent
	for _, in := range o.Inputs {
		as, err := readAgents(o, in)
		if err == nil && len(as) == 0 {
			err = fmt.Errorf("%s: empty: no agent result in it", inputName(in))
		}
		if err != nil {
			if !o.SkipBad {
				return err
			}
			fmt.Fprintln(o.ErrOut, "note: skipped (--skip-bad):", err)
			continue
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

// readAgents reads the results of one input, printing its notes.
func readAgents(o *mergeOptions, in string) ([]agents.Agent, error) {
	r := o.In
	if in != "-" {
		f, err := os.Open(in)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	as, notes, err := agents.Read(r, inputName(in))
	for _, n := range notes {
		fmt.Fprintln(o.ErrOut, "note:", n)
	}
	return as, err
}

// inputName is how messages name an input.
func inputName(in string) string {
	if in == "-" {
		return "stdin"
	}
	return in
}
