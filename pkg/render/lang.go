package render

import "fmt"

// The languages of the report: its headings, column names, notes,
// legends and warnings; the data and the charts' texts stay as they are.
const (
	// LangEN writes English (the default).
	LangEN = "en"
	// LangZH writes the reference tables' Chinese headings (策略, 模式, …).
	LangZH = "zh"
)

// Labels are the words of the report in one language, a set per part of
// the report. A format string's verbs say what it is given, in order.
type Labels struct {
	// Lang is the language, LangEN or LangZH.
	Lang string
	// Tables are the per-target tables' words, and the words every part
	// shares (strategy, mode, target, …).
	Tables
	Settings  SettingsLabels
	Side      SideLabels
	Workloads WorkloadsLabels
	Warnings  WarningLabels
	Curves    CurveLabels
	Stalls    StallLabels
	Nodes     NodeLabels
	Recovery  RecoveryLabels
	Telemetry TelemetryLabels
	Profiles  ProfileLabels
	// Compare are the words of an adaptive run's report: its comparisons
	// and its slices.
	Compare ComparisonLabels
	// SeriesPlot is a series plot's caption: target, strategy, mode, the
	// stall rule's share of the median QPS (%) and its latency limit.
	SeriesPlot string
}

// Tables are the words of the per-target tables: the raw rounds, the
// trimmed figures, the overhead against the baseline, the spread, the
// latencies, the failed attempts; the title and the trimming rule; the
// chart's captions.
type Tables struct {
	Title, Rule                                string
	Strategy, Mode, Round                      string // Round: "Round%d"
	MeanQPS, MeanUs                            string
	Dropped, DroppedQPS, TrimmedQPS, TrimmedUs string
	TrimmedCPU                                 string
	Change                                     string // "%s %s change": mode, metric
	Raw, RawN                                  string // "%s raw rounds", "… (%d)"
	Trimmed, TrimmedN                          string
	Overhead, OverheadAlloc                    string // target, baseline[, alloc]
	Legend                                     string // alpha, alpha
	NoBaseline, NoBaselineAlloc                string
	Untrimmed                                  string // list of scenarios
	Spread, Rounds, Failed, CV, MinQPS, MaxQPS string
	Median, CI, CILevel                        string
	CILegend, CILegendMany                     string // level, rounds it needs, level
	Latency, P50, P99, P999                    string
	FailedTitle, Target, RoundCol, Attempt     string
	Error, Source                              string
	WarningsTitle, Chart                       string
	Flushed                                    string // targets
	Persistence, Command                       string
	LatencyPlot, Pictures                      string // LatencyPlot: mode
}

// SettingsLabels are the settings block's: its intro, one line per
// setting (the value formatted in), the machine's parts, and "mixed (…)".
type SettingsLabels struct {
	Intro, Requests, Rounds, Pipeline, Connections string
	Keyspace, ValueSize, Servers, Machine          string
	Cores, Kernel, Mixed, PartSep                  string
	// Placement is where the threads ran; SliceRequests and Slices the
	// Requests and Rounds lines of an adaptive run.
	Placement, SliceRequests, Slices string
}

// ComparisonLabels are an adaptive run's: the rule that replaces the
// trimming rule; the comparisons' section title, a mode's heading
// (mode), its columns (Ratio: the level in percent), a row's name
// (VsBaseline: target, strategy, baseline; VsReference: target,
// strategy, reference target, its strategy), the verdicts (Equivalent:
// the margin, "3%"), the measurements (a count), the legend (the level,
// the margin twice), the disturbed slices' line (NoneDisturbed: the
// slices; Disturbed: the disturbed, the slices, the reasons, each a
// Reason: its name, count, worst, joined by ReasonSep); the slices
// table's heading (target) and columns.
type ComparisonLabels struct {
	Rule, Title, Mode                            string
	Comparison, Metric, Ratio, Verdict, Measured string
	VsBaseline, VsReference                      string
	Faster, Slower, Equivalent, Undecided        string
	Pairs, Rounds, Level                         string
	Legend, NoneDisturbed, Disturbed, Reason     string
	ReasonSep, Slices, SlicesCol, DisturbedCol   string
	MedianUs, MedianP99                          string
}

// VerdictText is a verdict of package stats ("faster", "slower",
// "equivalent", "undecided") in these words, margin the equivalence's
// margin as printed ("3%").
func (l *ComparisonLabels) VerdictText(verdict, margin string) string {
	switch verdict {
	case "faster":
		return l.Faster
	case "slower":
		return l.Slower
	case "equivalent":
		return fmt.Sprintf(l.Equivalent, margin)
	}
	return l.Undecided
}

// SideLabels are the side-by-side tables': the section's title, a table's
// heading (mode, reference), its columns (column[, reference, metric]),
// the notes of a reference that did not run or has no ok round
// (reference, mode) and the legend (reference, alpha, alpha).
type SideLabels struct {
	Title, Mode, Strategy, QPS, P99, CPU, Ratio string
	Legend, LegendCPU, NotRun, NoRounds         string
}

