package cli

// benchDoc is the JSON document "kvbench bench --output json" and
// "kvbench merge --output json" print, read by the field names
// docs/bench.md gives them: the tests hold the commands to that contract.
type benchDoc struct {
	Requests         int64   `json:"requests"`
	Sent             int64   `json:"sent"`
	Sets             int64   `json:"sets"`
	Gets             int64   `json:"gets"`
	Misses           int64   `json:"misses"`
	VerifyFailures   int64   `json:"verify_failures"`
	Reconnects       int64   `json:"reconnects"`
	QPS              float64 `json:"qps"`
	StartUnixNs      int64   `json:"start_unix_ns"`
	EndUnixNs        int64   `json:"end_unix_ns"`
	LatencyHistogram string  `json:"latency_histogram"`
	Commands         []struct {
		Command          string `json:"command"`
		Args             string `json:"args"`
		Requests         int64  `json:"requests"`
		Errors           int64  `json:"errors"`
		LatencyHistogram string `json:"latency_histogram"`
	} `json:"commands"`
	Settings struct {
		TLS      bool `json:"tls"`
		Commands []struct {
			Args  []string `json:"args"`
			Ratio int      `json:"ratio"`
		} `json:"commands"`
	} `json:"settings"`
	Series []struct {
		StartUnixNs int64 `json:"start_unix_ns"`
		Requests    int64 `json:"requests"`
	} `json:"series"`
	// Agents is merge's, one summary per agent.
	Agents []struct {
		Segment  int   `json:"segment"`
		Requests int64 `json:"requests"`
	} `json:"agents"`
}
