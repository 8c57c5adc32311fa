package report

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kvbench/kvbench/pkg/results"
	"github.com/kvbench/kvbench/pkg/stats"
)

// NodeSpread is how one scenario of a cluster target (target, strategy,
// mode) spread its load and latency over the masters, from the nodes CSV.
// A shard is a master's place in slot order: every attempt runs on a fresh
// cluster, so shard i of each attempt is pooled.
type NodeSpread struct {
	Target   string `json:"target"`
	Strategy string `json:"strategy"`
	Mode     string `json:"mode"`
	// Shards is the number of masters; Attempts the attempts pooled.
	Shards   int `json:"shards"`
	Attempts int `json:"attempts"`
	// Share is each shard's fraction of its attempt's requests, averaged
	// over the attempts; P99 each shard's median p99 latency, µs.
	Share []float64 `json:"share"`
	P99   []float64 `json:"p99_us"`
	// Hot is the shard (0-based) with the largest share, and HotRatio its
	// share over an even one (1/Shards): 1 is a perfectly even spread.
	Hot      int     `json:"hot"`
	HotRatio float64 `json:"hot_ratio"`
}

// NodeSpreads pools node rows by scenario, in target, strategy and mode
// order. Within an attempt the rows are in slot order, as run writes them;
// attempts whose nodes served no request are left out.
func NodeSpreads(rows []results.NodeRow) []NodeSpread {
	type attempt struct {
		results.ScenarioKey
		run          string
		round, tries int
	}
	var order []attempt
	byAttempt := make(map[attempt][]results.NodeRow)
	for _, r := range rows {
		a := attempt{results.ScenarioKey{Target: r.Target, Strategy: r.Strategy, Mode: r.Mode}, r.RunID, r.Round, r.Attempt}
		if _, ok := byAttempt[a]; !ok {
			order = append(order, a)
		}
		byAttempt[a] = append(byAttempt[a], r)
	}
	pooled := make(map[results.ScenarioKey]*struct {
		shares, p99s [][]float64 // by shard, one per attempt
		attempts     int
	})
	for _, a := range order {
		nodes := byAttempt[a]
		var total int64
		for _, n := range nodes {
			total += n.Requests
		}
		if total == 0 {
			continue
		}
		p := pooled[a.ScenarioKey]
		if p == nil {
			p = &struct {
				shares, p99s [][]float64
				attempts     int
			}{}
			pooled[a.ScenarioKey] = p
		}
		p.attempts++
		for i, n := range nodes {
			if i == len(p.shares) {
				p.shares, p.p99s = append(p.shares, nil), append(p.p99s, nil)
			}
			p.shares[i] = append(p.shares[i], float64(n.Requests)/float64(total))
			p.p99s[i] = append(p.p99s[i], n.LatP99Us)
		}
	}
	var out []NodeSpread
	for sc, p := range pooled {
		s := NodeSpread{Target: sc.Target, Strategy: sc.Strategy, Mode: sc.Mode, Shards: len(p.shares), Attempts: p.attempts}
		for i := range p.shares {
			s.Share = append(s.Share, stats.Mean(p.shares[i]))
			s.P99 = append(s.P99, stats.Median(p.p99s[i]))
			if s.Share[i] > s.Share[s.Hot] {
				s.Hot = i
			}
		}
		s.HotRatio = s.Share[s.Hot] * float64(s.Shards)
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b NodeSpread) int {
		return strings.Compare(a.Target+"\x00"+a.Strategy+"\x00"+a.Mode, b.Target+"\x00"+b.Strategy+"\x00"+b.Mode)
	})
	return out
}

// AddNodesFile sets r.Nodes from the nodes CSV at path; a file that does
// not exist (no cluster target ran) leaves r.Nodes as it is.
func (r *Report) AddNodesFile(path string) error {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	rows, err := results.ReadNodesCSV(f, path)
	if err != nil {
		return err
	}
	r.Nodes = NodeSpreads(rows)
	return nil
}

// addNodesBeside reads the nodes CSVs that "kvbench run" wrote beside the
// detail CSVs (x_detail_TS.csv → x_nodes_TS.csv), where there are some.
func (r *Report) addNodesBeside(details []string) error {
	var rows []results.NodeRow
	for _, d := range details {
		dir, base := filepath.Split(d)
		if !strings.Contains(base, "_detail_") {
			continue
		}
		path := filepath.Join(dir, strings.Replace(base, "_detail_", "_nodes_", 1))
		f, err := os.Open(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		more, err := results.ReadNodesCSV(f, path)
		f.Close()
		if err != nil {
			return err
		}
		rows = append(rows, more...)
	}
	if len(rows) > 0 {
		r.Nodes = NodeSpreads(rows)
	}
	return nil
}
