package mix

import (
	"testing"

	"github.com/kvbench/kvbench/pkg/loadgen/keyspace"
)

// TestReads: which commands of a mix a replica may serve, and how many
// keys a request of each draws.
func TestReads(t *testing.T) {
	for _, tc := range []struct {
		cmd   Command
		read  bool
		draws int
	}{
		{Command{Args: []string{"GET", "__key__"}}, true, 1},
		{Command{Args: []string{"get", "key:__rand_int__"}}, true, 1},
		{Command{Args: []string{"MGET", "__key__", "__key__", "__key__"}}, true, 3},
		{Command{Args: []string{"LRANGE", "mylist", "0", "99"}}, true, 0},
		{Command{Args: []string{"RGET", "__key__"}}, true, 1},
		{Command{Args: []string{"SET", "__key__", "__data__"}}, false, 1},
		{Command{Args: []string{"LPUSH", "mylist", "__data__"}}, false, 1},
		{Command{Args: []string{"MSET", "__key__", "__data__", "__key__", "__data__"}}, false, 2},
		{Command{Args: []string{"GET", "__key__"}, Then: []string{"SET", "__key__", "__data__"}}, false, 1},
		{Command{Args: []string{"PING"}}, false, 0},
	} {
		p := Compile([]Command{tc.cmd}, Settings{Prefix: "k:", Keys: keyspace.Spec{Keyspace: 100, Pattern: keyspace.Random}})[0]
		if p.Read != tc.read || p.Draws != tc.draws {
			t.Errorf("%s: read %v, draws %d; want %v, %d", tc.cmd, p.Read, p.Draws, tc.read, tc.draws)
		}
	}
}
