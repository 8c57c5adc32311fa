package placement

import (
	"strings"
	"testing"

	"github.com/kvbench/kvbench/pkg/machine"
	"github.com/kvbench/kvbench/pkg/target"
)

// TestParseResolveLine: --cpus auto (or empty) is left to Resolve, which
// leaves an attached target's run unpinned; an explicit placement stays
// as given, with a warning that an attached server is not pinned; a bad
// one is an error naming the flag; Line says where each side runs.
func TestParseResolveLine(t *testing.T) {
	for _, s := range []string{"", " auto "} {
		if p, err := Parse(s); err != nil || len(p.Server) != 0 || len(p.Client) != 0 {
			t.Errorf("Parse(%q) = %v, %v: want nothing yet", s, p, err)
		}
	}
	if _, err := Parse("server=x"); err == nil || !strings.HasPrefix(err.Error(), "--cpus: ") {
		t.Errorf("a bad placement: %v, want an error naming --cpus", err)
	}
	attach, err := target.NewAttach(target.AttachConfig{Name: "prod", Addr: "127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	if p, warns := Resolve(Auto, machine.Placement{}, []target.Target{attach}); len(p.Server) != 0 || len(p.Client) != 0 || warns != nil {
		t.Errorf("auto with an attached target: %v, %v: want unpinned", p, warns)
	}
	parsed, err := Parse("0")
	if err != nil {
		t.Fatal(err)
	}
	p, warns := Resolve("0", parsed, []target.Target{attach})
	if p.String() != parsed.String() || len(warns) != 1 || !strings.Contains(warns[0].Error(), "target prod is attached") {
		t.Errorf("explicit with an attached target: %v, %v", p, warns)
	}
	if got := Line(p); !strings.Contains(got, "share CPU 0") {
		t.Errorf("Line(%v) = %q", p, got)
	}
	if got := Line(machine.Placement{}); !strings.HasPrefix(got, "off: ") {
		t.Errorf("Line(none) = %q", got)
	}
}
