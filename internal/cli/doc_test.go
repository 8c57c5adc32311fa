package cli

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// example is one "$ kvbench ..." line of a console block in the docs, and
// the output shown under it.
type example struct {
	pos  string // file:line
	args []string
	want string
}

// docExamples collects the console examples of README.md and docs/*.md.
func docExamples(t *testing.T, root string) []example {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	files = append([]string{filepath.Join(root, "README.md")}, files...)
	var exs []example
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, f)
		sc := bufio.NewScanner(bytes.NewReader(data))
		inConsole, line := false, 0
		var cur *example
		flush := func() {
			if cur != nil {
				exs = append(exs, *cur)
				cur = nil
			}
		}
		for sc.Scan() {
			line++
			text := sc.Text()
			switch {
			case strings.HasPrefix(text, "```"):
				flush()
				inConsole = !inConsole && strings.TrimPrefix(text, "```") == "console"
			case inConsole && strings.HasPrefix(text, "$ "):
				flush()
				fields := strings.Fields(strings.TrimPrefix(text, "$ "))
				if len(fields) == 0 || fields[0] != "kvbench" || strings.ContainsAny(text, `'"|><;&`) {
					t.Errorf("%s:%d: a console example is one plain kvbench command: %q", rel, line, text)
					continue
				}
				cur = &example{pos: fmt.Sprintf("%s:%d", rel, line), args: fields[1:]}
			case inConsole && cur != nil:
				cur.want += text + "\n"
			}
		}
		flush()
	}
	return exs
}

// quick reports whether an example finishes in a moment and can be run:
// report, version, merge, help, and run's dry run. The others (a whole run, a
// server, a load) are only parsed.
func quick(args []string) bool {
	has := func(s string) bool { return slices.Contains(args, s) }
	switch {
	case len(args) == 0, has("--help"), has("-h"):
		return true
	case args[0] == "report", args[0] == "version", args[0] == "merge":
		return true
	case args[0] == "run" && has("--dry-run"):
		return true
	}
	return false
}

// versionLine masks what changes from build to build in kvbench version.
var versionLine = regexp.MustCompile(`(?m)^kvbench \S+ \(commit \S+\) go\S+ \S+/\S+$`)

// TestDocExamples runs the documented examples that finish in seconds
// from the repository's root and compares their output with the docs; the
// long-running ones must at least name a command and flags that exist.
// Examples that drift from the code fail here.
func TestDocExamples(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	exs := docExamples(t, root)
	if len(exs) == 0 {
		t.Fatal("no console examples in README.md and docs/")
	}
	t.Chdir(root)
	for _, ex := range exs {
		if !quick(ex.args) {
			cmd, rest, err := NewRootCmd().Find(ex.args)
			if err == nil {
				err = cmd.ParseFlags(rest)
			}
			if err != nil || cmd.Name() == "kvbench" && len(ex.args) > 0 {
				t.Errorf("%s: kvbench %s: %v", ex.pos, strings.Join(ex.args, " "), err)
			}
			continue
		}
		var out, errOut bytes.Buffer
		if code := Run(context.Background(), ex.args, strings.NewReader(""), &out, &errOut); code != 0 {
			t.Errorf("%s: kvbench %s: exit %d\n%s", ex.pos, strings.Join(ex.args, " "), code, errOut.String())
			continue
		}
		got := versionLine.ReplaceAllString(out.String(), "kvbench VERSION")
		want := versionLine.ReplaceAllString(ex.want, "kvbench VERSION")
		if strings.TrimRight(got, "\n") != strings.TrimRight(want, "\n") {
			t.Errorf("%s: kvbench %s: the output differs from the docs\n--- docs\n%s--- got\n%s", ex.pos, strings.Join(ex.args, " "), want, got)
		}
	}
}
