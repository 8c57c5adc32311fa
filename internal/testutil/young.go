package testutil

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// A young server is what a new Redis-protocol server project looks like:
// it implements what it is measured on, SET and GET, and nothing else.
// PING, INFO, CONFIG, COMMAND, DBSIZE, FLUSHALL, HELLO, AUTH and SELECT are
// each answered with "-ERR unknown command 'NAME'", as Redis answers a
// command it lacks. It reads RESP arrays, pipelined, and answers them in
// order with one write per batch read.

// YoungServerArg, as a test binary's first argument followed by a port,
// makes YoungServerMain serve a young server on 127.0.0.1:PORT: the
// command line of a command target that starts one.
const YoungServerArg = "young-server"

// StartYoungServer serves a young server on a free loopback port until
// the test ends, and returns its address.
func StartYoungServer(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go ServeYoung(ln) //nolint:errcheck // ends when the listener closes
	return ln.Addr().String()
}

// YoungServerMain is for a test binary's TestMain: when its arguments are
// YoungServerArg and a port, it serves a young server on 127.0.0.1:PORT
// until killed, and does not return; otherwise it returns at once.
func YoungServerMain() {
	if len(os.Args) != 3 || os.Args[1] != YoungServerArg {
		return
	}
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", os.Args[2]))
	if err != nil {
		fmt.Fprintln(os.Stderr, "young server:", err)
		os.Exit(1)
	}
	fmt.Fprintln(os.Stderr, "young server: ready on", ln.Addr())
	err = ServeYoung(ln)
	fmt.Fprintln(os.Stderr, "young server:", err)
	os.Exit(1)
}

// ServeYoung serves a young server on ln until ln is closed.
func ServeYoung(ln net.Listener) error {
	var mu sync.Mutex
	data := map[string]string{}
	for {
		c, err := ln.Accept()
		if err != nil {
			return err
		}
		go func() {
			defer c.Close()
			r, w := bufio.NewReader(c), bufio.NewWriter(c)
			for {
				args, err := readCommand(r)
				if err != nil {
					if !errors.Is(err, io.EOF) {
						fmt.Fprintf(w, "-ERR Protocol error: %v\r\n", err)
						w.Flush()
					}
					return
				}
				name := strings.ToUpper(args[0])
				switch {
				case name == "SET" && len(args) == 3:
					mu.Lock()
					data[args[1]] = args[2]
					mu.Unlock()
					w.WriteString("+OK\r\n")
				case name == "GET" && len(args) == 2:
					mu.Lock()
					v, ok := data[args[1]]
					mu.Unlock()
					if ok {
						fmt.Fprintf(w, "$%d\r\n%s\r\n", len(v), v)
					} else {
						w.WriteString("$-1\r\n")
					}
				case name == "SET" || name == "GET":
					fmt.Fprintf(w, "-ERR wrong number of arguments for '%s' command\r\n", strings.ToLower(name))
				default:
					fmt.Fprintf(w, "-ERR unknown command '%s'\r\n", args[0])
				}
				if r.Buffered() == 0 {
					if err := w.Flush(); err != nil {
						return
					}
				}
			}
		}()
	}
}

// readCommand reads one RESP array of bulk strings.
func readCommand(r *bufio.Reader) ([]string, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return nil, err
	}
	line = strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
	if !strings.HasPrefix(line, "*") {
		return nil, fmt.Errorf("expected '*', got %q", line)
	}
	n, err := strconv.Atoi(line[1:])
	if err != nil || n < 1 || n > 1024 {
		return nil, fmt.Errorf("bad array length %q", line)
	}
	args := make([]string, n)
	for i := range args {
		line, err := r.ReadString('\n')
		if err != nil {
			return nil, err
		}
		size, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "$")))
		if err != nil || !strings.HasPrefix(line, "$") || size < 0 || size > 1<<20 {
			return nil, fmt.Errorf("bad bulk length %q", line)
		}
		buf := make([]byte, size+2)
		if _, err := io.ReadFull(r, buf); err != nil {
			return nil, err
		}
		args[i] = string(buf[:size])
	}
	return args, nil
}
