package target

import (
	"fmt"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"testing"

	"github.com/kvbench/kvbench/internal/testutil"
	"github.com/kvbench/kvbench/pkg/resp"
)

// kvbenchBin is the kvbench binary whose "serve" the kvstore target runs.
var kvbenchBin string

// fakeFlag makes the test binary a small RESP server instead (see
// fakeServer): "-fake-server=MODE PORT".
const fakeFlag = "-fake-server="

func TestMain(m *testing.M) {
	if len(os.Args) == 3 && strings.HasPrefix(os.Args[1], fakeFlag) {
		fakeServer(strings.TrimPrefix(os.Args[1], fakeFlag), os.Args[2])
		return
	}
	os.Exit(testutil.RunWithKvbench(m, &kvbenchBin))
}

// fakeCommand is the command line of a fake server in the given mode.
func fakeCommand(mode string) []string {
	return []string{os.Args[0], fakeFlag + mode, PlaceholderPort}
}

// fakeServer answers PING, INFO and CONFIG GET on 127.0.0.1:port. Modes:
// "ignore-term" ignores SIGTERM; "foreign" reports another process's id
// (1) in INFO, as a server kvbench did not start would; "rewriting" reports
// an AOF rewrite that never ends; "plain" is well behaved.
func fakeServer(mode, port string) {
	if mode == "ignore-term" {
		signal.Ignore(syscall.SIGTERM)
	}
	pid := os.Getpid()
	if mode == "foreign" {
		pid = 1
	}
	l, err := net.Listen("tcp", "127.0.0.1:"+port)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fake server:", err)
		os.Exit(1)
	}
	fmt.Fprintln(os.Stderr, "fake server listening on", l.Addr())
	for {
		c, err := l.Accept()
		if err != nil {
			os.Exit(1)
		}
		go func() {
			defer c.Close()
			rd := resp.NewReader(c, resp.Limits{})
			for rd.Fill() == nil {
				var out []byte
				for {
					cmd, ok, err := rd.Next()
					if err != nil || !ok {
						break
					}
					switch strings.ToUpper(string(cmd.Args[0])) {
					case "PING":
						out = resp.AppendSimple(out, "PONG")
					case "INFO":
						info := fmt.Sprintf("# Server\r\nredis_version:0.0.1\r\nprocess_id:%d\r\n", pid)
						if mode == "rewriting" {
							info += "# Persistence\r\naof_rewrite_in_progress:1\r\n"
						}
						out = resp.AppendBulkString(out, info)
					case "CONFIG":
						out = resp.AppendArray(out, 2)
						out = resp.AppendBulkString(out, string(cmd.Args[2]))
						out = resp.AppendBulkString(out, "fake")
					default:
						out = resp.AppendError(out, "ERR unknown command")
					}
				}
				if _, err := c.Write(out); err != nil {
					return
				}
			}
		}()
	}
}
