package mix

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/testutil"
	"github.com/kvbench/kvbench/kvstore"
	"github.com/kvbench/kvbench/pkg/control"
)

// TestCheckCommands: the kvstore, which has no lists, is refused with one
// error naming what it lacks; redis-server passes.
func TestCheckCommands(t *testing.T) {
	srv, err := kvstore.Start(kvstore.Config{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	err = CheckCommands(context.Background(), srv.Addr(), control.Options{}, []string{"set", "LPUSH", "get", "sadd", "lpush"})
	if !errors.Is(err, ErrUnsupported) || !strings.HasSuffix(err.Error(), "has no LPUSH, SADD") {
		t.Errorf("kvstore: %v", err)
	}
	r := testutil.StartRedis(t)
	if err := CheckCommands(context.Background(), r.Addr, control.Options{}, []string{"LPUSH", "zpopmin"}); err != nil {
		t.Errorf("redis-server: %v", err)
	}
}
