package output

import (
	"bytes"
	"context"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/kvbench/kvbench/internal/testutil"
	"github.com/kvbench/kvbench/pkg/report"
	"github.com/kvbench/kvbench/pkg/results"
)

const hdr = "target,strategy,mode,round,status,qps\n"

// TestBuildBadInput covers the errors found between rows: duplicates,
// empty keys, conflicting descriptions, within a file and across files.
func TestBuildBadInput(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  string
		is    error
	}{
		{"duplicate ok round in one file",
			map[string]string{"a.csv": hdr + "kvstore,nopersist,set,1,ok,100\nkvstore,nopersist,set,2,ok,100\nkvstore,nopersist,set,1,ok,101\n"},
			"a.csv:4: duplicate round: kvstore/nopersist/set round 1 already has an ok row at a.csv:2", report.ErrDuplicate},
		{"duplicate ok round across files",
			map[string]string{"a.csv": hdr + "kvstore,nopersist,set,1,ok,100\n", "b.csv": hdr + "kvstore,nopersist,set,1,ok,100\n"},
			"b.csv:2: duplicate round: kvstore/nopersist/set round 1 already has an ok row at a.csv:2", report.ErrDuplicate},
		{"ok row without QPS",
			map[string]string{"a.csv": hdr + "kvstore,nopersist,set,1,ok,\n"},
			"a.csv:2: column qps: bad value: an ok row needs a positive QPS, got 0", results.ErrBadValue},
		{"empty target",
			map[string]string{"a.csv": hdr + ",nopersist,set,1,ok,100\n"},
			"a.csv:2: column target: bad value: empty", results.ErrBadValue},
		{"round zero",
			map[string]string{"a.csv": hdr + "kvstore,nopersist,set,0,ok,100\n"},
			"a.csv:2: column round: bad value: 0 (rounds count from 1)", results.ErrBadValue},
		{"one strategy, two persistence settings",
			map[string]string{"a.csv": "target,strategy,persistence,mode,round,status,qps\nkvstore,p,no,set,1,ok,100\nkvstore,p,always,set,2,ok,100\n"},
			`a.csv:3: column persistence: conflicting strategy description: strategy p of kvstore is "always" here but "no" at a.csv:2`, report.ErrConflict},
		{"header only",
			map[string]string{"a.csv": hdr},
			"empty: no detail rows in a.csv", results.ErrEmpty},
		{"every error at once, in the files' order: lines that do not parse, and the checks of those that do",
			map[string]string{
				"a.csv": hdr + "kvstore,nopersist,set,1,ok,abc\nkvstore,nopersist,set,2,ok,100,extra\nkvstore,no\"persist,set,3,ok,1\n" +
					"kvstore,nopersist,set,4,ok,-5\nkvstore,nopersist,set,5,ok\nkvstore,nopersist,set,6,ok,100\nkvstore,nopersist,set,6,ok,100\n",
				"b.csv": hdr + "kvstore,nopersist,set,x,ok,100\nkvstore,nopersist,set,7,ok,100\n",
			},
			`a.csv:2: column qps: "abc" is not a number` + "\n" +
				"a.csv:3: not CSV: 7 fields, the header has 6\n" +
				`a.csv:4: not CSV: bare " in non-quoted-field` + "\n" +
				"a.csv:5: column qps: bad value: an ok row needs a positive QPS, got -5\n" +
				"a.csv:6: not CSV: 5 fields, the header has 6\n" +
				"a.csv:8: duplicate round: kvstore/nopersist/set round 6 already has an ok row at a.csv:7\n" +
				`b.csv:2: column round: "x" is not an integer`, results.ErrNotNumber},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			var inputs []string
			for _, name := range slices.Sorted(maps.Keys(tt.files)) {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(tt.files[name]), 0o644); err != nil {
					t.Fatal(err)
				}
				inputs = append(inputs, name)
			}
			t.Chdir(dir)
			err := Run(context.Background(), RunOptions{Inputs: inputs}, new(bytes.Buffer))
			testutil.CheckError(t, err, tt.want, tt.is)
		})
	}
}

func TestRunBadInvocation(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.csv")
	if err := os.WriteFile(good, []byte(hdr+"kvstore,nopersist,set,1,ok,100\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		opts RunOptions
		want string
		is   error
	}{
		{"no files match", RunOptions{Inputs: []string{filepath.Join(dir, "results", "*.csv")}},
			`no files match "` + filepath.Join(dir, "results", "*.csv") + `"`, results.ErrNoFiles},
		{"no argument", RunOptions{}, "no files match: no detail CSV given", results.ErrNoFiles},
		{"missing file", RunOptions{Inputs: []string{filepath.Join(dir, "nope.csv")}},
			"read detail CSV: open " + filepath.Join(dir, "nope.csv") + ": no such file or directory", os.ErrNotExist},
		{"bad format", RunOptions{Inputs: []string{good}, Format: "xml"},
			`bad option: format "xml" (want md, csv, json or html)`, report.ErrFormat},
		{"bad language", RunOptions{Inputs: []string{good}, Report: report.Options{Lang: "fr"}},
			`bad option: language "fr" (want en or zh)`, report.ErrFormat},
		{"bad chart name", RunOptions{Inputs: []string{good}, Chart: "chart.gif"},
			`bad option: chart "chart.gif": the file name must end in .svg or .png`, report.ErrFormat},
		{"bad baseline syntax", RunOptions{Inputs: []string{good}, Baselines: "kvstore"},
			`bad option: baseline "kvstore": want target=strategy`, report.ErrFormat},
		{"unknown baseline strategy", RunOptions{Inputs: []string{good}, Baselines: "kvstore=persist_no"},
			`bad option: baseline kvstore=persist_no: target kvstore has no strategy "persist_no" (it has nopersist)`, report.ErrFormat},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Run(context.Background(), tt.opts, new(bytes.Buffer))
			testutil.CheckError(t, err, tt.want, tt.is)
		})
	}
}
