package agents

import (
	"errors"
	"fmt"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"
)

// Defaults of a Job.
const (
	DefaultJobName   = "kvbench"
	DefaultJobLead   = 30 * time.Second
	DefaultJobCPU    = "1"
	DefaultJobMemory = "256Mi"
)

// Job describes a Kubernetes Indexed Job of bench agents that share one
// load: agent i runs segment i of N, all from one start time.
type Job struct {
	// Name and Namespace of the Job (Namespace empty: kubectl's).
	Name, Namespace string
	// Agents is N, the number of pods.
	Agents int
	// Image is the container image; its entrypoint must be kvbench.
	Image string
	// CPU and Memory are each pod's resource requests.
	CPU, Memory string
	// PasswordSecret is "name/key" of the Secret holding the server's
	// password, handed to the pods as the environment variable
	// PasswordEnv; empty: none.
	PasswordSecret string
	PasswordEnv    string
	// BenchArgs are the bench flags every agent runs with ("kvbench k8s
	// job" gives the load as --load-json and the flags that are not the
	// load); the Job adds --segment, --start-at and --output.
	BenchArgs []string
}

// Validate checks the Job's own fields (not its bench flags, which
// bench's parser checks).
func (j *Job) Validate() error {
	if j.Agents < 1 {
		return fmt.Errorf("--agents %d: want >= 1", j.Agents)
	}
	if j.Image == "" {
		return errors.New("--image: give the container image (its entrypoint must be kvbench)")
	}
	if errs := validation.IsDNS1123Subdomain(j.Name); len(errs) > 0 || len(j.Name) > 63 {
		return fmt.Errorf("--name %q: want a DNS label of at most 63 characters (%s)", j.Name, strings.Join(errs, "; "))
	}
	for name, q := range map[string]string{"--cpu": j.CPU, "--memory": j.Memory} {
		if _, err := resource.ParseQuantity(q); err != nil {
			return fmt.Errorf("%s %q: %w", name, q, err)
		}
	}
	if j.PasswordSecret != "" {
		n, k, ok := strings.Cut(j.PasswordSecret, "/")
		if !ok || n == "" || k == "" {
			return fmt.Errorf("--password-secret %q: want NAME/KEY", j.PasswordSecret)
		}
	}
	return nil
}

// AgentArgs returns the command line of every agent: bench, its flags,
// then the segment from the pod's completion index, the common start and
// JSON output.
func (j *Job) AgentArgs(start time.Time) []string {
	args := append([]string{"bench"}, j.BenchArgs...)
	return append(args, "--segment", fmt.Sprintf("auto/%d", j.Agents),
		"--start-at", start.UTC().Format(time.RFC3339), "--output", "json")
}

// Spec returns the batch/v1 Job whose agents start at start: completion
// mode Indexed, parallelism = completions = Agents, no retries (an agent
// restarted after the start would measure another window), pods spread
// over nodes where the scheduler can.
func (j *Job) Spec(start time.Time) *batchv1.Job {
	n := int32(j.Agents)
	labels := map[string]string{"app.kubernetes.io/name": "kvbench", "app.kubernetes.io/instance": j.Name}
	c := corev1.Container{
		Name:  "agent",
		Image: j.Image,
		Args:  j.AgentArgs(start),
		Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
			corev1.ResourceCPU:    resource.MustParse(j.CPU),
			corev1.ResourceMemory: resource.MustParse(j.Memory),
		}},
		SecurityContext: &corev1.SecurityContext{
			RunAsNonRoot:             ptr(true),
			AllowPrivilegeEscalation: ptr(false),
			ReadOnlyRootFilesystem:   ptr(true),
		},
	}
	if j.PasswordSecret != "" {
		name, key, _ := strings.Cut(j.PasswordSecret, "/")
		c.Env = []corev1.EnvVar{{Name: j.PasswordEnv, ValueFrom: &corev1.EnvVarSource{
			SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: key},
		}}}
	}
	return &batchv1.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{Name: j.Name, Namespace: j.Namespace, Labels: labels},
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

// Manifest returns the Job's YAML.
func (j *Job) Manifest(start time.Time) ([]byte, error) {
	return yaml.Marshal(j.Spec(start))
}

func ptr[T any](v T) *T { return &v }
