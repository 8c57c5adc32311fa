package testutil

import (
	"net"
	"testing"
	"time"
)

// ServeBytes listens on a free loopback port and answers the first read
// of every connection with reply, then holds the connection open until
// the client closes it: a peer that is not the server a client expects
// (not RESP, say). It stops when the test ends; it returns the address.
func ServeBytes(t testing.TB, reply string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				buf := make([]byte, 512)
				if _, err := c.Read(buf); err == nil {
					_, _ = c.Write([]byte(reply))
				}
				for {
					if _, err := c.Read(buf); err != nil {
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().String()
}

// ServeTrickle listens on a free loopback port and answers the first read
// of every connection with a reply that never ends: "+" and then one "O"
// every interval, until the client closes the connection or the test
// ends. It returns the address.
func ServeTrickle(t testing.TB, interval time.Duration) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	t.Cleanup(func() { close(done); ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				buf := make([]byte, 64<<10)
				if _, err := c.Read(buf); err != nil {
					return
				}
				tick := time.NewTicker(interval)
				defer tick.Stop()
				for b := byte('+'); ; b = 'O' {
					if _, err := c.Write([]byte{b}); err != nil {
						return
					}
					select {
					case <-done:
						return
					case <-tick.C:
					}
				}
			}()
		}
	}()
	return ln.Addr().String()
}
