package testutil

import (
	"testing"
	"time"
)

func TestStartRedis(t *testing.T) {
	r := StartRedis(t)
	if err := Ping(r.Addr, time.Second); err != nil {
		t.Fatal(err)
	}
	if err := r.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := Ping(r.Addr, time.Second); err == nil {
		t.Fatal("PING answered after Kill")
	}
	if err := r.Stop(); err != nil {
		t.Fatalf("Stop after Kill: %v", err)
	}
}
