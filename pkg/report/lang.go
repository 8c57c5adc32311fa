package report

import (
	"fmt"
	"strconv"
)

// labels are the words of the markdown report in one language.
type labels struct {
	title, rule                                        string
	strategy, mode, round                              string
	meanQPS, meanUs                                    string
	dropped, droppedQPS, trimmedQPS, trimmedUs         string
	trimmedCPU                                         string
	change                                             string // "%s %s change": mode, metric
	raw, rawN                                          string // "%s raw rounds", "… (%d)"
	trimmed, trimmedN                                  string
	overhead, overheadAlloc                            string // target, baseline[, alloc]
	legend                                             string // alpha, alpha
	noBaseline, noBaselineAlloc                        string
	untrimmed                                          string // list of scenarios
	spread, rounds, failed, cv, minQPS, maxQPS, median string
	ci, ciLevel                                        string
	ciLegend, ciLegendMany                             string // level, rounds it needs, level
	latency, p50, p99, p999                            string
	failedTitle, target, roundCol, attempt, errorCol   string
	source                                             string
	warnings, chart                                    string
	flushed                                            string // targets

	// The side-by-side tables: the section's title, a table's heading
	// (mode, reference), its columns (column[, reference, metric]) and
	// legend (reference, alpha, alpha).
	sideTitle, sideMode, persistence, sideStrategy, sideQPS string
	sideP99, sideCPU, sideRatio, sideLegend, sideLegendCPU  string
	sideNotRun, sideNoRounds                                string // reference, mode
	latencyPlot, pictures                                   string // mode

	// The workloads' tables: the section's title, a table's heading
	// (workload[, reference]), its columns (wlRatio: reference), the
	// total's name, an unsupported target's line (target, error) and
	// the legend (alpha, alpha).
	wlTitle, wlTable, wlTableRef, command, wlChange, wlRatio string
	wlTotal, wlUnsupported, wlLegend                         string

	// The settings block: its intro, one line per setting (the value
	// formatted in), the machine's parts, and "mixed (…)".
	settings, setRequests, setRounds, setPipeline, setConnections string
	setKeyspace, setValueSize, setServers, setMachine             string
	cores, kernel, mixed, partSep                                 string

	// Warnings: the head of each kind, then colon and the subjects
	// joined by listSep; rounds formats a count of rounds.
	warnHead                                           map[string]string
	colon, listSep, failed1, failedN, rounds1, roundsN string
	every, more                                        string // "every scenario", ", and %d more"
	parens, using                                      string
}

// subject formats one subject of a warning of the given kind.
func (l *labels) subject(kind string, s Subject) string {
	switch kind {
	case WarnNoRounds:
		if s.N == 1 {
			return s.Name + l.failed1
		}
		return s.Name + fmt.Sprintf(l.failedN, s.N)
	case WarnUntrimmed, WarnFewRounds, WarnClientBound, WarnRefusedWrites:
		if s.N == 1 {
			return s.Name + l.rounds1
		}
		return s.Name + fmt.Sprintf(l.roundsN, s.N)
	case WarnNoisy, WarnTestTies:
		return s.Name + l.paren(s.Value)
	case WarnBaselines:
		return s.Name + l.paren(s.Value+"; "+fmt.Sprintf(l.using, s.Chosen))
	}
	return s.Name
}

// paren puts text in parentheses, as the language writes them.
func (l *labels) paren(s string) string { return fmt.Sprintf(l.parens, s) }

// itoa formats a setting's value.
func itoa[T int | int64](v T) string { return strconv.FormatInt(int64(v), 10) }