// WorkloadsLabels are the workloads' tables': the section's title, a
// table's heading (workload[, reference]), its columns (Ratio:
// reference), the total's name, an unsupported target's line (target,
// error) and the legend (alpha, alpha).
type WorkloadsLabels struct {
	Title, Table, TableRef, Change, Ratio string
	Total, Unsupported, Legend            string
}

// WarningLabels are the warnings': the head of each kind (its verbs: the
// rounds it needs, α or the CV limit), then the subjects after Colon,
// joined by ListSep, each with its count of rounds or failed attempts.
type WarningLabels struct {
	NoRounds, ClientBound, RefusedWrites, Untrimmed, FewRounds string
	Noisy, TestPower, TestTies, Baselines                      string
	Colon, ListSep, Failed1, FailedN, Rounds1, RoundsN         string
	Every, More                                                string // "every scenario", ", and %d more"
	Parens, Using                                              string
}

// CurveLabels are the latency–throughput and capacity tables' and the
// load curve plot's.
type CurveLabels struct {
	Title, Capacity, CapacityCol, Rate, RateQPS, QPS, Closed string
	Vs, Late, Lost, Held, Legend, CapacityLegend, Plot       string
}

// StallLabels are the stalls table's.
type StallLabels struct {
	Title, PerMin, Longest, Total, Vs, Legend string
	// LatencyOnly follows the legend when no round had two full
	// intervals (report.StallsByLatencyOnly).
	LatencyOnly string
}

// NodeLabels are the spread over a cluster's nodes'.
type NodeLabels struct{ Title, Shards, Share, P99, Hottest, Legend string }

// RecoveryLabels are the recovery tables'.
type RecoveryLabels struct {
	Title, Crash, Rounds, Recovery, Keys, MB, Acked string
	Lost, Window, Promise, Empty, Legend            string
}

// TelemetryLabels are the server telemetry tables'.
type TelemetryLabels struct {
	Title, ClientP50, ServerUs, Used, RSS, PerKey, Legend string
}

// ProfileLabels are the HTML page's section of flame graphs.
type ProfileLabels struct{ Title, Note, Scenario, Flame, Diff string }

// LabelsOf returns the labels of a language, English's for one it does
// not know.
func LabelsOf(lang string) *Labels {
	if l, ok := labels[lang]; ok {
		return l
	}
	return labels[LangEN]
}

// KnownLang reports whether lang is LangEN or LangZH.
func KnownLang(lang string) bool { _, ok := labels[lang]; return ok }

