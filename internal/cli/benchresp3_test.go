package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/testutil"
	"github.com/kvbench/kvbench/kvstore"
)

// TestBenchRESP3: "kvbench bench --resp3" with an ACL user prefills,
// reads back verified and says "resp": 3 in its JSON settings; -3 runs
// redis-benchmark's tests; a server without HELLO and the embedded
// kvstore (HELLO 3 answered NOPROTO) fail with the server's error.
func TestBenchRESP3(t *testing.T) {
	r := testutil.StartRedis(t, "--user", "bench", "on", ">pw", "~*", "&*", "+@all")
	_, port, _ := strings.Cut(r.Addr, ":")
	code, stdout, stderr := execute(t, "bench", "-p", port, "--resp3", "--user", "bench", "-a", "pw", "--prefill",
		"--mode", "get", "--verify-get", "-n", "3000", "-r", "500", "-c", "2", "--output", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var doc struct {
		Gets           int64          `json:"gets"`
		Misses         int64          `json:"misses"`
		VerifyFailures int64          `json:"verify_failures"`
		Settings       map[string]any `json:"settings"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatalf("%v: %s", err, stdout)
	}
	if doc.Settings["resp"] != 3.0 || doc.Gets != 3000 || doc.Misses != 0 || doc.VerifyFailures != 0 {
		t.Errorf("settings resp %v, %d gets, %d misses, %d verify failures; want 3, 3000, 0, 0", doc.Settings["resp"], doc.Gets, doc.Misses, doc.VerifyFailures)
	}
	code, stdout, stderr = execute(t, "bench", "-p", port, "-3", "--user", "bench", "-a", "pw", "-t", "set,get,hset,lrange_100", "-n", "2000", "-q")
	if code != 0 || strings.Count(stdout, "requests per second") != 4 {
		t.Errorf("-3 -t set,get,hset,lrange_100: exit %d\n%s%s", code, stdout, stderr)
	}

	no := testutil.StartRedis(t, "--rename-command", "HELLO", "")
	_, noPort, _ := strings.Cut(no.Addr, ":")
	kv, err := kvstore.Start(kvstore.Config{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer kv.Close()
	_, kvPort, _ := strings.Cut(kv.Addr(), ":")
	for _, tc := range []struct{ port, want string }{
		{noPort, "kvbench: --resp3: server does not support RESP3: HELLO 3: ERR unknown command 'HELLO'"},
		{kvPort, "kvbench: --resp3: server does not support RESP3: HELLO 3: NOPROTO unsupported protocol version\n"},
	} {
		code, _, stderr := execute(t, "bench", "-p", tc.port, "--resp3", "-n", "100", "-q")
		if code != 1 || !strings.HasPrefix(stderr, tc.want) {
			t.Errorf("port %s: exit %d, stderr %q; want 1 and %q", tc.port, code, stderr, tc.want)
		}
	}
}
