package loadgen_test

import (
	"context"
	"fmt"
	"log"

	"github.com/kvbench/kvbench/kvstore"
	"github.com/kvbench/kvbench/pkg/loadgen"
	"github.com/kvbench/kvbench/pkg/loadgen/prefill"
)

// Run against the embedded kvstore: write every key once with the
// insert-only RSET, then read them all back and verify each value.
func ExampleRun() {
	srv, err := kvstore.Start(kvstore.Config{Addr: "127.0.0.1:0"})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	cfg := loadgen.DefaultConfig()
	cfg.Addr, cfg.SetCmd, cfg.GetCmd = srv.Addr(), "RSET", "RGET"
	cfg.Keyspace, cfg.Pipeline, cfg.Seed = 10_000, 128, 42
	ctx := context.Background()
	pre, err := prefill.Prefill(ctx, cfg)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("prefill: %d writes, %d conflicts\n", pre.Sets, pre.Conflicts)

	cfg.Mode, cfg.Requests, cfg.VerifyGet = loadgen.ModeGet, 50_000, true
	cfg.Progress = func(p loadgen.Progress) {
		if p.Final {
			fmt.Printf("%s: %d of %d\n", p.Phase, p.Done, p.Total)
		}
	}
	res, err := loadgen.Run(ctx, cfg)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("get: %d reads, %d misses, %d wrong values\n", res.Gets, res.Misses, res.VerifyFailures)
	// Output:
	// prefill: 10000 writes, 0 conflicts
	// run: 50000 of 50000
	// get: 50000 reads, 0 misses, 0 wrong values
}
