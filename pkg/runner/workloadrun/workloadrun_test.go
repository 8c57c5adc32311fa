package workloadrun

import (
	"slices"
	"testing"

	"github.com/kvbench/kvbench/pkg/loadgen"
	"github.com/kvbench/kvbench/pkg/loadgen/mix"
)

// TestFills: what a workload's commands read is filled once each; a
// container whose key holds a placeholder is not, nor is a write.
func TestFills(t *testing.T) {
	cfg := loadgen.Config{Commands: []mix.Command{
		{Args: []string{"GET", "__key__"}},
		{Args: []string{"GET", "__key__"}},
		{Args: []string{"HGET", "__key__", "f"}},
		{Args: []string{"LPOP", "queue"}},
		{Args: []string{"LPOP", "queue:__key__"}},
		{Args: []string{"SET", "__key__", "__data__"}},
	}}
	cfg.Requests = 1000
	var got []string
	for _, f := range Fills(cfg) {
		got = append(got, f.What)
	}
	if want := []string{"SET __key__", "HSET __key__ f", "LLEN queue to 1000"}; !slices.Equal(got, want) {
		t.Errorf("fills %q, want %q", got, want)
	}
}
