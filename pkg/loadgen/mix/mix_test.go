package mix

import (
	"slices"
	"testing"
)

// TestNameCommands: names are the command's own or its first word, "#N"
// on repeats, never two alike, even past names a mix already gives.
func TestNameCommands(t *testing.T) {
	get := []string{"GET", "__key__"}
	cmds := []Command{{Args: get}, {Args: get}, {Name: "GET#2", Args: get}, {Name: "READ", Args: get}, {Args: get, Then: []string{"SET", "__key__", "__data__"}}, {Args: get}}
	NameCommands(cmds)
	var got []string
	for _, c := range cmds {
		got = append(got, c.Name)
	}
	if want := []string{"GET", "GET#2", "GET#2#2", "READ", "RMW", "GET#3"}; !slices.Equal(got, want) {
		t.Errorf("names %q, want %q", got, want)
	}
}
