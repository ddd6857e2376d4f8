package membudget

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const mib = 1 << 20

// tree writes a fake file system root from path → contents.
func tree(t *testing.T, files map[string]string) Env {
	t.Helper()
	root := t.TempDir()
	for p, s := range files {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return Env{Root: root}
}

const (
	v1Mount = "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n" +
		"32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
	v2Mount = "41 31 0:38 / /sys/fs/cgroup rw,nosuid shared:9 - cgroup2 cgroup2 rw,nsdelegate\n"
	v1None  = "9223372036854771712\n"
)

func base(extra map[string]string) map[string]string {
	m := map[string]string{
		"/proc/meminfo":     "MemTotal:       16000000 kB\nMemFree:         1000000 kB\nMemAvailable:    8388608 kB\n",
		"/proc/self/status": "Name:\tofftest\nVmHWM:\t   40960 kB\nVmRSS:\t   20480 kB\n",
	}
	for k, v := range extra {
		m[k] = v
	}
	return m
}

func n(x int64) string { return itoa(x) + "\n" }

func itoa(x int64) string { return strconv.FormatInt(x, 10) }

func discover(t *testing.T, env Env, explicit int64) Budget {
	t.Helper()
	b, err := Discover(explicit, env)
	if err != nil {
		t.Fatalf("Discover: %v", err)
	}
	return b
}

func TestV1LimitLessOthersUse(t *testing.T) {
	const g = "/sys/fs/cgroup/memory/ci/job"
	env := tree(t, base(map[string]string{
		"/proc/self/cgroup":                              "9:name=systemd:/\n4:memory:/ci/job\n1:cpu:/\n0::/\n",
		"/proc/self/mountinfo":                           v1Mount,
		g + "/memory.limit_in_bytes":                     n(600 * mib),
		g + "/memory.usage_in_bytes":                     n(200 * mib),
		g + "/memory.stat":                               "cache 1\ninactive_file 1\ntotal_inactive_file " + itoa(50*mib) + "\n",
		"/sys/fs/cgroup/memory/ci/memory.limit_in_bytes": v1None,
		"/sys/fs/cgroup/memory/memory.limit_in_bytes":    v1None,
	}))
	b := discover(t, env, 0)
	// Others use 200 - 50 inactive - 20 of this process's = 130 MiB.
	if b.Bytes != 470*mib {
		t.Errorf("Bytes = %d MiB, want 470", b.Bytes/mib)
	}
	if want := "cgroup /ci/job memory.limit_in_bytes 600 MiB"; b.Source != want {
		t.Errorf("Source = %q, want %q", b.Source, want)
	}
	// Free now: 600 - 150.
	if h := b.Headroom(); h != 450*mib {
		t.Errorf("Headroom = %d MiB, want 450", h/mib)
	}
}

func TestV1AncestorLimit(t *testing.T) {
	const p = "/sys/fs/cgroup/memory/ci"
	env := tree(t, base(map[string]string{
		"/proc/self/cgroup":              "4:memory:/ci/job\n",
		"/proc/self/mountinfo":           v1Mount,
		p + "/job/memory.limit_in_bytes": v1None,
		p + "/job/memory.usage_in_bytes": n(10 * mib),
		p + "/memory.limit_in_bytes":     n(300 * mib),
		p + "/memory.usage_in_bytes":     n(120 * mib),
		p + "/memory.stat":               "total_inactive_file " + itoa(20*mib) + "\n",
	}))
	b := discover(t, env, 0)
	if b.Bytes != 220*mib || b.Source != "cgroup /ci memory.limit_in_bytes 300 MiB" {
		t.Errorf("got %d MiB from %q, want 220 MiB from cgroup /ci's limit", b.Bytes/mib, b.Source)
	}
}

func TestV1HierarchicalLimitAboveMount(t *testing.T) {
	// In a container the mount's root is the container's cgroup; the
	// limit set above it shows only as hierarchical_memory_limit.
	env := tree(t, base(map[string]string{
		"/proc/self/cgroup":                           "4:memory:/docker/abc\n",
		"/proc/self/mountinfo":                        "35 31 0:32 /docker/abc /sys/fs/cgroup/memory ro - cgroup cgroup rw,memory\n",
		"/sys/fs/cgroup/memory/memory.limit_in_bytes": v1None,
		"/sys/fs/cgroup/memory/memory.usage_in_bytes": n(20 * mib),
		"/sys/fs/cgroup/memory/memory.stat":           "hierarchical_memory_limit " + itoa(1024*mib) + "\ntotal_inactive_file 0\n",
	}))
	b := discover(t, env, 0)
	if b.Bytes != 1024*mib || !strings.Contains(b.Source, "hierarchical_memory_limit") {
		t.Errorf("got %d MiB from %q, want 1024 MiB from hierarchical_memory_limit", b.Bytes/mib, b.Source)
	}
}

func TestV2LimitMaxAndAncestor(t *testing.T) {
	const u = "/sys/fs/cgroup/user.slice"
	env := tree(t, base(map[string]string{
		"/proc/self/cgroup":               "0::/user.slice/build.scope\n",
		"/proc/self/mountinfo":            v2Mount,
		u + "/build.scope/memory.max":     "max\n",
		u + "/build.scope/memory.current": n(100 * mib),
		u + "/build.scope/memory.stat":    "anon 1\ninactive_file " + itoa(30*mib) + "\n",
		u + "/memory.max":                 n(2048 * mib),
		u + "/memory.current":             n(1000 * mib),
		u + "/memory.stat":                "inactive_file " + itoa(100*mib) + "\n",
		"/sys/fs/cgroup/cgroup.procs":     "1\n",
	}))
	b := discover(t, env, 0)
	// 2048 - (1000 - 100 - 20 of this process's).
	if b.Bytes != 1168*mib || b.Source != "cgroup /user.slice memory.max 2 GiB" {
		t.Errorf("got %d MiB from %q, want 1168 MiB from /user.slice memory.max", b.Bytes/mib, b.Source)
	}
	if h := b.Headroom(); h != 1148*mib {
		t.Errorf("Headroom = %d MiB, want 1148", h/mib)
	}
}

func TestV2NoLimitMemAvailable(t *testing.T) {
	env := tree(t, base(map[string]string{
		"/proc/self/cgroup":                     "0::/a\n",
		"/proc/self/mountinfo":                  v2Mount,
		"/sys/fs/cgroup/a/memory.max":           "max\n",
		"/sys/fs/cgroup/a/memory.current":       n(mib),
		"/sys/fs/cgroup/cgroup.subtree_control": "memory\n",
	}))
	b := discover(t, env, 0)
	if b.Bytes != 8192*mib || b.Source != "MemAvailable" {
		t.Errorf("got %d MiB from %q, want 8192 MiB from MemAvailable", b.Bytes/mib, b.Source)
	}
	if h := b.Headroom(); h != 8192*mib {
		t.Errorf("Headroom = %d MiB, want MemAvailable's 8192", h/mib)
	}
}

func TestMemAvailableBelowCgroupLimitWins(t *testing.T) {
	m := base(map[string]string{
		"/proc/self/cgroup":                              "4:memory:/ci\n",
		"/proc/self/mountinfo":                           v1Mount,
		"/sys/fs/cgroup/memory/ci/memory.limit_in_bytes": n(16384 * mib),
		"/sys/fs/cgroup/memory/ci/memory.usage_in_bytes": n(0),
	})
	m["/proc/meminfo"] = "MemAvailable:     512000 kB\n"
	b := discover(t, tree(t, m), 0)
	if b.Bytes != 500*mib || b.Source != "MemAvailable" {
		t.Errorf("got %d MiB from %q, want 500 MiB from MemAvailable", b.Bytes/mib, b.Source)
	}
}

func TestExplicitWins(t *testing.T) {
	env := tree(t, base(map[string]string{
		"/proc/self/cgroup":                              "4:memory:/ci\n",
		"/proc/self/mountinfo":                           v1Mount,
		"/sys/fs/cgroup/memory/ci/memory.limit_in_bytes": n(600 * mib),
		"/sys/fs/cgroup/memory/ci/memory.usage_in_bytes": n(0),
	}))
	if b := discover(t, env, 256*mib); b.Bytes != 256*mib || b.Source != "--offload-mem" {
		t.Errorf("got %d MiB from %q, want 256 MiB from --offload-mem", b.Bytes/mib, b.Source)
	}
	// An explicit setting above the limit does not raise it.
	if b := discover(t, env, 4096*mib); b.Bytes != 600*mib {
		t.Errorf("explicit above the limit: got %d MiB from %q, want the cgroup's 600", b.Bytes/mib, b.Source)
	}
}

func TestNothingKnownIsAnError(t *testing.T) {
	env := tree(t, map[string]string{"/etc/hostname": "x\n"})
	if _, err := Discover(0, env); err == nil || !strings.Contains(err.Error(), "--offload-mem") {
		t.Errorf("Discover with no /proc: err = %v, want one naming --offload-mem", err)
	}
	if b := discover(t, env, 100*mib); b.Bytes != 100*mib {
		t.Errorf("explicit only: got %d MiB", b.Bytes/mib)
	}
}

func TestOOMKillsFromFakeTree(t *testing.T) {
	env := tree(t, base(map[string]string{
		"/proc/self/cgroup":                              "4:memory:/ci\n",
		"/proc/self/mountinfo":                           v1Mount,
		"/sys/fs/cgroup/memory/ci/memory.limit_in_bytes": n(600 * mib),
		"/sys/fs/cgroup/memory/ci/memory.oom_control":    "oom_kill_disable 0\nunder_oom 0\noom_kill 3\n",
	}))
	if k, ok := discover(t, env, 0).OOMKills(); !ok || k != 3 {
		t.Errorf("OOMKills = %d, %v; want 3, true", k, ok)
	}
	env2 := tree(t, base(nil))
	if _, ok := discover(t, env2, 0).OOMKills(); ok {
		t.Errorf("OOMKills with no cgroup: ok, want false")
	}
}

func TestPeakOfFakeTree(t *testing.T) {
	env := tree(t, map[string]string{
		"/proc/10/status":           "VmHWM:\t  1024 kB\n",
		"/proc/10/task/10/children": "11 12 ",
		"/proc/11/status":           "VmHWM:\t  2048 kB\n",
		"/proc/12/status":           "VmHWM:\t  4096 kB\n",
	})
	if p, ok := env.PeakOf(10); !ok || p != 7*mib {
		t.Errorf("PeakOf = %d, %v; want 7 MiB with its children", p, ok)
	}
	if _, ok := env.PeakOf(13); ok {
		t.Errorf("PeakOf a pid that is gone: ok")
	}
}