var langs = map[string]*labels{
	LangEN: {
		title: "kvbench report",
		rule: "Trimming rule: per scenario (target, strategy, mode), the round whose QPS deviates most from the median of the rounds' QPS is dropped " +
			"(the earliest on a tie), and the trimmed figures are the means of the remaining rounds; with fewer than 3 ok rounds nothing is dropped. " +
			"Every figure has 2 decimals; a round's us/op is the load generator's, or 1e6/QPS; means of us/op are means of the rounds' 2-decimal values.",
		strategy: "strategy", mode: "mode", round: "Round%d",
		meanQPS: "mean QPS", meanUs: "mean us/op",
		dropped: "dropped round", droppedQPS: "dropped QPS", trimmedQPS: "trimmed mean QPS", trimmedUs: "trimmed mean us/op",
		trimmedCPU: "trimmed mean QPS/CPU-s",
		change:     "%s %s change",
		raw:        "%s raw rounds", rawN: "%s raw rounds (%d)",
		trimmed: "%s trimmed", trimmedN: "%s trimmed (mean of %d rounds)",
		overhead: "%s overhead (baseline %s, trimmed)", overheadAlloc: "%s overhead (baseline %s, alloc %s, trimmed)",
		legend: "Change: (strategy / baseline - 1) * 100 from the trimmed figures as shown above. " +
			"(p=…): two-sided Mann–Whitney U test of the strategy's ok rounds against the baseline's, significant at α = %v. " +
			"~: not significant (p > %v): the difference may be noise.",
		noBaseline:      "No baseline for %s: no strategy has persistence none (or, without a persistence column, is named none or nopersist). Choose one with --baseline %s=STRATEGY; the overhead table is omitted.",
		noBaselineAlloc: "No baseline for %s with alloc %s: no strategy of that alloc has persistence none. Choose one with --baseline %s=STRATEGY; the overhead table for that alloc is omitted.",
		untrimmed:       "Fewer than 3 ok rounds, nothing dropped: %s.",
		spread:          "%s spread (all ok rounds)", rounds: "rounds", failed: "failed", cv: "CV",
		minQPS: "min QPS", maxQPS: "max QPS", median: "median QPS",
		ci: "CI of the median", ciLevel: "confidence",
		ciLegend: "Confidence below %v%%: with fewer than %d rounds no interval of the median reaches %v%%; " +
			"the interval is then [min QPS, max QPS], at its exact confidence 1 - 2/2^rounds (93.75%% for 5 rounds).",
		ciLegendMany: "Confidence below %v%%: too few rounds for an interval of the median at %v%%; " +
			"the interval is then [min QPS, max QPS], at its exact confidence 1 - 2/2^rounds.",
		latency: "%s latency (trimmed means, us)", p50: "p50", p99: "p99", p999: "p99.9",
		failedTitle: "Failed attempts", target: "target", roundCol: "round", attempt: "attempt", errorCol: "error", source: "source",
		warnings: "Warnings", chart: "Trimmed mean QPS per scenario",
		latencyPlot: "%s: latency by percentile, from the merged histograms of the rounds the trimming keeps (curves with dots: the trimmed means of the recorded percentiles, for rows without histograms)", pictures: "Charts",
		sideTitle: "Targets side by side", sideMode: "%s: targets side by side (trimmed, against %s)",
		persistence: "persistence", sideStrategy: "%s strategy", sideQPS: "%s QPS", sideP99: "%s p99",
		sideCPU: "%s QPS/CPU-s", sideRatio: "%s/%s %s",
		sideNotRun:   "No ratio to %s: it did not run %s. The other targets' figures:",
		sideNoRounds: "No ratio to %s: it has no ok round of %s, every attempt failed (see the failed attempts below). The other targets' figures:",
		sideLegend: "One row per persistence class; a strategy with no counterpart in a target has a row of its own, with - in the other cells. " +
			"QPS and p99 (us) are the trimmed means of the tables below. " +
			"Ratio: target / %s from the trimmed figures as shown. " +
			"(p=…): two-sided Mann–Whitney U test of the two scenarios' ok rounds, significant at α = %v. " +
			"~: not significant (p > %v): the difference may be noise.",
		sideLegendCPU: "QPS/CPU-s: requests per CPU-second of the server (trimmed mean over the rounds that record it), the fair figure between servers with different numbers of threads.",
		wlTitle:       "Workloads", wlTable: "%s: commands (trimmed)", wlTableRef: "%s: commands (trimmed, against %s)",
		command: "command", wlChange: "QPS change vs baseline", wlRatio: "QPS / %s", wlTotal: "total (mix)",
		wlUnsupported: "- %s: not measured, unsupported: %s",
		wlLegend: "One row per command of the workload, and the mix's total, per target and strategy. " +
			"QPS and p99 (us) are the trimmed means of the command's rounds (its own scenario in the tables below). " +
			"Change: (strategy / the target's baseline - 1) * 100; ratio: target / the reference target, for the strategy of the same persistence class; " +
			"both from the trimmed figures as shown. (p=…): two-sided Mann–Whitney U test, significant at α = %v. ~: not significant (p > %v).",
		flushed: "Flushed: %s held keys kvbench had not written; they were deleted (FLUSHALL, allowed with --allow-flush or allow_flush) before the first attempt, as the flushed column shows.",

		settings: "Settings:", setRequests: "requests per round: %s", setRounds: "rounds per scenario: %s",
		setPipeline: "pipeline: %s", setConnections: "connections: %s", setKeyspace: "keyspace: %s keys",
		setValueSize: "value size: %s bytes", setServers: "servers: %s", setMachine: "load generator: %s",
		cores: "%s cores", kernel: "kernel %s", mixed: "mixed (%s)", partSep: ", ",

		warnHead: map[string]string{
			WarnNoRounds:    "no ok round, nothing to report",
			WarnClientBound: "the load generator may be the bottleneck: add --threads or agents (rounds where it was busy for most of its threads' time)",
			WarnRefusedWrites: "writes were refused (an insert-only command met existing keys, the conflicts column): the QPS counts writes that did not happen, so these scenarios are compared with nothing; " +
				"give --keyspace at least --requests, or a write command that overwrites",
			WarnUntrimmed: "fewer than %d ok rounds: nothing dropped, and one disturbed round decides the means",
			WarnFewRounds: "fewer than %d ok rounds: one disturbed round still sways the means, and the significance test has little power",
			WarnNoisy:     "CV above %v%%: the rounds disagree (a busy machine or an unstable server), so differences smaller than the spread are noise",
			WarnTestPower: "with fewer than %d rounds on both sides, the significance test cannot find a difference at α = %v",
			WarnTestTies:  "every round of the strategy and of its baseline has the same value: the significance test cannot rank them",
			WarnBaselines: "several strategies have persistence none: the first by name is the baseline (choose one with --baseline TARGET=STRATEGY)",
		},
		colon: ": ", listSep: ", ", failed1: " (1 failed attempt)", failedN: " (%d failed attempts)", rounds1: " (1 round)", roundsN: " (%d rounds)",
		parens: " (%s)", using: "using %s", every: "every scenario", more: ", and %d more",
	},
	LangZH: {
		title: "kvbench 报告",
		rule: "去异常规则：每个场景（目标、策略、模式）按 qps 对各轮做中位数偏差，剔除偏差最大 1 轮（并列时剔除较早一轮），再对剩余轮次取均值；ok 轮次少于 3 轮时不剔除。" +
			"所有数字保留 2 位小数；每轮 us/op 取压测程序输出，缺失时为 1e6/QPS；us/op 均值是各轮 2 位小数值的均值。",
		strategy: "策略", mode: "模式", round: "Round%d",
		meanQPS: "原始均值QPS", meanUs: "原始均值us/op",
		dropped: "剔除轮次", droppedQPS: "剔除QPS", trimmedQPS: "去异常均值QPS", trimmedUs: "去异常均值us/op",
		trimmedCPU: "去异常均值QPS/服务器CPU秒",
		change:     "%s %s变化",
		raw:        "%s 原始轮次", rawN: "%s 原始%d轮",
		trimmed: "%s 去异常后", trimmedN: "%s 去异常后（%d轮均值）",
		overhead: "%s 协议开销（基线 %s，去异常后）", overheadAlloc: "%s 协议开销（基线 %s，alloc %s，去异常后）",
		legend: "变化 = (策略 / 基线 - 1) * 100，按上表显示的去异常值计算。" +
			"(p=…)：策略与基线全部 ok 轮次的双侧 Mann–Whitney U 检验，在 α = %v 下显著。" +
			"~：不显著（p > %v），差异可能只是噪声。",
		noBaseline:      "%s 未找到基线：没有 persistence 为 none 的策略（无 persistence 列时，也没有名为 none 或 nopersist 的策略）。可用 --baseline %s=策略 指定；已省略协议开销表。",
		noBaselineAlloc: "%s（alloc %s）未找到基线：该 alloc 下没有 persistence 为 none 的策略。可用 --baseline %s=策略 指定；已省略该 alloc 的协议开销表。",
		untrimmed:       "ok 轮次少于 3 轮，未剔除：%s。",
		spread:          "%s 波动（全部 ok 轮次）", rounds: "轮数", failed: "失败", cv: "变异系数",
		minQPS: "最小QPS", maxQPS: "最大QPS", median: "中位数QPS",
		ci: "中位数置信区间", ciLevel: "置信度",
		ciLegend: "置信度低于 %v%%：少于 %d 轮时，中位数的任何区间都达不到 %v%%；" +
			"此时区间为 [最小QPS, 最大QPS]，置信度取其精确值 1 - 2/2^轮数（5 轮为 93.75%%）。",
		ciLegendMany: "置信度低于 %v%%：轮次太少，中位数区间达不到 %v%%；" +
			"此时区间为 [最小QPS, 最大QPS]，置信度取其精确值 1 - 2/2^轮数。",
		latency: "%s 延迟（去异常均值，us）", p50: "p50", p99: "p99", p999: "p99.9",
		failedTitle: "失败尝试", target: "目标", roundCol: "轮次", attempt: "尝试", errorCol: "错误", source: "来源",
		warnings: "警告", chart: "各场景去异常均值QPS",
		latencyPlot: "%s：各百分位延迟，取去异常后保留轮次的直方图合并（带圆点的曲线：无直方图的行所记录百分位的去异常均值）", pictures: "图表",
		sideTitle: "目标对比", sideMode: "%s：目标对比（去异常后，相对 %s）",
		persistence: "持久化", sideStrategy: "%s 策略", sideQPS: "%s QPS", sideP99: "%s p99",
		sideCPU: "%s QPS/服务器CPU秒", sideRatio: "%s/%s %s",
		sideNotRun:   "无法与 %s 比较：它没有运行 %s。其他目标的数据：",
		sideNoRounds: "无法与 %s 比较：它的 %s 没有 ok 轮次，每次尝试都失败了（见下文失败尝试）。其他目标的数据：",
		sideLegend: "每个持久化级别一行；某目标没有对应策略的策略单列一行，其余单元格为 -。" +
			"QPS 和 p99（us）取下文各表的去异常均值。" +
			"比值 = 目标 / %s，按显示的去异常值计算。" +
			"(p=…)：两个场景全部 ok 轮次的双侧 Mann–Whitney U 检验，在 α = %v 下显著。" +
			"~：不显著（p > %v），差异可能只是噪声。",
		sideLegendCPU: "QPS/服务器CPU秒：服务器每 CPU 秒处理的请求数（记录该值的轮次的去异常均值），线程数不同的服务器之间可公平比较。",
		wlTitle:       "工作负载", wlTable: "%s：各命令（去异常后）", wlTableRef: "%s：各命令（去异常后，相对 %s）",
		command: "命令", wlChange: "QPS 相对基线变化", wlRatio: "QPS / %s", wlTotal: "合计（混合）",
		wlUnsupported: "- %s：未测量，不支持：%s",
		wlLegend: "每个目标、策略下，工作负载的每条命令一行，另有混合合计一行。" +
			"QPS 和 p99（us）取该命令各轮的去异常均值（即下文各表中该命令自己的场景）。" +
			"变化 = (策略 / 该目标基线 - 1) * 100；比值 = 目标 / 参照目标（取持久化级别相同的策略）；均按显示的去异常值计算。" +
			"(p=…)：双侧 Mann–Whitney U 检验，在 α = %v 下显著。~：不显著（p > %v）。",
		flushed: "已清空：%s 原有非 kvbench 写入的键，首次尝试前已被删除（FLUSHALL，由 --allow-flush 或 allow_flush 允许），见 flushed 列。",

		settings: "设置：", setRequests: "每轮请求数：%s", setRounds: "每个场景轮数：%s",
		setPipeline: "pipeline：%s", setConnections: "连接数：%s", setKeyspace: "键空间（键数）：%s",
		setValueSize: "值大小（字节）：%s", setServers: "服务器版本：%s", setMachine: "压测机器：%s",
		cores: "%s 核", kernel: "内核 %s", mixed: "不一致（%s）", partSep: "，",

		warnHead: map[string]string{
			WarnNoRounds:    "没有 ok 轮次，无可报告",
			WarnClientBound: "压测程序可能是瓶颈：请增加 --threads 或使用 agents（压测线程大部分时间处于忙碌的轮次）",
			WarnRefusedWrites: "有写入被拒绝（只插入的命令遇到已存在的键，见 conflicts 列）：QPS 计入了并未执行的写入，因此这些场景不与任何场景比较；" +
				"请让 --keyspace 不小于 --requests，或使用会覆盖的写命令",
			WarnUntrimmed: "ok 轮次少于 %d 轮：未剔除，一轮受扰就决定均值",
			WarnFewRounds: "ok 轮次少于 %d 轮：一轮受扰仍会左右均值，显著性检验的功效也很低",
			WarnNoisy:     "变异系数超过 %v%%：各轮结果不一致（机器繁忙或服务器不稳定），小于波动幅度的差异只是噪声",
			WarnTestPower: "双方轮次都少于 %d 轮时，显著性检验在 α = %v 下无法发现差异",
			WarnTestTies:  "策略与基线的各轮取值全部相同：显著性检验无法排序",
			WarnBaselines: "有多个策略的 persistence 为 none：按名称取第一个作基线（可用 --baseline 目标=策略 指定）",
		},
		colon: "：", listSep: ", ", failed1: "（失败 1 次）", failedN: "（失败 %d 次）", rounds1: "（1 轮）", roundsN: "（%d 轮）",
		parens: "（%s）", using: "采用 %s", every: "所有场景", more: "，另有 %d 个",
	},
}
