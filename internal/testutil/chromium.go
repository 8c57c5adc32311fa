package testutil

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
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
	var out, errOut bytes.Buffer
	err := RunBrowser(t, func() *exec.Cmd {
		out.Reset()
		errOut.Reset()
		cmd := exec.CommandContext(ctx, chromium, append(args, "file://"+file)...)
		cmd.Stdout, cmd.Stderr = &out, &errOut
		return cmd
	})
	if err != nil {
		t.Fatalf("chromium: %v\n%s", err, errOut.String())
	}
	return out.String(), errOut.String()
}

// browserTries is how many times RunBrowser starts a browser that crashes.
const browserTries = 3

// RunBrowser runs the browser command newCmd makes, again (up to
// browserTries times in all) when the browser dies of a signal: a
// headless Chromium now and then crashes (a segmentation fault) before it
// loads the page, which says nothing of the page. Any other failure is
// returned at once.
func RunBrowser(t testing.TB, newCmd func() *exec.Cmd) error {
	t.Helper()
	var err error
	for try := 1; try <= browserTries; try++ {
		err = newCmd().Run()
		var ee *exec.ExitError
		if err == nil || !errors.As(err, &ee) {
			return err
		}
		ws, ok := ee.Sys().(syscall.WaitStatus)
		if !ok || !ws.Signaled() || ws.Signal() == syscall.SIGKILL {
			return err // an exit status, or the context's kill
		}
		t.Logf("chromium crashed (%v), try %d of %d", err, try, browserTries)
	}
	return err
}
