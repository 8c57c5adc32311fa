package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// version is set at link time by the Makefile:
// -ldflags "-X github.com/kvbench/kvbench/internal/cli.version=$(git describe --always --dirty)".
var version = ""

// commit is set at link time by the Makefile, as version is, to the
// commit's short hash.
var commit = ""

// buildVersion is kvbench's version however it was built: the one set at
// link time, else the module version (go install module@version), else the
// VCS revision the Go toolchain recorded (a build in a checkout), else
// "unknown".
func buildVersion() string {
	if version != "" {
		return version
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	if rev, dirty := vcsRevision(bi); rev != "" {
		return rev + dirty
	}
	return "unknown"
}

// vcsRevision returns the short commit of the build and "-dirty" when the
// work tree had changes; "" when the toolchain recorded none.
func vcsRevision(bi *debug.BuildInfo) (rev, dirty string) {
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
			if len(rev) > 12 {
				rev = rev[:12]
			}
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "-dirty"
			}
		}
	}
	if rev == "" {
		dirty = ""
	}
	return rev, dirty
}

// buildCommit is the commit set at link time, else the one the toolchain
// recorded; "" if neither.
func buildCommit() string {
	if commit != "" {
		return commit
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		rev, dirty := vcsRevision(bi)
		if rev != "" {
			return rev + dirty
		}
	}
	return ""
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print kvbench's version and commit",
		Long: `version prints kvbench's version (set by make from git describe; else
the module version; else the commit the Go toolchain recorded), the commit,
the Go version and the platform.`,
		Example: "  kvbench version",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			commit := buildCommit()
			if commit == "" {
				commit = "unknown"
				// The toolchain records the commit unless told not to
				// (GOFLAGS=-buildvcs=false, or a build outside a checkout).
				fmt.Fprintln(cmd.ErrOrStderr(), "note: this binary carries no commit: it was built without version control information "+
					"(GOFLAGS=-buildvcs=false, or outside a git checkout); \"make build\" or \"go build -buildvcs=true ./cmd/kvbench\" records it")
			}
			_, err := fmt.Fprintf(cmd.OutOrStdout(), "kvbench %s (commit %s) %s %s/%s\n",
				buildVersion(), commit, runtime.Version(), runtime.GOOS, runtime.GOARCH)
			return err
		},
	}
}
