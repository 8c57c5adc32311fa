package testutil

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// RequireChromium returns the path of Debian's chromium for a test that
// renders in a real browser. Under -short, or without chromium, the test
// is skipped, unless KVBENCH_REQUIRE_CHROMIUM is set (make test sets it).
func RequireChromium(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("a browser: runs in the full suite (make test)")
	}
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("KVBENCH_REQUIRE_CHROMIUM") != "" {
			t.Fatalf("chromium: %v (apt-get install chromium, or make deps)", err)
		}
		t.Skip("no chromium (apt-get install chromium, or make deps)")
	}
	return chromium
}

// Headless opens file in headless chromium with flags (--dump-dom,
// --screenshot=…) and returns its standard output and its log, which
// (at --v=1) names every URL the browser requested.
func Headless(t testing.TB, chromium, file string, flags ...string) (stdout, log string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	args := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
		"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--enable-logging=stderr", "--v=1", "--user-data-dir=" + filepath.Join(t.TempDir(), "profile")}, flags...)
	cmd := exec.CommandContext(ctx, chromium, append(args, "file://"+file)...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, errOut.String())
	}
	return out.String(), errOut.String()
}
