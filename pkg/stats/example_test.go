package stats_test

import (
	"fmt"

	"github.com/kvbench/kvbench/pkg/stats"
)

// The trimming rule on seed 000's kvstore persist_no set rounds: round 5
// deviates most from the median and is dropped.
func ExampleTrim() {
	qps := []float64{139895, 138768, 138867, 143296, 144388}
	usPerOp := []float64{7.15, 7.21, 7.20, 6.98, 6.93}
	i := stats.Trim(qps)
	fmt.Println("dropped round", i+1, stats.Format2(qps[i]))
	fmt.Println("trimmed QPS", stats.Format2(stats.Mean(stats.Without(qps, i))))
	fmt.Println("trimmed us/op", stats.Format2(stats.Mean(stats.Without(usPerOp, i))))
	// Output:
	// dropped round 5 144388.00
	// trimmed QPS 140206.50
	// trimmed us/op 7.13
}

// Overheads are computed from the figures as displayed.
func ExampleChangePct() {
	fmt.Println(stats.FormatChange(stats.ChangePct(140206.50, 150084.25)))
	fmt.Println(stats.FormatChange(stats.ChangePct(7.13, 6.67)))
	// Output:
	// -6.58%
	// +6.90%
}

// A mean of exactly 7.135 prints as 7.13: %.2f formats the binary float64,
// which is a hair below 7.135.
func ExampleFormat2() {
	fmt.Println(stats.Format2((7.15 + 7.21 + 7.20 + 6.98) / 4))
	// Output: 7.13
}

// Compare tells a real difference from noise, as benchstat does.
func ExampleCompare() {
	redisNone := []float64{198673, 211843, 193900, 208293, 211071}
	redisAOFNo := []float64{144042, 139615, 140016, 149925, 150658}
	c := stats.Compare(redisAOFNo, redisNone, stats.DefaultAlpha)
	fmt.Printf("p=%.3f significant=%v\n", c.P, c.Significant())
	// Output: p=0.008 significant=true
}

// Describe summarizes a scenario's rounds. Five rounds cannot give a 95%
// interval of the median; [min, max] is the interval, at its exact level.
func ExampleDescribe() {
	s := stats.Describe([]float64{210541, 211713, 202589, 231251, 402028}, stats.DefaultConfidence)
	fmt.Printf("median %s, CV %s%%, min %s, max %s\n",
		stats.Format2(s.Median), stats.Format2(s.CV), stats.Format2(s.Min), stats.Format2(s.Max))
	fmt.Printf("interval [%s, %s] at %v%%\n", stats.Format2(s.Lo), stats.Format2(s.Hi), s.Confidence*100)
	fmt.Println(s.Warnings)
	// Output:
	// median 211713.00, CV 33.68%, min 202589.00, max 402028.00
	// interval [202589.00, 402028.00] at 93.75%
	// [the 95% confidence interval of the median needs 6 values; [min, max] of 5 is at 93.75%]
}
