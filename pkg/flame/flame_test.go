package flame

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/testutil"
)

// perfText is perf script's output for three samples of two threads,
// one frame without a symbol.
const perfText = `redis-server 101    1001001 cpu-clock: 
	          1a2b3c processCommand+0x4c (/usr/bin/redis-server)
	          1a2b00 processInputBuffer+0x93 (/usr/bin/redis-server)
	          1a0000 main+0x75 (/usr/bin/redis-server)

redis-server 101    1001001 cpu-clock: 
	          1a2b3c call+0x10 (/usr/bin/redis-server)
	          1a2b3d processCommand+0x4c (/usr/bin/redis-server)
	          1a2b00 processInputBuffer+0x93 (/usr/bin/redis-server)
	          1a0000 main+0x75 (/usr/bin/redis-server)

io_thd_1 102/102    1001001 cpu-clock: 
	    7f00 [unknown] (/usr/lib/x86_64-linux-gnu/libc.so.6)
	    1234 [unknown] ([unknown])
`

func TestParsePerfScript(t *testing.T) {
	p, err := ParsePerfScript(strings.NewReader(perfText), "test")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{
		"redis-server;main;processInputBuffer;processCommand":      1,
		"redis-server;main;processInputBuffer;processCommand;call": 1,
		"io_thd_1;[unknown];[libc.so.6]":                           1,
	}
	if !reflect.DeepEqual(p.Stacks, want) {
		t.Errorf("stacks = %v, want %v", p.Stacks, want)
	}
	var folded bytes.Buffer
	if err := p.WriteFolded(&folded); err != nil {
		t.Fatal(err)
	}
	back, err := ReadFolded(&folded, "folded")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.Stacks, want) {
		t.Errorf("folded and read back: %v, want %v", back.Stacks, want)
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"frame first", "\t  1234 main+0x1 (/bin/x)\n", "test:1: a frame outside a sample"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParsePerfScript(strings.NewReader(tc.in), "test")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
	for _, tc := range []struct{ name, in, want string }{
		{"no count", "a;b\n", `in:1: want "frame;frame count"`},
		{"bad count", "a;b 1\na;c x\n", `in:2: count "x" is not a whole number`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadFolded(strings.NewReader(tc.in), "in")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
}

func TestFrames(t *testing.T) {
	p, err := ReadFolded(strings.NewReader("main;b;d 2\nmain;a 3\nmain;b 1\nother 4\n"), "in")
	if err != nil {
		t.Fatal(err)
	}
	want := []Frame{
		{Name: "all", Depth: 0, Offset: 0, Samples: 10},
		{Name: "main", Path: "main", Depth: 1, Offset: 0, Samples: 6},
		{Name: "a", Path: "main;a", Depth: 2, Offset: 0, Samples: 3},
		{Name: "b", Path: "main;b", Depth: 2, Offset: 3, Samples: 3},
		{Name: "d", Path: "main;b;d", Depth: 3, Offset: 3, Samples: 2},
		{Name: "other", Path: "other", Depth: 1, Offset: 6, Samples: 4},
	}
	if got := Frames(p); !reflect.DeepEqual(got, want) {
		t.Errorf("frames:\n got %+v\nwant %+v", got, want)
	}
}

func TestWriteSVG(t *testing.T) {
	p, _ := ReadFolded(strings.NewReader("main;a<T> 3\nmain;b 1\n"), "in")
	var svg bytes.Buffer
	if err := WriteSVG(&svg, p, Options{Title: "CPU: x & y", Width: 420}); err != nil {
		t.Fatal(err)
	}
	s := svg.String()
	// 400 pixels for 4 samples: a is 300 wide at x 10, b 100 at 310;
	// the root at the bottom, each level 16 pixels up.
	for _, want := range []string{
		`<title>a&lt;T&gt;&#xA;3 samples, 75.00%</title><rect x="10.00" y="36" width="300.00"`,
		`<title>b&#xA;1 samples, 25.00%</title><rect x="310.00" y="36" width="100.00"`,
		`<title>main&#xA;4 samples, 100.00%</title><rect x="10.00" y="52" width="400.00"`,
		`<title>all&#xA;4 samples, 100.00%</title><rect x="10.00" y="68"`,
		`>CPU: x &amp; y</text>`,
	} {
		if !strings.Contains(s, want) {
			t.Errorf("the SVG lacks %s:\n%s", want, s)
		}
	}
	if err := WriteSVG(&svg, New(), Options{}); err != ErrEmpty {
		t.Errorf("an empty profile: %v, want ErrEmpty", err)
	}
}

func TestWriteDiffSVG(t *testing.T) {
	p, _ := ReadFolded(strings.NewReader("main;a 3\nmain;b 1\n"), "in")
	base, _ := ReadFolded(strings.NewReader("main;a 1\nmain;b 1\n"), "base")
	var svg bytes.Buffer
	if err := WriteDiffSVG(&svg, p, base, Options{Title: "diff", Width: 420}); err != nil {
		t.Fatal(err)
	}
	s := svg.String()
	// a grew from 50% to 75% (the largest change: full red), b shrank
	// from 50% to 25% (full blue); main kept 100%.
	for _, want := range []string{
		`baseline 50.00%, +25.00 points</title><rect x="10.00" y="36" width="300.00" height="15" fill="rgb(255,50,50)"`,
		`baseline 50.00%, -25.00 points</title><rect x="310.00" y="36" width="100.00" height="15" fill="rgb(50,50,255)"`,
		`baseline 100.00%, +0.00 points</title><rect x="10.00" y="52" width="400.00" height="15" fill="rgb(250,250,250)"`,
	} {
		if !strings.Contains(s, want) {
			t.Errorf("the SVG lacks %s:\n%s", want, s)
		}
	}
}

// TestSVGInChromium opens a flame graph in headless Chromium: it parses
// as SVG and its script runs (init names every frame in data-n).
func TestSVGInChromium(t *testing.T) {
	chromium := testutil.RequireChromium(t)
	p, _ := ReadFolded(strings.NewReader("main;handle;exec 3\nmain;read 1\n"), "in")
	file := filepath.Join(t.TempDir(), "flame.svg")
	var svg bytes.Buffer
	if err := WriteSVG(&svg, p, Options{Title: "test"}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, svg.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	dom, log := testutil.Headless(t, chromium, file, "--dump-dom")
	for _, want := range []string{`data-n="exec"`, `data-n="main"`, "<title>handle"} {
		if !strings.Contains(dom, want) {
			t.Errorf("the rendered DOM lacks %s:\n%s\n%s", want, dom, log)
		}
	}
	if strings.Contains(log, "Uncaught") {
		t.Errorf("a script error:\n%s", log)
	}
}
