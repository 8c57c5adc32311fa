package history

import (
	"testing"

	"github.com/kvbench/kvbench/pkg/results"
)

// TestFingerprintKeepsOldEnvironments: a field appended to Environment
// leaves the fingerprint of an environment without it as it was, so that
// the runs stored before stay in the same environment as the runs after.
func TestFingerprintKeepsOldEnvironments(t *testing.T) {
	e := Environment{ClientHost: "bench-1", CPUModel: "AMD EPYC", Cores: 2, Kernel: "6.18.44", ServerConfig: "appendonly=yes appendfsync=everysec",
		TLS: true, Shards: 3, Agents: 1, Requests: 1000000, Keyspace: 100000, Pipeline: 16, Connections: 50, ValueSize: 32}
	// The fingerprint of this environment before RESP3 was a field.
	if got, want := e.Fingerprint(), "f686a5327623d37e"; got != want {
		t.Errorf("fingerprint %s, want %s as before the resp3 field", got, want)
	}
	r := e
	r.RESP3 = true
	if r.Fingerprint() == e.Fingerprint() {
		t.Error("a RESP3 environment has the fingerprint of a RESP2 one")
	}
	if d := r.Diff(e); len(d) != 1 || d[0] != "resp3: false → true" {
		t.Errorf("diff %q: want the protocol", d)
	}
}

// TestRecordRESP3: rows measured over RESP3 keep their column, in an
// environment of their own.
func TestRecordRESP3(t *testing.T) {
	forEachBackend(t, func(t *testing.T, loc string) {
		var attempts [][]results.Row
		for i, resp3 := range []bool{false, true} {
			rows := testAttempt("20261205_120000", i+1, 100000)
			for j := range rows {
				rows[j].RESP3 = resp3
			}
			attempts = append(attempts, rows)
		}
		got, envs := recordAndRead(t, loc, "20261205_120000", attempts...)
		if len(got) != 2 || got[0].RESP3 || !got[1].RESP3 {
			t.Fatalf("%d rows read back: want two, resp3 false then true", len(got))
		}
		if envs[0] == 0 || envs[1] == 0 || envs[0] == envs[1] {
			t.Errorf("environments %v: want two, one per protocol", envs)
		}
	})
}
