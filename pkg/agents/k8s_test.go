package agents

import (
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"sigs.k8s.io/yaml"
)

// TestJob: a valid Job's manifest decodes strictly into a batch/v1 Job
// whose pods run their segment of the load from one start; each invalid
// field is refused naming its flag.
func TestJob(t *testing.T) {
	good := Job{Name: DefaultJobName, Agents: 2, Image: "kvbench:v1", CPU: DefaultJobCPU, Memory: DefaultJobMemory,
		PasswordSecret: "redis/pw", PasswordEnv: "KVBENCH_PASSWORD", BenchArgs: []string{"--host", "redis", "--mode", "get"}}
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
	start := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	b, err := good.Manifest(start)
	if err != nil {
		t.Fatal(err)
	}
	var job batchv1.Job
	if err := yaml.UnmarshalStrict(b, &job); err != nil {
		t.Fatalf("strict decode: %v\n%s", err, b)
	}
	c := job.Spec.Template.Spec.Containers[0]
	want := "bench --host redis --mode get --segment auto/2 --start-at 2030-01-02T03:04:05Z --output json"
	if got := strings.Join(c.Args, " "); got != want || *job.Spec.Completions != 2 || c.Env[0].Name != "KVBENCH_PASSWORD" {
		t.Errorf("args %q, completions %d, env %+v; want %q", got, *job.Spec.Completions, c.Env, want)
	}
	for _, tc := range []struct {
		edit func(*Job)
		want string
	}{
		{func(j *Job) { j.Agents = 0 }, "--agents"},
		{func(j *Job) { j.Image = "" }, "--image"},
		{func(j *Job) { j.Name = "Not_A_Label" }, "--name"},
		{func(j *Job) { j.CPU = "lots" }, "--cpu"},
		{func(j *Job) { j.Memory = "12 parsecs" }, "--memory"},
		{func(j *Job) { j.PasswordSecret = "nokey" }, "--password-secret"},
	} {
		j := good
		tc.edit(&j)
		if err := j.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: got %v, want an error naming %s", j, err, tc.want)
		}
	}
}
