package render

// PersistJobLabels are the words of the report's persistence job
// sections: the jobs' tables, the targets side by side, the server's
// events, the heatmaps' captions.
type PersistJobLabels struct {
	Title, Job, Rounds, JobS, ForkMs, CowMB, RSS, P99, P99Before, Stall, Recovery, Vs, Legend string
	// NotBack is a recovery cell's note: rounds whose p99 was not back
	// by the phase's end, of the rounds.
	NotBack string
	// SideTitle heads a side-by-side table (job, mode, reference);
	// SideLegend follows them (the reference, α).
	SideTitle, SideRatio, SideLegend string
	// EventsTitle heads the server events; Event, Intervals, From, To
	// are its columns; EventsLegend follows it.
	EventsTitle, Event, Intervals, From, To, EventsLegend string
	// Heatmap is a heatmap's caption: target, strategy, mode, round, job.
	Heatmap string
}

// PersistJobLabelsOf returns the persistence job sections' words in lang
// (LangEN when unknown).
func PersistJobLabelsOf(lang string) *PersistJobLabels {
	if l, ok := persistJobLabels[lang]; ok {
		return l
	}
	return persistJobLabels[LangEN]
}

var persistJobLabels = map[string]*PersistJobLabels{
	LangEN: {
		Title:        "Persistence jobs",
		Job:          "job",
		Rounds:       "rounds",
		JobS:         "job s",
		ForkMs:       "fork ms",
		CowMB:        "COW MB",
		RSS:          "RSS peak/before",
		P99:          "p99 during/before",
		P99Before:    "p99 before us",
		Stall:        "longest stall ms",
		Recovery:     "p99 recovery s",
		Vs:           "vs baseline (p)",
		NotBack:      "%d of %d not back",
		Legend:       "The persistence job set off during every measured phase (run --persist-job), medians over the ok rounds. job s: from its command's reply to INFO persistence saying it is done; fork ms: the server's pause to start it (latest_fork_usec: Redis's fork, the kvstore's snapshot under its write lock); COW MB: what it copied or kept alive (rdb_last_cow_size, aof_last_cow_size; MB = 10^6 bytes); RSS peak/before: the memory of the server's processes, its fork's included and each page once, at its peak over before the job; p99 during/before: the load's p99 over the intervals the job spanned, over those before it; longest stall: the phase's; p99 recovery s: from the job's end to the first interval whose p99 is within 10%% of the level before (at the series' resolution, --interval), over the rounds where it came back. vs baseline: the Mann–Whitney U p-value of the rounds' p99 during/before against the baseline strategy's, ~ when not significant at α = %g. -: not reported by the server, or not measured.",
		SideTitle:    "%s, %s: the targets side by side (reference %s)",
		SideRatio:    "ratio to %s (p)",
		SideLegend:   "Each cell: a strategy's p99 during/before, the median of its ok rounds, then its ratio to the reference's (%s) with the Mann–Whitney U p-value of the two strategies' rounds, ~ when not significant at α = %g; rows match strategies by persistence class.",
		EventsTitle:  "Server events",
		Event:        "event",
		Intervals:    "intervals",
		From:         "from s",
		To:           "to s",
		EventsLegend: "What the server was doing during each measured phase, from INFO persistence polled once per interval (the series CSV's events column): aof_rewrite and rdb_bgsave while a rewrite or snapshot ran (the automatic ones too), delayed_fsync when an fsync of the log was late, persist_job while the job run --persist-job set off ran. intervals: how many intervals it was seen in; from s and to s: where the first of them began and the last ended, from the phase's start.",
		Heatmap:      "%s/%s %s round %d: latency over time, each interval's requests by latency (a log scale; colour: how many), the %s job's span marked in red",
	},
	LangZH: {
		Title:        "持久化任务",
		Job:          "任务",
		Rounds:       "轮次",
		JobS:         "任务 s",
		ForkMs:       "fork ms",
		CowMB:        "COW MB",
		RSS:          "RSS 峰值/之前",
		P99:          "p99 期间/之前",
		P99Before:    "之前 p99 us",
		Stall:        "最长停顿 ms",
		Recovery:     "p99 恢复 s",
		Vs:           "对比基线 (p)",
		NotBack:      "%d/%d 轮未恢复",
		Legend:       "每个测量阶段中触发的持久化任务（run --persist-job），各 ok 轮次的中位数。任务 s：从命令回复到 INFO persistence 显示完成；fork ms：服务器为开始任务而暂停的时间（latest_fork_usec：Redis 的 fork，kvstore 持写锁做快照）；COW MB：任务复制或保留的内存（rdb_last_cow_size、aof_last_cow_size；MB = 10^6 字节）；RSS 峰值/之前：服务器进程（含其 fork，每页只计一次）的内存峰值与任务前之比；p99 期间/之前：任务覆盖的区间的 p99 与之前区间的 p99 之比；最长停顿：整个阶段的；p99 恢复 s：从任务结束到第一个 p99 回到之前水平 10%% 以内的区间（精度为序列的 --interval），只计已恢复的轮次。对比基线：各轮 p99 期间/之前与基线策略的 Mann–Whitney U 检验 p 值，α = %g 下不显著记为 ~。-：服务器未报告或未测量。",
		SideTitle:    "%s，%s：目标并列（参照 %s）",
		SideRatio:    "与 %s 之比 (p)",
		SideLegend:   "每格：策略的 p99 期间/之前（各 ok 轮次的中位数），及其与参照（%s）之比和两策略各轮的 Mann–Whitney U 检验 p 值，α = %g 下不显著记为 ~；各行按持久化类别对应策略。",
		EventsTitle:  "服务器事件",
		Event:        "事件",
		Intervals:    "区间数",
		From:         "起 s",
		To:           "止 s",
		EventsLegend: "每个测量阶段中服务器的活动，来自每个区间轮询一次的 INFO persistence（序列 CSV 的 events 列）：aof_rewrite 与 rdb_bgsave 表示重写或快照进行中（包括自动触发的），delayed_fsync 表示日志的 fsync 延迟，persist_job 表示 run --persist-job 触发的任务进行中。区间数：出现的区间个数；起 s 与止 s：第一个区间的开始与最后一个区间的结束，从阶段开始计。",
		Heatmap:      "%s/%s %s 第 %d 轮：延迟随时间的分布，每个区间按延迟（对数刻度）统计请求数（颜色：数量），红色标出 %s 任务的区间",
	},
}