var labels = map[string]*Labels{
	LangEN: {
		Lang: LangEN,
		Tables: Tables{
			Title: "kvbench report",
			Rule: "Trimming rule: per scenario (target, strategy, mode), the round whose QPS deviates most from the median of the rounds' QPS is dropped " +
				"(the earliest on a tie), and the trimmed figures are the means of the remaining rounds; with fewer than 3 ok rounds nothing is dropped. " +
				"Every figure has 2 decimals; a round's us/op is the load generator's, or 1e6/QPS; means of us/op are means of the rounds' 2-decimal values.",
			Strategy:      "strategy",
			Mode:          "mode",
			Round:         "Round%d",
			MeanQPS:       "mean QPS",
			MeanUs:        "mean us/op",
			Dropped:       "dropped round",
			DroppedQPS:    "dropped QPS",
			TrimmedQPS:    "trimmed mean QPS",
			TrimmedUs:     "trimmed mean us/op",
			TrimmedCPU:    "trimmed mean QPS/CPU-s",
			Change:        "%s %s change",
			Raw:           "%s raw rounds",
			RawN:          "%s raw rounds (%d)",
			Trimmed:       "%s trimmed",
			TrimmedN:      "%s trimmed (mean of %d rounds)",
			Overhead:      "%s overhead (baseline %s, trimmed)",
			OverheadAlloc: "%s overhead (baseline %s, alloc %s, trimmed)",
			Legend: "Change: (strategy / baseline - 1) * 100 from the trimmed figures as shown above. " +
				"(p=…): two-sided Mann–Whitney U test of the strategy's ok rounds against the baseline's, significant at α = %v. " +
				"~: not significant (p > %v): the difference may be noise.",
			NoBaseline:      "No baseline for %s: no strategy has persistence none (or, without a persistence column, is named none or nopersist). Choose one with --baseline %s=STRATEGY; the overhead table is omitted.",
			NoBaselineAlloc: "No baseline for %s with alloc %s: no strategy of that alloc has persistence none. Choose one with --baseline %s=STRATEGY; the overhead table for that alloc is omitted.",
			Untrimmed:       "Fewer than 3 ok rounds, nothing dropped: %s.",
			Spread:          "%s spread (all ok rounds)",
			Rounds:          "rounds",
			Failed:          "failed",
			CV:              "CV",
			MinQPS:          "min QPS",
			MaxQPS:          "max QPS",
			Median:          "median QPS",
			CI:              "CI of the median",
			CILevel:         "confidence",
			CILegend: "Confidence below %v%%: with fewer than %d rounds no interval of the median reaches %v%%; " +
				"the interval is then [min QPS, max QPS], at its exact confidence 1 - 2/2^rounds (93.75%% for 5 rounds).",
			CILegendMany: "Confidence below %v%%: too few rounds for an interval of the median at %v%%; " +
				"the interval is then [min QPS, max QPS], at its exact confidence 1 - 2/2^rounds.",
			Latency:       "%s latency (trimmed means, us)",
			P50:           "p50",
			P99:           "p99",
			P999:          "p99.9",
			FailedTitle:   "Failed attempts",
			Target:        "target",
			RoundCol:      "round",
			Attempt:       "attempt",
			Error:         "error",
			Source:        "source",
			WarningsTitle: "Warnings",
			Chart:         "Trimmed mean QPS per scenario",
			Flushed:       "Flushed: %s held keys kvbench had not written; they were deleted (FLUSHALL, allowed with --allow-flush or allow_flush) before the first attempt, as the flushed column shows.",
			Persistence:   "persistence",
			Command:       "command",
			LatencyPlot:   "%s: latency by percentile, from the merged histograms of the rounds the trimming keeps (curves with dots: the trimmed means of the recorded percentiles, for rows without histograms)",
			Pictures:      "Charts",
		},
		Settings: SettingsLabels{
			Intro:         "Settings:",
			Requests:      "requests per round: %s",
			Rounds:        "rounds per scenario: %s",
			Pipeline:      "pipeline: %s",
			Connections:   "connections: %s",
			Keyspace:      "keyspace: %s keys",
			ValueSize:     "value size: %s bytes",
			Servers:       "servers: %s",
			Machine:       "load generator: %s",
			Cores:         "%s cores",
			Kernel:        "kernel %s",
			Mixed:         "mixed (%s)",
			PartSep:       ", ",
			Placement:     "placement: %s",
			SliceRequests: "requests per slice: %s",
			Slices:        "slices per scenario: %s",
		},
		Side: SideLabels{
			Title:    "Targets side by side",
			Mode:     "%s: targets side by side (trimmed, against %s)",
			Strategy: "%s strategy",
			QPS:      "%s QPS",
			P99:      "%s p99",
			CPU:      "%s QPS/CPU-s",
			Ratio:    "%s/%s %s",
			Legend: "One row per persistence class; a strategy with no counterpart in a target has a row of its own, with - in the other cells. " +
				"QPS and p99 (us) are the trimmed means of the tables below. " +
				"Ratio: target / %s from the trimmed figures as shown. " +
				"(p=…): two-sided Mann–Whitney U test of the two scenarios' ok rounds, significant at α = %v. " +
				"~: not significant (p > %v): the difference may be noise.",
			LegendCPU: "QPS/CPU-s: requests per CPU-second of the server (trimmed mean over the rounds that record it), the fair figure between servers with different numbers of threads.",
			NotRun:    "No ratio to %s: it did not run %s. The other targets' figures:",
			NoRounds:  "No ratio to %s: it has no ok round of %s, every attempt failed (see the failed attempts below). The other targets' figures:",
		},
		Workloads: WorkloadsLabels{
			Title:       "Workloads",
			Table:       "%s: commands (trimmed)",
			TableRef:    "%s: commands (trimmed, against %s)",
			Change:      "QPS change vs baseline",
			Ratio:       "QPS / %s",
			Total:       "total (mix)",
			Unsupported: "- %s: not measured, unsupported: %s",
			Legend: "One row per command of the workload, and the mix's total, per target and strategy. " +
				"QPS and p99 (us) are the trimmed means of the command's rounds (its own scenario in the tables below). " +
				"Change: (strategy / the target's baseline - 1) * 100; ratio: target / the reference target, for the strategy of the same persistence class; " +
				"both from the trimmed figures as shown. (p=…): two-sided Mann–Whitney U test, significant at α = %v. ~: not significant (p > %v).",
		},
		Warnings: WarningLabels{
			NoRounds:    "no ok round, nothing to report",
			ClientBound: "the load generator may be the bottleneck: add --threads or agents (rounds where it was busy for most of its threads' time)",
			RefusedWrites: "writes were refused (an insert-only command met existing keys, the conflicts column): the QPS counts writes that did not happen, so these scenarios are compared with nothing; " +
				"give --keyspace at least --requests, or a write command that overwrites",
			Untrimmed: "fewer than %d ok rounds: nothing dropped, and one disturbed round decides the means",
			FewRounds: "fewer than %d ok rounds: one disturbed round still sways the means, and the significance test has little power",
			Noisy:     "CV above %v%%: the rounds disagree (a busy machine or an unstable server), so differences smaller than the spread are noise",
			TestPower: "with fewer than %d rounds on both sides, the significance test cannot find a difference at α = %v",
			TestTies:  "every round of the strategy and of its baseline has the same value: the significance test cannot rank them",
			Baselines: "several strategies have persistence none: the first by name is the baseline (choose one with --baseline TARGET=STRATEGY)",
			Colon:     ": ",
			ListSep:   ", ",
			Failed1:   " (1 failed attempt)",
			FailedN:   " (%d failed attempts)",
			Rounds1:   " (1 round)",
			RoundsN:   " (%d rounds)",
			Every:     "every scenario",
			More:      ", and %d more",
			Parens:    " (%s)",
			Using:     "using %s",
		},
		Curves: CurveLabels{
			Title:          "Latency–throughput",
			Capacity:       "Capacity at %s",
			CapacityCol:    "capacity (req/s)",
			Rate:           "rate",
			RateQPS:        "rate (req/s)",
			QPS:            "QPS",
			Closed:         "closed loop",
			Vs:             "p99 vs baseline",
			Late:           "late",
			Lost:           "capacity lost vs baseline",
			Held:           "held in rounds",
			Legend:         "Each rate is an open-loop phase after the attempt's closed loop, on the same server (run --rates; a percentage is of that closed loop's QPS): latencies in us from each request's intended send time, trimmed means over rounds (the round whose p99 is farthest from the median dropped). The closed loop's row is the scenario's own measurement. late: the rounds whose requests left late (send lag p99 above %v) of those that record it: their latencies include the client's queueing, not only the server's. p99 vs baseline: the change against the baseline strategy at the same rate, with the Mann–Whitney U p-value of the rounds, ~ when not significant at α = %g.",
			CapacityLegend: "Capacity: the highest rate at which the objective held (run --slo), the mean over the rounds the QPS trimming keeps; held in rounds: the rounds whose search found one. Capacity lost: the percentage of the baseline strategy's capacity lost, with the Mann–Whitney U p-value of the rounds, ~ when not significant at α = %g. A capacity or a loss that cannot be given says why in brackets.",
			Plot:           "%s: %s against throughput at each rate of the load curve (trimmed means over rounds), one curve per target and strategy; dashed line: the objective; crosses: each scenario's capacity",
		},
		Stalls: StallLabels{
			Title:       "Stalls",
			PerMin:      "stalls/min",
			Longest:     "longest ms",
			Total:       "stalls",
			Vs:          "vs baseline (p)",
			Legend:      "stalls/min: the kept rounds' mean of stalls per minute measured; longest: the longest stall of the kept rounds; stalls: their count in all the kept rounds (the stalls and longest_stall_ms columns: runs of intervals below --stall-below of the median interval's QPS, or with a request over --stall-latency). vs baseline: the Mann–Whitney U p-value of the ok rounds' stalls per minute against the baseline strategy's, ~ when not significant at α = %g.",
			LatencyOnly: "No round here had two full intervals (an adaptive run's slices are shorter than --interval), so only --stall-latency could find a stall: a drop in throughput within a round is not counted. Give --interval shorter than --slice to count both.",
		},
		Nodes: NodeLabels{
			Title:   "Cluster nodes: spread of load and latency",
			Shards:  "shards",
			Share:   "QPS share min / median / max",
			P99:     "p99 us min / median / max",
			Hottest: "hottest shard",
			Legend:  "QPS share: a master's fraction of its attempt's requests (shard i is the i-th master in slot order, averaged over the attempts); p99: the median over the attempts of its p99 latency. The hottest shard's share is also given against an even share (1.00×).",
		},
		Recovery: RecoveryLabels{
			Title:    "Recovery after kill -9",
			Crash:    "crash",
			Rounds:   "rounds",
			Recovery: "recovery s",
			Keys:     "keys/s",
			MB:       "MB/s",
			Acked:    "acked writes",
			Lost:     "acked lost",
			Window:   "lost window s",
			Promise:  "promise",
			Empty:    "came back empty",
			Legend:   "Each round fills the keyspace, writes a stream of acknowledged writes (a key per write, and a counter per connection), kills the server's process group with SIGKILL amid the stream and starts it again on its files. recovery s: from the start of the new process to its answer to a read of a key it had (median over the rounds that have it); keys/s and MB/s: the keys it holds and the size of its log or snapshot over that time; acked writes: the writes acknowledged before the kill, summed over the rounds; acked lost: those missing or older after the restart; lost window s: how long before the crash the oldest lost write was acknowledged (the widest of the rounds). came back empty: the server answered without the dataset, so there is no recovery to time. crash: process, the OS kept what the server had written; power (run --power-loss), its directory was on a file system that then dropped what the server had not fsynced, as a power loss does.",
		},
		Telemetry: TelemetryLabels{
			Title:     "Server telemetry",
			ClientP50: "client p50 us",
			ServerUs:  "server us/call",
			Used:      "used_memory MiB",
			RSS:       "peak RSS MiB",
			PerKey:    "bytes/key",
			Legend:    "Medians over the ok rounds. client p50: the load generator's median latency; server us/call: the server's own time per call of the measured commands (INFO commandstats over the phase); used_memory: INFO memory after the phase; peak RSS: the resident set size of the processes kvbench started, sampled every 100 ms during the phase; bytes/key: used_memory over the keyspace, the server's fixed overhead included, where the phase found it prefilled (get, mixed). Empty: not measured.",
		},
		Profiles: ProfileLabels{
			Title:    "Profiles",
			Note:     "The servers' CPU profiles, each taken in one more round of its scenario after the measured rounds (its figures are not in the tables). A differential graph colours each frame by the change of its share from the baseline strategy's: red grew, blue shrank.",
			Scenario: "Scenario",
			Flame:    "Flame graph",
			Diff:     "Against the baseline",
		},
		SeriesPlot: "%s/%s %s: QPS and p99 latency per interval of the kept rounds; shaded: stalls by the default rule (QPS under %g%% of the round's median, or a request over %v); bands along the top: the server's events",
		Compare: ComparisonLabels{
			Rule: "Adaptive run: the servers of a mode ran at once, and every scenario was measured in short slices, in blocks: a block holds one or two slices of every scenario of the mode, " +
				"in a mirrored order (A B C … C B A), so that the machine's slow drift, which every scenario of a block sees alike, cancels in their comparison. " +
				"Every figure has 2 decimals; a slice's us/op is the load generator's, or 1e6/QPS.",
			Title:       "Comparisons",
			Mode:        "%s",
			Comparison:  "comparison",
			Metric:      "metric",
			Ratio:       "ratio [%s CI]",
			Verdict:     "verdict",
			Measured:    "measurements",
			VsBaseline:  "%s %s vs %s",
			VsReference: "%s %s vs %s %s",
			Faster:      "faster",
			Slower:      "slower",
			Equivalent:  "no difference larger than %s",
			Undecided:   "undecided",
			Pairs:       "%d pairs",
			Rounds:      "%d rounds",
			Level:       "%s at %s",
			Legend: "Ratio: the scenario's figure over the other's: a strategy over its target's baseline, a target over the reference target's strategy of the same persistence class; " +
				"for qps above 1 is faster, for p99 (latency) below 1 is. Pairs: each block gives the log-ratio of the two scenarios' slices in it (the means of their logs; " +
				"disturbed slices left out, and a block where either has none), and the ratio is the Hodges–Lehmann estimate of those log-ratios with the Wilcoxon signed-rank interval at %s " +
				"(with fewer than 6 pairs none reaches it: the exact level follows the interval). Rounds: the Mann–Whitney interval of the ratio of the two scenarios' ok rounds, unpaired. " +
				"Verdict: faster or slower when the interval lies wholly on that side of 1; no difference larger than %s when it lies within 1 ± %s; undecided otherwise: more measurements are needed.",
			NoneDisturbed: "Disturbed slices: none of %d.",
			Disturbed:     "Disturbed slices, left out of the comparisons: %d of %d (%s).",
			Reason:        "%s in %d, the worst %s",
			ReasonSep:     "; ",
			Slices:        "%s slices",
			SlicesCol:     "slices",
			DisturbedCol:  "disturbed",
			MedianUs:      "median us/op",
			MedianP99:     "median p99",
		},
	},
	LangZH: {
		Lang: LangZH,
		Tables: Tables{
			Title: "kvbench 报告",
			Rule: "去异常规则：每个场景（目标、策略、模式）按 qps 对各轮做中位数偏差，剔除偏差最大 1 轮（并列时剔除较早一轮），再对剩余轮次取均值；ok 轮次少于 3 轮时不剔除。" +
				"所有数字保留 2 位小数；每轮 us/op 取压测程序输出，缺失时为 1e6/QPS；us/op 均值是各轮 2 位小数值的均值。",
			Strategy:      "策略",
			Mode:          "模式",
			Round:         "Round%d",
			MeanQPS:       "原始均值QPS",
			MeanUs:        "原始均值us/op",
			Dropped:       "剔除轮次",
			DroppedQPS:    "剔除QPS",
			TrimmedQPS:    "去异常均值QPS",
			TrimmedUs:     "去异常均值us/op",
			TrimmedCPU:    "去异常均值QPS/服务器CPU秒",
			Change:        "%s %s变化",
			Raw:           "%s 原始轮次",
			RawN:          "%s 原始%d轮",
			Trimmed:       "%s 去异常后",
			TrimmedN:      "%s 去异常后（%d轮均值）",
			Overhead:      "%s 协议开销（基线 %s，去异常后）",
			OverheadAlloc: "%s 协议开销（基线 %s，alloc %s，去异常后）",
			Legend: "变化 = (策略 / 基线 - 1) * 100，按上表显示的去异常值计算。" +
				"(p=…)：策略与基线全部 ok 轮次的双侧 Mann–Whitney U 检验，在 α = %v 下显著。" +
				"~：不显著（p > %v），差异可能只是噪声。",
			NoBaseline:      "%s 未找到基线：没有 persistence 为 none 的策略（无 persistence 列时，也没有名为 none 或 nopersist 的策略）。可用 --baseline %s=策略 指定；已省略协议开销表。",
			NoBaselineAlloc: "%s（alloc %s）未找到基线：该 alloc 下没有 persistence 为 none 的策略。可用 --baseline %s=策略 指定；已省略该 alloc 的协议开销表。",
			Untrimmed:       "ok 轮次少于 3 轮，未剔除：%s。",
			Spread:          "%s 波动（全部 ok 轮次）",
			Rounds:          "轮数",
			Failed:          "失败",
			CV:              "变异系数",
			MinQPS:          "最小QPS",
			MaxQPS:          "最大QPS",
			Median:          "中位数QPS",
			CI:              "中位数置信区间",
			CILevel:         "置信度",
			CILegend: "置信度低于 %v%%：少于 %d 轮时，中位数的任何区间都达不到 %v%%；" +
				"此时区间为 [最小QPS, 最大QPS]，置信度取其精确值 1 - 2/2^轮数（5 轮为 93.75%%）。",
			CILegendMany: "置信度低于 %v%%：轮次太少，中位数区间达不到 %v%%；" +
				"此时区间为 [最小QPS, 最大QPS]，置信度取其精确值 1 - 2/2^轮数。",
			Latency:       "%s 延迟（去异常均值，us）",
			P50:           "p50",
			P99:           "p99",
			P999:          "p99.9",
			FailedTitle:   "失败尝试",
			Target:        "目标",
			RoundCol:      "轮次",
			Attempt:       "尝试",
			Error:         "错误",
			Source:        "来源",
			WarningsTitle: "警告",
			Chart:         "各场景去异常均值QPS",
			Flushed:       "已清空：%s 原有非 kvbench 写入的键，首次尝试前已被删除（FLUSHALL，由 --allow-flush 或 allow_flush 允许），见 flushed 列。",
			Persistence:   "持久化",
			Command:       "命令",
			LatencyPlot:   "%s：各百分位延迟，取去异常后保留轮次的直方图合并（带圆点的曲线：无直方图的行所记录百分位的去异常均值）",
			Pictures:      "图表",
		},
		Settings: SettingsLabels{
			Intro:         "设置：",
			Requests:      "每轮请求数：%s",
			Rounds:        "每个场景轮数：%s",
			Pipeline:      "pipeline：%s",
			Connections:   "连接数：%s",
			Keyspace:      "键空间（键数）：%s",
			ValueSize:     "值大小（字节）：%s",
			Servers:       "服务器版本：%s",
			Machine:       "压测机器：%s",
			Cores:         "%s 核",
			Kernel:        "内核 %s",
			Mixed:         "不一致（%s）",
			PartSep:       "，",
			Placement:     "线程放置：%s",
			SliceRequests: "每个切片请求数：%s",
			Slices:        "每个场景切片数：%s",
		},
		Side: SideLabels{
			Title:    "目标对比",
			Mode:     "%s：目标对比（去异常后，相对 %s）",
			Strategy: "%s 策略",
			QPS:      "%s QPS",
			P99:      "%s p99",
			CPU:      "%s QPS/服务器CPU秒",
			Ratio:    "%s/%s %s",
			Legend: "每个持久化级别一行；某目标没有对应策略的策略单列一行，其余单元格为 -。" +
				"QPS 和 p99（us）取下文各表的去异常均值。" +
				"比值 = 目标 / %s，按显示的去异常值计算。" +
				"(p=…)：两个场景全部 ok 轮次的双侧 Mann–Whitney U 检验，在 α = %v 下显著。" +
				"~：不显著（p > %v），差异可能只是噪声。",
			LegendCPU: "QPS/服务器CPU秒：服务器每 CPU 秒处理的请求数（记录该值的轮次的去异常均值），线程数不同的服务器之间可公平比较。",
			NotRun:    "无法与 %s 比较：它没有运行 %s。其他目标的数据：",
			NoRounds:  "无法与 %s 比较：它的 %s 没有 ok 轮次，每次尝试都失败了（见下文失败尝试）。其他目标的数据：",
		},
		Workloads: WorkloadsLabels{
			Title:       "工作负载",
			Table:       "%s：各命令（去异常后）",
			TableRef:    "%s：各命令（去异常后，相对 %s）",
			Change:      "QPS 相对基线变化",
			Ratio:       "QPS / %s",
			Total:       "合计（混合）",
			Unsupported: "- %s：未测量，不支持：%s",
			Legend: "每个目标、策略下，工作负载的每条命令一行，另有混合合计一行。" +
				"QPS 和 p99（us）取该命令各轮的去异常均值（即下文各表中该命令自己的场景）。" +
				"变化 = (策略 / 该目标基线 - 1) * 100；比值 = 目标 / 参照目标（取持久化级别相同的策略）；均按显示的去异常值计算。" +
				"(p=…)：双侧 Mann–Whitney U 检验，在 α = %v 下显著。~：不显著（p > %v）。",
		},
		Warnings: WarningLabels{
			NoRounds:    "没有 ok 轮次，无可报告",
			ClientBound: "压测程序可能是瓶颈：请增加 --threads 或使用 agents（压测线程大部分时间处于忙碌的轮次）",
			RefusedWrites: "有写入被拒绝（只插入的命令遇到已存在的键，见 conflicts 列）：QPS 计入了并未执行的写入，因此这些场景不与任何场景比较；" +
				"请让 --keyspace 不小于 --requests，或使用会覆盖的写命令",
			Untrimmed: "ok 轮次少于 %d 轮：未剔除，一轮受扰就决定均值",
			FewRounds: "ok 轮次少于 %d 轮：一轮受扰仍会左右均值，显著性检验的功效也很低",
			Noisy:     "变异系数超过 %v%%：各轮结果不一致（机器繁忙或服务器不稳定），小于波动幅度的差异只是噪声",
			TestPower: "双方轮次都少于 %d 轮时，显著性检验在 α = %v 下无法发现差异",
			TestTies:  "策略与基线的各轮取值全部相同：显著性检验无法排序",
			Baselines: "有多个策略的 persistence 为 none：按名称取第一个作基线（可用 --baseline 目标=策略 指定）",
			Colon:     "：",
			ListSep:   ", ",
			Failed1:   "（失败 1 次）",
			FailedN:   "（失败 %d 次）",
			Rounds1:   "（1 轮）",
			RoundsN:   "（%d 轮）",
			Every:     "所有场景",
			More:      "，另有 %d 个",
			Parens:    "（%s）",
			Using:     "采用 %s",
		},
		Curves: CurveLabels{
			Title:          "延迟–吞吐",
			Capacity:       "%s 下的容量",
			CapacityCol:    "容量（请求/秒）",
			Rate:           "速率",
			RateQPS:        "速率（请求/秒）",
			QPS:            "QPS",
			Closed:         "闭环",
			Vs:             "p99 对比基线",
			Late:           "发送滞后",
			Lost:           "相对基线损失的容量",
			Held:           "达标轮次",
			Legend:         "每个速率是该次尝试闭环测量之后、在同一服务器上的开环阶段（run --rates；百分比相对于该闭环的 QPS）：延迟单位 us，从每个请求的预定发送时刻算起，为各轮去异常后的均值（p99 离中位数最远的一轮被剔除）。闭环一行是该场景本身的测量。发送滞后：请求发送滞后（send lag p99 超过 %v）的轮次/记录了滞后的轮次：其延迟含客户端排队，不只是服务器的。p99 对比基线：与同一速率下基线策略相比的变化及各轮的 Mann–Whitney U p 值，α = %g 下不显著时为 ~。",
			CapacityLegend: "容量：目标仍满足的最高速率（run --slo），取 QPS 去异常后保留轮次的均值；达标轮次：搜索找到容量的轮次。损失的容量：相对基线策略容量损失的百分比及各轮的 Mann–Whitney U p 值，α = %g 下不显著时为 ~。无法给出的容量或损失在括号中说明原因。",
			Plot:           "%s：负载曲线各速率下的 %s 与吞吐（各轮去异常均值），每个目标与策略一条曲线；虚线：目标；叉号：各场景的容量",
		},
		Stalls: StallLabels{
			Title:       "停顿",
			PerMin:      "停顿/分钟",
			Longest:     "最长 ms",
			Total:       "停顿次数",
			Vs:          "对比基线 (p)",
			Legend:      "停顿/分钟：保留轮次每分钟停顿数的平均值；最长：保留轮次中最长的一次停顿；停顿次数：保留轮次的停顿总数（stalls 与 longest_stall_ms 列：QPS 低于区间中位数 --stall-below 倍，或有请求超过 --stall-latency 的连续区间）。对比基线：各 ok 轮次每分钟停顿数与基线策略的 Mann–Whitney U 检验 p 值，α = %g 下不显著记为 ~。",
			LatencyOnly: "此处没有任何轮次包含两个完整区间（自适应运行的切片短于 --interval），因此只有 --stall-latency 能发现停顿：轮次内的吞吐下降不计入。给出短于 --slice 的 --interval 可同时统计两者。",
		},
		Nodes: NodeLabels{
			Title:   "集群节点：负载与延迟的分布",
			Shards:  "分片",
			Share:   "QPS 占比 最小 / 中位 / 最大",
			P99:     "p99 us 最小 / 中位 / 最大",
			Hottest: "最热分片",
			Legend:  "QPS 占比：主节点占所在尝试请求数的比例（分片 i 为按槽顺序的第 i 个主节点，对各次尝试取平均）；p99：各次尝试 p99 延迟的中位数。最热分片的占比同时给出相对均匀占比（1.00×）的倍数。",
		},
		Recovery: RecoveryLabels{
			Title:    "kill -9 后的恢复",
			Crash:    "崩溃",
			Rounds:   "轮次",
			Recovery: "恢复 s",
			Keys:     "键/s",
			MB:       "MB/s",
			Acked:    "已确认写入",
			Lost:     "丢失的已确认写入",
			Window:   "丢失窗口 s",
			Promise:  "承诺",
			Empty:    "重启后为空",
			Legend:   "每轮先填充键空间，再写入一串已确认的写入（每次写一个键，每个连接一个计数器），在写入过程中以 SIGKILL 杀死服务端进程组，然后在其原有文件上重新启动。恢复 s：从新进程启动到它对一个已有键的读取作出应答（有该值的轮次的中位数）；键/s 与 MB/s：它持有的键数与日志或快照文件大小除以该时间；已确认写入：kill 之前已确认的写入（各轮之和）；丢失的已确认写入：重启后缺失或变旧的写入；丢失窗口 s：丢失的写入中最早的一个在崩溃前多久被确认（各轮中最宽者）。重启后为空：服务端应答时已没有数据集，无恢复时间可言。崩溃：process 为进程崩溃，操作系统保留了服务端已写入的内容；power（run --power-loss）为断电，其目录所在的文件系统随后丢弃了服务端未 fsync 的内容。",
		},
		Telemetry: TelemetryLabels{
			Title:     "服务端遥测",
			ClientP50: "客户端 p50 us",
			ServerUs:  "服务端 us/调用",
			Used:      "used_memory MiB",
			RSS:       "RSS 峰值 MiB",
			PerKey:    "字节/键",
			Legend:    "各 ok 轮次的中位数。客户端 p50：负载生成器的延迟中位数；服务端 us/调用：服务端执行所测命令每次调用的耗时（测量阶段前后 INFO commandstats 之差）；used_memory：测量阶段后的 INFO memory；RSS 峰值：kvbench 启动的进程在测量阶段中每 100 ms 采样的常驻内存；字节/键：used_memory 除以键空间（含服务端固定开销），仅在测量阶段前已预填充的模式（get、mixed）给出。空格：未测量。",
		},
		Profiles: ProfileLabels{
			Title:    "CPU 剖析",
			Note:     "服务器的 CPU 剖析，每个场景在计量轮次之后另跑一轮采集（其数据不计入表格）。差分图按各帧占比相对基线策略的变化着色：红色增加，蓝色减少。",
			Scenario: "场景",
			Flame:    "火焰图",
			Diff:     "对比基线",
		},
		SeriesPlot: "%s/%s %s：保留轮次每个区间的 QPS 与 p99 延迟；阴影：按默认规则的停顿（QPS 低于该轮中位数的 %g%%，或有请求超过 %v）；顶部色带：服务器事件",
		Compare: ComparisonLabels{
			Rule: "自适应运行：同一模式的服务器同时运行，每个场景以短切片测量，切片分组成块：每块含该模式每个场景的一到两个切片，按镜像顺序（A B C … C B A）排列，" +
				"因此机器的缓慢漂移对同一块内的各场景影响相同，在比较中相互抵消。所有数字保留 2 位小数；每个切片的 us/op 取压测程序输出，缺失时为 1e6/QPS。",
			Title:       "比较",
			Mode:        "%s",
			Comparison:  "比较",
			Metric:      "指标",
			Ratio:       "比值 [%s 置信区间]",
			Verdict:     "结论",
			Measured:    "测量数",
			VsBaseline:  "%s %s 对 %s",
			VsReference: "%s %s 对 %s %s",
			Faster:      "更快",
			Slower:      "更慢",
			Equivalent:  "差异不超过 %s",
			Undecided:   "未定",
			Pairs:       "%d 对",
			Rounds:      "%d 轮",
			Level:       "%s（置信度 %s）",
			Legend: "比值：场景的数值除以被比较场景的数值：策略对其目标的基线，目标对参照目标中持久化级别相同的策略；qps 大于 1 为更快，p99（延迟）小于 1 为更快。" +
				"成对：每块给出两个场景在该块内切片的对数比（各自对数的均值；剔除受扰切片，任一方在该块没有切片时剔除该块），比值为这些对数比的 Hodges–Lehmann 估计，区间为 %s 的 Wilcoxon 符号秩区间" +
				"（少于 6 对时达不到该置信度：区间后注明其精确置信度）。轮：两个场景 ok 轮次比值的 Mann–Whitney 区间，不成对。" +
				"结论：区间完全位于 1 的某一侧时为更快或更慢；区间位于 1 ± %s 之内时为差异不超过 %s；否则为未定：需要更多测量。",
			NoneDisturbed: "受扰切片：%d 个中没有。",
			Disturbed:     "受扰切片（已从比较中剔除）：%d / %d（%s）。",
			Reason:        "%s %d 个，最严重 %s",
			ReasonSep:     "；",
			Slices:        "%s 切片",
			SlicesCol:     "切片数",
			DisturbedCol:  "受扰",
			MedianUs:      "中位数 us/op",
			MedianP99:     "中位数 p99",
		},
	},
}
