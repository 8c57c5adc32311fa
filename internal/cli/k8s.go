package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/kvbench/kvbench/pkg/agents"
	kvbench "github.com/kvbench/kvbench/pkg/bench"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// jobOptions is what "kvbench k8s job" was asked to do: the Job, the
// time from printing it to the agents' common start, and the clock.
type jobOptions struct {
	agents.Job
	// Lead is the time from printing the manifest to the agents' common
	// start.
	Lead time.Duration
	// Now is the time the start is counted from (time.Now).
	Now func() time.Time
	streams
}

// newK8sCmd is "kvbench k8s", the parent of "kvbench k8s job".
func newK8sCmd(runF func(context.Context, *jobOptions) error) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "k8s",
		Short: "Print Kubernetes manifests that run kvbench agents",
		Args:  noArgs,
	}
	cmd.AddCommand(newK8sJobCmd(runF))
	return cmd
}

// newK8sJobCmd is "kvbench k8s job": flags into jobOptions, then runF
// (runK8sJob when nil).
func newK8sJobCmd(runF func(context.Context, *jobOptions) error) *cobra.Command {
	if runF == nil {
		runF = runK8sJob
	}
	o := &jobOptions{Job: agents.Job{PasswordEnv: PasswordEnv}, Now: time.Now}
	cmd := &cobra.Command{
		Use:   "job --agents N --image IMAGE [flags] -- [bench flags]",
		Short: "Print a Kubernetes Indexed Job of N bench agents sharing one load",
		Long: `job prints a batch/v1 Job (YAML) that runs N "kvbench bench" agents, one per
pod, as segments 0 to N-1 of the load the bench flags after "--" describe:
completionMode Indexed, parallelism = completions = N, and each pod runs

  kvbench bench --load-json '<the load>' [--prefill, TLS and report flags]
      --segment auto/N --start-at <now + lead> --output json

The load is the bench flags' load as JSON, the settings of a result, made
once (its seed fixed, so that every agent draws the same keys); the bench
flags that are not the load (--prefill, the TLS files, --percentiles...)
follow it. So the agents take their segment from JOB_COMPLETION_INDEX and
all start at the same time, whatever order their pods were scheduled in. Apply the
manifest within --lead. backoffLimit is 0 and restartPolicy Never: an agent
restarted after the start would measure another window, so a failed agent
stays failed and "kvbench merge --agents N" names it missing. The pods
prefer distinct nodes (pod anti-affinity) and request --cpu and --memory;
with --password-secret the password reaches them from a Secret as
KVBENCH_PASSWORD, never in the manifest (--password is refused).

The image's entrypoint must be kvbench (see the Dockerfile); the manifest
gives the arguments only.`,
		Example: `  kvbench k8s job --agents 4 --image registry.example/kvbench:v1 -- --host redis --mode set --connections 64 --duration 30s
  kvbench k8s job --agents 2 --image kvbench:v1 --lead 1m --password-secret redis/password -- --host redis --rate 200000 --duration 60s`,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.BenchArgs = args
			if cmd.ArgsLenAtDash() < 0 && len(args) > 0 {
				return &usageError{fmt.Errorf("unexpected arguments %q: put the bench flags after --", args)}
			}
			if err := o.validate(); err != nil {
				return &usageError{err}
			}
			o.streams = streamsOf(cmd)
			return runF(cmd.Context(), o)
		},
	}
	f := cmd.Flags()
	f.IntVar(&o.Agents, "agents", 0, "number of agents (pods), N")
	f.StringVar(&o.Image, "image", "", "container image whose entrypoint is kvbench")
	f.StringVar(&o.Name, "name", agents.DefaultJobName, "name of the Job (the pods are labelled job-name=NAME)")
	f.StringVar(&o.Namespace, "namespace", "", "namespace of the Job (default: kubectl's)")
	f.DurationVar(&o.Lead, "lead", agents.DefaultJobLead, "time from now to the agents' common start: enough to apply the Job and start its pods")
	f.StringVar(&o.CPU, "cpu", agents.DefaultJobCPU, "CPU requested per agent")
	f.StringVar(&o.Memory, "memory", agents.DefaultJobMemory, "memory requested per agent")
	f.StringVar(&o.PasswordSecret, "password-secret", "", "NAME/KEY of the Secret holding the server's password")
	return cmd
}

// reservedBenchFlags are set by the manifest itself.
var reservedBenchFlags = []string{"segment", "start-at", "output", "password"}

// validate checks the options and that bench accepts the bench flags
// (as agent 0 would run them), and makes the agents' bench flags: the
// load as JSON, then the given flags that are not the load.
func (o *jobOptions) validate() error {
	if err := o.Job.Validate(); err != nil {
		return err
	}
	if o.Lead <= 0 {
		return fmt.Errorf("--lead %v: want > 0", o.Lead)
	}
	var agent0 *benchOptions
	bench := newBenchCmd(func(_ context.Context, b *benchOptions) error { agent0 = b; return nil })
	bench.SetOut(io.Discard)
	bench.SetErr(io.Discard)
	if err := bench.ParseFlags(o.BenchArgs); err != nil {
		return fmt.Errorf("bench flags: %w", err)
	}
	for _, name := range reservedBenchFlags {
		if bench.Flags().Changed(name) {
			if name == "password" {
				return errors.New("bench flags: --password would put the password in the manifest: use --password-secret NAME/KEY")
			}
			return fmt.Errorf("bench flags: --%s is set by the Job itself", name)
		}
	}
	args := append(slices.Clone(o.BenchArgs), "--segment", fmt.Sprintf("0/%d", o.Agents), "--output", "json")
	bench = newBenchCmd(func(_ context.Context, b *benchOptions) error { agent0 = b; return nil })
	bench.SetArgs(args)
	bench.SetOut(io.Discard)
	bench.SetErr(io.Discard)
	if err := bench.Execute(); err != nil {
		return fmt.Errorf("bench flags: %w", err)
	}
	load, err := agents.LoadJSON(agent0.Config)
	if err != nil {
		return fmt.Errorf("bench flags: %w", err)
	}
	o.BenchArgs = []string{"--load-json", string(load)}
	bench.Flags().Visit(func(f *pflag.Flag) {
		if !slices.Contains(kvbench.AgentFlags, f.Name) || slices.Contains(reservedBenchFlags, f.Name) || f.Name == "load-json" {
			return
		}
		if f.Value.Type() == "bool" {
			o.BenchArgs = append(o.BenchArgs, "--"+f.Name+"="+f.Value.String())
		} else {
			o.BenchArgs = append(o.BenchArgs, "--"+f.Name, f.Value.String())
		}
	})
	return nil
}

// runK8sJob prints the Job's YAML.
func runK8sJob(_ context.Context, o *jobOptions) error {
	start := o.Now().Add(o.Lead).Truncate(time.Second)
	b, err := o.Manifest(start)
	if err != nil {
		return err
	}
	_, err = o.Out.Write(b)
	return err
}
