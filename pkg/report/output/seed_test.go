package output

import (
	"strconv"
	"testing"

	"github.com/kvbench/kvbench/pkg/report"
	"github.com/kvbench/kvbench/pkg/results"
)

// seedFiles are seed 000's raw rounds, transcribed into detail CSVs.
var seedFiles = []string{
	"../../../testdata/report/seed000/kvstore_detail.csv",
	"../../../testdata/report/seed000/redis_detail.csv",
}

// reportOf is the report of detail CSVs.
func reportOf(t testing.TB, opts report.Options, files ...string) *report.Report {
	t.Helper()
	rows, err := results.ReadFiles(files)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := report.Build(rows, opts)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func seedReport(t testing.TB, opts report.Options) *report.Report {
	t.Helper()
	return reportOf(t, opts, seedFiles...)
}

func scenario(t *testing.T, rep *report.Report, target, strategy, mode string) *report.Scenario {
	t.Helper()
	for _, tr := range rep.Targets {
		if tr.Target == target {
			if sc := tr.Scenario(strategy, mode); sc != nil {
				return sc
			}
		}
	}
	t.Fatalf("no scenario %s/%s/%s", target, strategy, mode)
	return nil
}

// TestSeed000Raw checks the raw table's means against seed 000.
func TestSeed000Raw(t *testing.T) {
	rep := seedReport(t, report.Options{})
	tests := []struct {
		target, strategy, mode string
		meanQPS, meanUs        string
	}{
		{"kvstore", "persist_no", "set", "141042.80", "7.09"},
		{"kvstore", "persist_no", "get", "161219.60", "6.21"},
		{"kvstore", "persist_everysec", "set", "134713.60", "7.43"},
		{"kvstore", "persist_everysec", "get", "162331.80", "6.16"},
		{"kvstore", "nopersist", "set", "147076.00", "6.82"},
		{"kvstore", "nopersist", "get", "162186.20", "6.17"},
		{"redis", "none", "set", "204756.00", "4.89"},
		{"redis", "none", "get", "219183.40", "4.56"},
		{"redis", "aof_no", "set", "144851.20", "6.91"},
		{"redis", "aof_no", "get", "251624.40", "4.24"},
		{"redis", "aof_everysec", "set", "140114.00", "7.14"},
		{"redis", "aof_everysec", "get", "205409.00", "4.87"},
	}
	for _, tt := range tests {
		t.Run(tt.target+"/"+tt.strategy+"/"+tt.mode, func(t *testing.T) {
			sc := scenario(t, rep, tt.target, tt.strategy, tt.mode)
			if len(sc.Rounds) != 5 {
				t.Errorf("%d rounds, want 5", len(sc.Rounds))
			}
			if got := sc.MeanQPS.String(); got != tt.meanQPS {
				t.Errorf("mean QPS %s, want %s", got, tt.meanQPS)
			}
			if got := sc.MeanUsPerOp.String(); got != tt.meanUs {
				t.Errorf("mean us/op %s, want %s", got, tt.meanUs)
			}
		})
	}
}

// TestSeed000Trimmed checks every figure of seed 000's trimmed tables.
func TestSeed000Trimmed(t *testing.T) {
	rep := seedReport(t, report.Options{})
	tests := []struct {
		target, strategy, mode string
		dropped                int
		droppedQPS, qps, us    string
	}{
		{"kvstore", "persist_no", "set", 5, "144388.00", "140206.50", "7.13"},
		{"kvstore", "persist_no", "get", 5, "147881.00", "164554.25", "6.08"},
		{"kvstore", "persist_everysec", "set", 5, "141145.00", "133105.75", "7.52"},
		{"kvstore", "persist_everysec", "get", 5, "158226.00", "163358.25", "6.12"},
		{"kvstore", "nopersist", "set", 3, "135043.00", "150084.25", "6.67"},
		{"kvstore", "nopersist", "get", 3, "155890.00", "163760.25", "6.11"},
		{"redis", "none", "set", 3, "193900.00", "207470.00", "4.82"},
		{"redis", "none", "get", 1, "225347.00", "217642.50", "4.59"},
		{"redis", "aof_no", "set", 5, "150658.00", "143399.50", "6.98"},
		{"redis", "aof_no", "get", 5, "402028.00", "214023.50", "4.68"},
		{"redis", "aof_everysec", "set", 2, "132998.00", "141893.00", "7.05"},
		{"redis", "aof_everysec", "get", 4, "192190.00", "208713.75", "4.79"},
	}
	for _, tt := range tests {
		t.Run(tt.target+"/"+tt.strategy+"/"+tt.mode, func(t *testing.T) {
			sc := scenario(t, rep, tt.target, tt.strategy, tt.mode)
			got := []string{strconv.Itoa(sc.DroppedRound), sc.DroppedQPS.String(), sc.TrimmedQPS.String(), sc.TrimmedUsPerOp.String()}
			want := []string{strconv.Itoa(tt.dropped), tt.droppedQPS, tt.qps, tt.us}
			names := []string{"dropped round", "dropped QPS", "trimmed QPS", "trimmed us/op"}
			for i := range got {
				if got[i] != want[i] {
					t.Errorf("%s %s, want %s", names[i], got[i], want[i])
				}
			}
		})
	}
}

// TestSeed000Overhead checks every figure of seed 000's overhead tables,
// and the baselines the automatic rule picks.
func TestSeed000Overhead(t *testing.T) {
	rep := seedReport(t, report.Options{})
	tests := []struct {
		target, strategy, baseline     string
		setQPS, setUs, getQPS, getUs   string
		setSignificant, getSignificant bool
	}{
		{"kvstore", "persist_no", "nopersist", "-6.58%", "+6.90%", "+0.48%", "-0.49%", false, false},
		{"kvstore", "persist_everysec", "nopersist", "-11.31%", "+12.74%", "-0.25%", "+0.16%", true, false},
		{"redis", "aof_no", "none", "-30.88%", "+44.81%", "-1.66%", "+1.96%", true, false},
		{"redis", "aof_everysec", "none", "-31.61%", "+46.27%", "-4.10%", "+4.36%", true, true},
	}
	for _, tt := range tests {
		t.Run(tt.target+"/"+tt.strategy, func(t *testing.T) {
			set := scenario(t, rep, tt.target, tt.strategy, "set")
			get := scenario(t, rep, tt.target, tt.strategy, "get")
			if set.Baseline != tt.baseline || get.Baseline != tt.baseline {
				t.Errorf("baseline %q/%q, want %q", set.Baseline, get.Baseline, tt.baseline)
			}
			cells := []struct {
				c           *report.Change
				want        string
				significant bool
			}{
				{set.Change(report.MetricQPS), tt.setQPS, tt.setSignificant},
				{set.Change(report.MetricUsPerOp), tt.setUs, tt.setSignificant},
				{get.Change(report.MetricQPS), tt.getQPS, tt.getSignificant},
				{get.Change(report.MetricUsPerOp), tt.getUs, tt.getSignificant},
			}
			for i, c := range cells {
				if c.c == nil {
					t.Fatalf("cell %d missing", i)
				}
				if got := c.c.Pct.Change(); got != c.want {
					t.Errorf("cell %d (%s): %s, want %s", i, c.c.Metric, got, c.want)
				}
				if c.c.Significant != c.significant {
					t.Errorf("cell %d (%s): significant %v (p=%v), want %v", i, c.c.Metric, c.c.Significant, c.c.P, c.significant)
				}
			}
		})
	}
	for _, tr := range rep.Targets {
		if len(tr.Overheads) != 1 || len(tr.Overheads[0].Strategies) != 2 || len(tr.NoBaseline) != 0 {
			t.Errorf("%s: overheads %+v, no baseline %v", tr.Target, tr.Overheads, tr.NoBaseline)
		}
		if s := scenario(t, rep, tr.Target, tr.Overheads[0].Baseline, "set"); s.Changes != nil {
			t.Errorf("the baseline %s has changes %v", s.Strategy, s.Changes)
		}
	}
}
