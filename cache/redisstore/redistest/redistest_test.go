package redistest_test

import (
	"errors"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/offcc/offcc/cache/redisstore/redistest"
)

// helperEnv makes TestStartHelper call Start, in TestMissing's subprocess
// (where PATH holds no redis-server).
const helperEnv = "OFFCC_REDISTEST_HELPER"

// TestStartHelper is not a test of its own: it runs only in TestMissing's
// subprocess.
func TestStartHelper(t *testing.T) {
	if os.Getenv(helperEnv) == "" {
		return
	}
	redistest.Start(t)
	t.Error("Start returned without redis-server")
}

// TestMissing runs Start without redis-server on PATH: the test is
// skipped, or fails under OFFCC_REQUIRE_REDIS=1.
func TestMissing(t *testing.T) {
	for _, require := range []bool{false, true} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestStartHelper$", "-test.v", "-test.count=1")
		cmd.Env = append(os.Environ(), helperEnv+"=1", "PATH="+t.TempDir(), redistest.EnvRequire+"=")
		if require {
			cmd.Env = append(cmd.Env, redistest.EnvRequire+"=1")
		}
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		if err != nil && !errors.As(err, &exit) {
			t.Fatal(err)
		}
		if require && (err == nil || !strings.Contains(string(out), "--- FAIL: TestStartHelper") || !strings.Contains(string(out), redistest.EnvRequire+"=1")) {
			t.Errorf("required: err = %v, want a failure naming %s=1; output:\n%s", err, redistest.EnvRequire, out)
		}
		if !require && (err != nil || !strings.Contains(string(out), "--- SKIP: TestStartHelper")) {
			t.Errorf("optional: err = %v, want a skip; output:\n%s", err, out)
		}
	}
}

// TestStartStop starts a server, and checks that Stop ends it and can be
// called again.
func TestStartStop(t *testing.T) {
	s := redistest.Start(t)
	c, err := net.Dial("tcp", s.Addr)
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	if s.URL != "redis://"+s.Addr {
		t.Errorf("URL %q, Addr %q", s.URL, s.Addr)
	}
	s.Pause()
	s.Stop()
	s.Stop()
	s.Kill()
	if c, err := net.Dial("tcp", s.Addr); err == nil {
		c.Close()
		t.Errorf("server still answers after Stop")
	}
}
