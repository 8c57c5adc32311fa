package replay_test

import (
	"fmt"
	"log"
	"strings"

	"github.com/kvbench/kvbench/pkg/loadgen/replay"
)

// Parse a MONITOR capture: a script's command is skipped, a broken line
// counted and named, and each client's commands dealt to one stream.
func ExampleParse() {
	capture := `OK
1733412345.100000 [0 127.0.0.1:50312] "SET" "key:1" "a \"b\""
1733412345.200000 [0 127.0.0.1:50313] "hset" "h" "f" "v"
1733412345.250000 [0 lua] "DEL" "key:1"
1733412345.300000 [0 127.0.0.1:50312] "GET" "key:1
1733412345.400000 [0 127.0.0.1:50312] "GET" "key:1"
`
	c, err := replay.Parse(strings.NewReader(capture), "monitor.txt")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s: %d lines, %d commands, %d skipped, %d unparsable\n", c.Format, c.Lines, c.Commands, c.Skipped, c.Unparsable)
	fmt.Println(c.Errors[0])
	fmt.Printf("%q %q\n", c.Names, c.Command(0))
	fmt.Println(c.Clients, c.Assign(2), c.At(2))
	// Output:
	// monitor: 6 lines, 3 commands, 1 skipped, 1 unparsable
	// monitor.txt:5: unbalanced quotes
	// ["SET" "HSET" "GET"] "*3\r\n$3\r\nSET\r\n$5\r\nkey:1\r\n$5\r\na \"b\"\r\n"
	// [127.0.0.1:50312 127.0.0.1:50313] [[0 2] [1]] 300ms
}
