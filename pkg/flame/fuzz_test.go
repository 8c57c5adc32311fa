package flame

import (
	"bytes"
	"strings"
	"testing"
)

// FuzzParse: perf script's text and folded stacks never panic the
// parsers, and whatever they accept draws.
func FuzzParse(f *testing.F) {
	f.Add(perfText)
	f.Add("main;a 3\nmain;b 1\n")
	f.Add("x 1\n\t1 y+0x1 (z)\n")
	f.Fuzz(func(t *testing.T, in string) {
		for _, parse := range []func() (*Profile, error){
			func() (*Profile, error) { return ParsePerfScript(strings.NewReader(in), "in") },
			func() (*Profile, error) { return ReadFolded(strings.NewReader(in), "in") },
		} {
			p, err := parse()
			if err != nil || p.Total() == 0 {
				continue
			}
			var b bytes.Buffer
			if err := WriteSVG(&b, p, Options{Title: in}); err != nil {
				t.Errorf("a parsed profile does not draw: %v", err)
			}
			if err := WriteDiffSVG(&b, p, p, Options{}); err != nil {
				t.Errorf("a parsed profile does not draw against itself: %v", err)
			}
		}
	})
}
