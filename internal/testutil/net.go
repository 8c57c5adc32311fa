package testutil

import (
	"net"
	"testing"
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
