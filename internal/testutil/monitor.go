package testutil

import (
	"bufio"
	"net"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Monitor records what a server receives (MONITOR) until stop is called,
// which returns each command as its normalized shape: the name and every
// argument, a 12-digit number written #, a value of dataLen bytes <data>.
func Monitor(t testing.TB, addr string, dataLen int) (stop func() []string) {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := nc.Write([]byte("MONITOR\r\n")); err != nil {
		t.Fatal(err)
	}
	rd := bufio.NewReader(nc)
	if l, err := rd.ReadString('\n'); err != nil || l != "+OK\r\n" {
		t.Fatalf("MONITOR: %q %v", l, err)
	}
	lines := make(chan []string, 1)
	go func() {
		var got []string
		for {
			l, err := rd.ReadString('\n')
			if err != nil {
				lines <- got
				return
			}
			got = append(got, l)
		}
	}()
	return func() []string {
		time.Sleep(100 * time.Millisecond)
		nc.Close()
		return shapes(<-lines, dataLen)
	}
}

var (
	quoted = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
	digits = regexp.MustCompile(`[0-9]{12}`)
)

func shapes(lines []string, dataLen int) []string {
	var out []string
	for _, l := range lines {
		var args []string
		for _, q := range quoted.FindAllString(l, -1) {
			a, err := strconv.Unquote(q)
			if err != nil {
				a = q
			}
			if len(a) == dataLen {
				a = "<data>"
			}
			args = append(args, digits.ReplaceAllString(a, "#"))
		}
		if len(args) > 0 {
			out = append(out, strings.Join(args, " "))
		}
	}
	return out
}
