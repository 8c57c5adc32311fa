package main

import (
	"bufio"
	"debug/elf"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// instruction is one Dockerfile instruction, continuation lines joined.
type instruction struct {
	line int
	cmd  string // upper case: FROM, RUN...
	args string
}

// parseDockerfile splits a Dockerfile into instructions: comments and
// blank lines dropped, lines ending in a backslash joined.
func parseDockerfile(t *testing.T, path string) []instruction {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []instruction
	var cur strings.Builder
	start, n := 0, 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		n++
		text := strings.TrimSpace(sc.Text())
		if cur.Len() == 0 && (text == "" || strings.HasPrefix(text, "#")) {
			continue
		}
		if cur.Len() == 0 {
			start = n
		}
		if s, ok := strings.CutSuffix(text, `\`); ok {
			cur.WriteString(s + " ")
			continue
		}
		cur.WriteString(text)
		cmd, args, _ := strings.Cut(cur.String(), " ")
		out = append(out, instruction{line: start, cmd: strings.ToUpper(cmd), args: strings.TrimSpace(args)})
		cur.Reset()
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestDockerfile: the image is built as documented (docs/distributed.md):
// a build stage compiling with CGO_ENABLED=0 and the version from a build
// ARG, a final stage copying the binary alone, a non-root USER and kvbench
// as the exec-form ENTRYPOINT. The image cannot be built here (no base
// images), so what can be is checked: the same build yields a static
// binary (no ELF interpreter, no shared libraries) reporting the version.
func TestDockerfile(t *testing.T) {
	ins := parseDockerfile(t, filepath.Join("..", "..", "Dockerfile"))
	type stage struct {
		name string
		ins  []instruction
	}
	var stages []stage
	for _, in := range ins {
		if in.cmd == "FROM" {
			f := strings.Fields(in.args)
			name := ""
			if len(f) == 3 && strings.EqualFold(f[1], "AS") {
				name = f[2]
			}
			stages = append(stages, stage{name: name})
			continue
		}
		if len(stages) > 0 {
			stages[len(stages)-1].ins = append(stages[len(stages)-1].ins, in)
		}
	}
	if len(stages) != 2 || stages[0].name != "build" {
		t.Fatalf("stages %+v: want a build stage and a final one", stages)
	}
	find := func(s stage, cmd, substr string) *instruction {
		for _, in := range s.ins {
			if in.cmd == cmd && strings.Contains(in.args, substr) {
				return &in
			}
		}
		return nil
	}
	build, final := stages[0], stages[1]
	if find(build, "ARG", "VERSION") == nil {
		t.Error("build stage: no ARG VERSION")
	}
	run := find(build, "RUN", "go build")
	if run == nil || !strings.Contains(run.args, "CGO_ENABLED=0") ||
		!strings.Contains(run.args, "-X github.com/kvbench/kvbench/internal/cli.version=${VERSION}") {
		t.Errorf("build stage: the go build is not static with the version from the ARG: %+v", run)
	}
	if find(final, "COPY", "--from=build") == nil || find(final, "RUN", "") != nil {
		t.Error("final stage: want the binary copied from the build stage, and nothing run")
	}
	user := find(final, "USER", "")
	if user == nil || strings.HasPrefix(user.args, "0") || strings.HasPrefix(user.args, "root") {
		t.Errorf("final stage: USER %+v, want a non-root user", user)
	}
	var entry []string
	if e := find(final, "ENTRYPOINT", ""); e == nil || json.Unmarshal([]byte(e.args), &entry) != nil ||
		len(entry) != 1 || filepath.Base(entry[0]) != "kvbench" || find(final, "COPY", entry[0]) == nil {
		t.Errorf("final stage: ENTRYPOINT %v, want the exec form of the kvbench copied in", entry)
	}

	// The build the Dockerfile makes.
	bin := filepath.Join(t.TempDir(), "kvbench")
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w -X github.com/kvbench/kvbench/internal/cli.version=v9.8.7-test", "-o", bin, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("CGO_ENABLED=0 go build: %v\n%s", err, out)
	}
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			t.Errorf("the binary has a %v program header: not static", p.Type)
		}
	}
	if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
		t.Errorf("the binary needs %v", libs)
	}
	out, err := exec.Command(bin, "version").Output()
	if err != nil || !strings.HasPrefix(string(out), "kvbench v9.8.7-test ") {
		t.Errorf("kvbench version: %q, %v; want the version given at link time", out, err)
	}
}
