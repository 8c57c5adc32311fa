package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"
)

// Defaults of "kvbench k8s job".
const (
	DefaultJobName   = "kvbench"
	DefaultJobLead   = 30 * time.Second
	DefaultJobCPU    = "1"
	DefaultJobMemory = "256Mi"
)

// jobOptions is what "kvbench k8s job" was asked to do.
type jobOptions struct {
	Name, Namespace string
	Agents          int
	Image           string
	// Lead is the time from printing the manifest to the agents' common
	// start.
	Lead        time.Duration
	CPU, Memory string
	// PasswordSecret is "name/key" of the Secret holding the password.
	PasswordSecret string
	// BenchArgs are the bench flags after "--".
	BenchArgs []string
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
	o := &jobOptions{Now: time.Now}
	cmd := &cobra.Command{
		Use:   "job --agents N --image IMAGE [flags] -- [bench flags]",
		Short: "Print a Kubernetes Indexed Job of N bench agents sharing one load",
		Long: `job prints a batch/v1 Job (YAML) that runs N "kvbench bench" agents, one per
pod, as segments 0 to N-1 of the load the bench flags after "--" describe:
completionMode Indexed, parallelism = completions = N, and each pod runs

  kvbench bench <bench flags> --segment auto/N --start-at <now + lead> --output json

so the agents take their segment from JOB_COMPLETION_INDEX and all start at
the same time, whatever order their pods were scheduled in. Apply the
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
	f.StringVar(&o.Name, "name", DefaultJobName, "name of the Job (the pods are labelled job-name=NAME)")
	f.StringVar(&o.Namespace, "namespace", "", "namespace of the Job (default: kubectl's)")
	f.DurationVar(&o.Lead, "lead", DefaultJobLead, "time from now to the agents' common start: enough to apply the Job and start its pods")
	f.StringVar(&o.CPU, "cpu", DefaultJobCPU, "CPU requested per agent")
	f.StringVar(&o.Memory, "memory", DefaultJobMemory, "memory requested per agent")
	f.StringVar(&o.PasswordSecret, "password-secret", "", "NAME/KEY of the Secret holding the server's password")
	return cmd
}

// reservedBenchFlags are set by the manifest itself.
var reservedBenchFlags = []string{"segment", "start-at", "output", "password"}

// validate checks the options and that bench accepts the bench flags
// (as agent 0 would run them).
func (o *jobOptions) validate() error {
	if o.Agents < 1 {
		return fmt.Errorf("--agents %d: want >= 1", o.Agents)
	}
	if o.Image == "" {
		return errors.New("--image: give the container image (its entrypoint must be kvbench)")
	}
	if errs := validation.IsDNS1123Subdomain(o.Name); len(errs) > 0 || len(o.Name) > 63 {
		return fmt.Errorf("--name %q: want a DNS label of at most 63 characters (%s)", o.Name, strings.Join(errs, "; "))
	}
	if o.Lead <= 0 {
		return fmt.Errorf("--lead %v: want > 0", o.Lead)
	}
	for name, q := range map[string]string{"--cpu": o.CPU, "--memory": o.Memory} {
		if _, err := resource.ParseQuantity(q); err != nil {
			return fmt.Errorf("%s %q: %w", name, q, err)
		}
	}
	if o.PasswordSecret != "" {
		n, k, ok := strings.Cut(o.PasswordSecret, "/")
		if !ok || n == "" || k == "" {
			return fmt.Errorf("--password-secret %q: want NAME/KEY", o.PasswordSecret)
		}
	}
	bench := newBenchCmd(func(context.Context, *benchOptions) error { return nil })
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
	bench = newBenchCmd(func(context.Context, *benchOptions) error { return nil })
	bench.SetArgs(args)
	bench.SetOut(io.Discard)
	bench.SetErr(io.Discard)
	if err := bench.Execute(); err != nil {
		return fmt.Errorf("bench flags: %w", err)
	}
	return nil
}

// Job returns the Job that runs the agents, starting at start.
func (o *jobOptions) Job(start time.Time) *batchv1.Job {
	n := int32(o.Agents)
	labels := map[string]string{"app.kubernetes.io/name": "kvbench", "app.kubernetes.io/instance": o.Name}
	args := append([]string{"bench"}, o.BenchArgs...)
	args = append(args, "--segment", fmt.Sprintf("auto/%d", o.Agents),
		"--start-at", start.UTC().Format(time.RFC3339), "--output", "json")
	c := corev1.Container{
		Name:  "agent",
		Image: o.Image,
		Args:  args,
		Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
			corev1.ResourceCPU:    resource.MustParse(o.CPU),
			corev1.ResourceMemory: resource.MustParse(o.Memory),
		}},
		SecurityContext: &corev1.SecurityContext{
			RunAsNonRoot:             ptr(true),
			AllowPrivilegeEscalation: ptr(false),
			ReadOnlyRootFilesystem:   ptr(true),
		},
	}
	if o.PasswordSecret != "" {
		name, key, _ := strings.Cut(o.PasswordSecret, "/")
		c.Env = []corev1.EnvVar{{Name: PasswordEnv, ValueFrom: &corev1.EnvVarSource{
			SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: key},
		}}}
	}
	return &batchv1.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{Name: o.Name, Namespace: o.Namespace, Labels: labels},
		Spec: batchv1.JobSpec{
			CompletionMode: ptr(batchv1.IndexedCompletion),
			Completions:    &n,
			Parallelism:    &n,
			BackoffLimit:   ptr(int32(0)),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					Containers:    []corev1.Container{c},
					Affinity: &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
						PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{
							Weight: 100,
							PodAffinityTerm: corev1.PodAffinityTerm{
								LabelSelector: &metav1.LabelSelector{MatchLabels: labels},
								TopologyKey:   "kubernetes.io/hostname",
							},
						}},
					}},
				},
			},
		},
	}
}

func ptr[T any](v T) *T { return &v }

// runK8sJob prints the Job's YAML.
func runK8sJob(_ context.Context, o *jobOptions) error {
	start := o.Now().Add(o.Lead).Truncate(time.Second)
	b, err := yaml.Marshal(o.Job(start))
	if err != nil {
		return err
	}
	_, err = o.Out.Write(b)
	return err
}
