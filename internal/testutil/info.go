package testutil

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// CommandsProcessed is INFO's total_commands_processed on the server c
// talks to: what a test counts the commands a client sent by.
func CommandsProcessed(t testing.TB, c *redis.Client) int64 {
	t.Helper()
	info, err := c.Info(context.Background(), "stats").Result()
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, "total_commands_processed:"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatalf("INFO total_commands_processed:%s: %v", v, err)
			}
			return n
		}
	}
	t.Fatal("no total_commands_processed in INFO")
	return 0
}
