package results

import (
	"bufio"
	"encoding/csv"
	"os"
	"slices"
)

// Companion names the kind of a CSV that kvbench writes beside a detail
// CSV ("summary or trimmed", "nodes", "series") from its header line, or
// returns "" for any other file (a detail CSV, or one that does not open
// or parse: its reader says why). "kvbench report results/*.csv" skips
// the companions: the nodes and series CSVs are read beside their detail
// CSV, and the summary and trimmed CSVs are what the report makes.
func Companion(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	header, err := csv.NewReader(bufio.NewReader(f)).Read()
	if err != nil {
		return ""
	}
	has := func(cols ...string) bool {
		for _, c := range cols {
			if !slices.Contains(header, c) {
				return false
			}
		}
		return true
	}
	switch {
	case has(RequiredColumns...) && !has(SeriesRequired...) && !has(nodeColumns...):
		return ""
	case has(SeriesRequired...):
		return "series"
	case has(nodeColumns...):
		return "nodes"
	case has("target", "strategy", "mode", "rounds") && !has("round"):
		return "summary or trimmed"
	}
	return ""
}

// DetailFiles drops from files the companions (see Companion), unless
// nothing else is left: then the files are returned as they are, and
// reading them says what is wrong.
func DetailFiles(files []string) []string {
	var out []string
	for _, f := range files {
		if Companion(f) == "" {
			out = append(out, f)
		}
	}
	if len(out) == 0 {
		return files
	}
	return out
}
