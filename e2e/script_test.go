package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestScripts runs the CLI scripts in testdata/script/*.txtar with offcc and
// offcc++ on PATH and LLVM_BIN set to the LLVM 22 tools directory.
//
// Conditions: [offcc] holds when the real offcc is tested, [reference] when
// OFFCC_TEST_CC stands in for it (scripts for offcc-only features skip then),
// [bwrap] when bubblewrap runs here (it needs user namespaces, and a root
// that is a mount point: not in a plain chroot).
func TestScripts(t *testing.T) {
	c := getCompiler(t)
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(e *testscript.Env) error {
			e.Setenv("PATH", c.dir+string(os.PathListSeparator)+e.Getenv("PATH"))
			e.Setenv("LLVM_BIN", llvmBin)
			// testscript's HOME is /no-home, a directory offcc makes when
			// a script builds with the default cache (~/.cache/offcc):
			// one script's entries would then answer another's builds,
			// and the next run's. Each script gets a home of its own,
			// beside its work directory (not in it, which scripts list).
			home := e.WorkDir + ".home"
			if err := os.MkdirAll(home, 0o755); err != nil {
				return err
			}
			e.Defer(func() { os.RemoveAll(home) })
			e.Setenv("HOME", home)
			return nil
		},
		Condition: func(cond string) (bool, error) {
			switch cond {
			case "offcc":
				return !c.reference, nil
			case "reference":
				return c.reference, nil
			case "bwrap":
				return exec.Command("bwrap", "--dev-bind", "/", "/", "true").Run() == nil, nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
	})
}
