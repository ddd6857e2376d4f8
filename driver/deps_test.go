package driver

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestDependencies: the driver plans and runs builds; the wiring of the
// shared cache (Redis) and the build farm is the command's (package
// cmd/offcc/internal/services), so that the driver depends on neither.
func TestDependencies(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command in PATH")
	}
	out, err := exec.Command(goTool, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if !slices.Contains(deps, "github.com/offcc/offcc/actions") {
		t.Fatalf("go list -deps lists no github.com/offcc/offcc/actions: %q", deps)
	}
	for _, p := range []string{
		"github.com/offcc/offcc/farm",
		"github.com/offcc/offcc/cache/redisstore",
		"github.com/offcc/offcc/cmd/offcc/internal/services",
		"github.com/redis/go-redis/v9",
	} {
		if slices.Contains(deps, p) {
			t.Errorf("package driver depends on %s", p)
		}
	}
}
