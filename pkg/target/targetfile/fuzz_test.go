package targetfile

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzParseConfig: no target file, however malformed, makes Parse
// panic; every refusal is an *Error naming the file, with a line
// within it when it names one.
func FuzzParseConfig(f *testing.F) {
	files, _ := filepath.Glob("../../../testdata/run/*.yaml")
	for _, name := range files {
		if b, err := os.ReadFile(name); err == nil {
			f.Add(b)
		}
	}
	for _, s := range []string{
		"targets: []\n",
		"targets:\n  - kind: kvstore\n    strategies: [nopersist]\n",
		"targets:\n  - kind: attach\n    addr: 127.0.0.1:1\n    strategies: [as_configured]\n",
		"targets:\n  - kind: redis\n    tls: {enabled: true, mutual: false}\n",
		"targets:\n  - kind: attach\n    name: a\n    uri: rediss://u:p@h:1/2\n    user: u\n    db: 2\n    socket: s\n",
		"targets:\n  - kind: attach\n    name: a\n    addr: unix:/s\n    tls: {}\n  - {kind: redis, db: 3}\n",
		"targets:\n  - {kind: attach, name: a, addr: h:1, resp3: true}\n  - {kind: kvstore, resp3: true}\n",
		"targets:\n  - {kind: command, command: [\"\\x00\"], strategies: {a: {persistence: x}}}\n",
		"targets: &a [*a]\n",
		"- - - -\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		_, err := Parse(bytes.NewReader(b), "fuzz.yaml", Defaults{})
		if err == nil {
			return
		}
		var ce *Error
		if !errors.As(err, &ce) || ce.File != "fuzz.yaml" {
			t.Fatalf("error %v (%T): want an *Error naming the file", err, err)
		}
		if lines := yamlLines(b); ce.Line < 0 || ce.Line > lines {
			t.Fatalf("error at line %d of a %d-line file: %v", ce.Line, lines, err)
		}
	})
}

// yamlLines bounds the lines of b as a YAML parser counts them: every
// line break starts one, and YAML breaks lines at CR, LF and (as libyaml
// reads it) NEL, LS and PS; a CR LF pair counted twice only widens the
// bound.
func yamlLines(b []byte) int {
	n := 1 + bytes.Count(b, []byte("\n")) + bytes.Count(b, []byte("\r"))
	for _, br := range []string{"\u0085", "\u2028", "\u2029"} {
		n += bytes.Count(b, []byte(br))
	}
	return n
}
