package driver

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/offcc/offcc/internal/llvmtest"
)

// These tests use only the plan cache itself (no Planner, no helpers from
// other test files). Helpers are prefixed pc to keep clear of other test
// files in the package.

// pcWrite writes a file, making its directory.
func pcWrite(t *testing.T, name, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// pcAge sets a file's modification time to age ago.
func pcAge(t *testing.T, name string, age time.Duration) {
	t.Helper()
	when := time.Now().Add(-age)
	if err := os.Chtimes(name, when, when); err != nil {
		t.Fatal(err)
	}
}

// pcMkGCC makes ROOT/lib/gcc/TRIPLE/VERSION with crtbegin.o, as a GCC
// installation clang would accept.
func pcMkGCC(t *testing.T, root, sub, triple, version string) {
	t.Helper()
	pcWrite(t, filepath.Join(root, "lib", sub, triple, version, "crtbegin.o"), "")
}

// pcSetup is one invocation to key: a fake clang in its own directory, the
// command line, the environment and the working directory.
type pcSetup struct {
	bin   string // the fake clang's directory
	clang string
	argv0 string
	args  []string
	env   []string
	home  string
	root  string // a scratch directory for sysroots, toolchains, ...
}

func newPCSetup(t *testing.T) *pcSetup {
	t.Helper()
	s := &pcSetup{root: t.TempDir(), home: t.TempDir()}
	s.bin = filepath.Join(t.TempDir(), "llvm", "bin")
	s.clang = filepath.Join(s.bin, "clang")
	if err := os.MkdirAll(s.bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.clang, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	s.argv0 = "offcc"
	s.args = []string{"-fopenmp", "--offload-arch=gfx90a", "-c", "m.c", "-o", "m.o"}
	s.env = []string{"A=1", "HOME=" + s.home, "PATH=/usr/bin:/bin"}
	t.Chdir(t.TempDir())
	return s
}

// key returns the key and its text (shown when a test fails).
func (s *pcSetup) key(t *testing.T) (string, string) {
	t.Helper()
	k, ok := (&planCache{}).key(s.clang, s.argv0, s.args, s.env)
	if !ok {
		t.Fatalf("no key for %s %q", s.clang, s.args)
	}
	text, _ := planKeyText(s.clang, s.argv0, s.args, s.env)
	return k, text
}

func TestPlanCacheKey(t *testing.T) {
	tests := []struct {
		name string
		// prepare, when set, runs before the first key.
		prepare func(t *testing.T, s *pcSetup)
		// change runs between the two keys.
		change func(t *testing.T, s *pcSetup)
		same   bool
	}{
		{name: "same command", change: func(t *testing.T, s *pcSetup) {}, same: true},
		{name: "argument changed", change: func(t *testing.T, s *pcSetup) { s.args[1] = "--offload-arch=gfx906" }},
		{name: "argument added", change: func(t *testing.T, s *pcSetup) { s.args = append(s.args, "-O2") }},
		{name: "arguments split differently", change: func(t *testing.T, s *pcSetup) {
			s.args = append([]string{s.args[0] + s.args[1]}, s.args[2:]...)
		}},
		{name: "argv0", change: func(t *testing.T, s *pcSetup) { s.argv0 = "offcc++" }},
		{name: "working directory", change: func(t *testing.T, s *pcSetup) { t.Chdir(t.TempDir()) }},
		{name: "environment variable", change: func(t *testing.T, s *pcSetup) { s.env[0] = "A=2" }},
		{name: "environment variable added", change: func(t *testing.T, s *pcSetup) { s.env = append(s.env, "ROCM_PATH=/opt/rocm") }},
		{name: "environment order", change: func(t *testing.T, s *pcSetup) {
			s.env = []string{s.env[2], s.env[0], s.env[1]}
		}, same: true},
		{name: "volatile environment", change: func(t *testing.T, s *pcSetup) {
			s.env = append(s.env, "MAKEFLAGS=-j8 --jobserver-auth=fifo:/tmp/GMfifo1", "MAKELEVEL=2", "TMPDIR=/tmp/offcc-123", "OLDPWD=/", "SHLVL=3")
		}, same: true},

		// clang itself: its identity, not its directory.
		{name: "unrelated tool beside clang", change: func(t *testing.T, s *pcSetup) {
			pcWrite(t, filepath.Join(s.bin, "llvm-foo"), "#!/bin/sh\n")
		}, same: true},
		{name: "clang replaced", change: func(t *testing.T, s *pcSetup) {
			// A package upgrade writes a new file and renames it over the old.
			tmp := s.clang + ".new"
			pcWrite(t, tmp, "#!/bin/sh\nexit 1\n")
			if err := os.Rename(tmp, s.clang); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "clang through a symbolic link", change: func(t *testing.T, s *pcSetup) {
			link := filepath.Join(t.TempDir(), "clang-22")
			if err := os.Symlink(s.clang, link); err != nil {
				t.Fatal(err)
			}
			s.clang = link
		}, same: true},

		// Configuration files: bytes, not times.
		{name: "clang.cfg created beside clang", change: func(t *testing.T, s *pcSetup) {
			pcWrite(t, filepath.Join(s.bin, "clang.cfg"), "-O2\n")
		}},
		{name: "offcc.cfg created beside clang", change: func(t *testing.T, s *pcSetup) {
			pcWrite(t, filepath.Join(s.bin, "offcc.cfg"), "-O2\n")
		}},
		{name: "triple config created beside clang", change: func(t *testing.T, s *pcSetup) {
			pcWrite(t, filepath.Join(s.bin, "x86_64-unknown-linux-gnu-offcc.cfg"), "-O2\n")
		}},
		{name: "config bytes changed, same size and time", prepare: func(t *testing.T, s *pcSetup) {
			pcWrite(t, filepath.Join(s.bin, "offcc.cfg"), "-O2\n")
			pcAge(t, filepath.Join(s.bin, "offcc.cfg"), time.Hour)
		}, change: func(t *testing.T, s *pcSetup) {
			name := filepath.Join(s.bin, "offcc.cfg")
			fi, _ := os.Stat(name)
			pcWrite(t, name, "-O3\n")
			os.Chtimes(name, fi.ModTime(), fi.ModTime())
		}},
		{name: "config rewritten with the same bytes", prepare: func(t *testing.T, s *pcSetup) {
			pcWrite(t, filepath.Join(s.bin, "clang.cfg"), "-O2\n")
			pcAge(t, filepath.Join(s.bin, "clang.cfg"), time.Hour)
		}, change: func(t *testing.T, s *pcSetup) {
			pcWrite(t, filepath.Join(s.bin, "clang.cfg"), "-O2\n")
		}, same: true},
		{name: "user config directory", change: func(t *testing.T, s *pcSetup) {
			pcWrite(t, filepath.Join(s.home, ".config", "clang", "clang.cfg"), "-O2\n")
		}},
		{name: "--config file bytes", prepare: func(t *testing.T, s *pcSetup) {
			pcWrite(t, filepath.Join(s.root, "my.cfg"), "-O2\n")
			s.args = append(s.args, "--config="+filepath.Join(s.root, "my.cfg"))
		}, change: func(t *testing.T, s *pcSetup) {
			pcWrite(t, filepath.Join(s.root, "my.cfg"), "-O3\n")
		}},
		{name: "--config name found beside clang", prepare: func(t *testing.T, s *pcSetup) {
			s.args = append(s.args, "--config", "my.conf")
		}, change: func(t *testing.T, s *pcSetup) {
			pcWrite(t, filepath.Join(s.bin, "my.conf"), "-O3\n")
		}},
		{name: "--config-system-dir", prepare: func(t *testing.T, s *pcSetup) {
			s.args = append(s.args, "--config-system-dir="+filepath.Join(s.root, "etc"))
		}, change: func(t *testing.T, s *pcSetup) {
			pcWrite(t, filepath.Join(s.root, "etc", "clang.cfg"), "-O3\n")
		}},
		{name: "--no-default-config ignores clang.cfg", prepare: func(t *testing.T, s *pcSetup) {
			s.args = append(s.args, "--no-default-config")
		}, change: func(t *testing.T, s *pcSetup) {
			pcWrite(t, filepath.Join(s.bin, "clang.cfg"), "-O2\n")
		}, same: true},
		{name: "-no-canonical-prefixes: argv0's directory", prepare: func(t *testing.T, s *pcSetup) {
			dir := filepath.Join(s.root, "wrapper")
			pcWrite(t, filepath.Join(dir, "offcc"), "")
			s.argv0 = filepath.Join(dir, "offcc")
			s.args = append(s.args, "-no-canonical-prefixes")
		}, change: func(t *testing.T, s *pcSetup) {
			pcWrite(t, filepath.Join(s.root, "wrapper", "offcc.cfg"), "-O2\n")
		}},

		// GCC installations: version directories two levels down.
		{name: "GCC version under --gcc-toolchain", prepare: func(t *testing.T, s *pcSetup) {
			pcMkGCC(t, filepath.Join(s.root, "gcc"), "gcc", "x86_64-linux-gnu", "12")
			s.args = append(s.args, "--gcc-toolchain="+filepath.Join(s.root, "gcc"))
		}, change: func(t *testing.T, s *pcSetup) {
			pcMkGCC(t, filepath.Join(s.root, "gcc"), "gcc", "x86_64-linux-gnu", "13")
		}},
		{name: "crtbegin.o appears under --gcc-toolchain", prepare: func(t *testing.T, s *pcSetup) {
			os.MkdirAll(filepath.Join(s.root, "gcc", "lib", "gcc", "x86_64-linux-gnu", "13"), 0o755)
			s.args = append(s.args, "--gcc-toolchain="+filepath.Join(s.root, "gcc"))
		}, change: func(t *testing.T, s *pcSetup) {
			pcMkGCC(t, filepath.Join(s.root, "gcc"), "gcc", "x86_64-linux-gnu", "13")
		}},
		{name: "multilib directory appears", prepare: func(t *testing.T, s *pcSetup) {
			pcMkGCC(t, filepath.Join(s.root, "gcc"), "gcc", "x86_64-linux-gnu", "12")
			s.args = append(s.args, "--gcc-toolchain="+filepath.Join(s.root, "gcc"))
		}, change: func(t *testing.T, s *pcSetup) {
			pcWrite(t, filepath.Join(s.root, "gcc", "lib", "gcc", "x86_64-linux-gnu", "12", "32", "crtbegin.o"), "")
		}},
		{name: "unrelated file in a GCC version directory", prepare: func(t *testing.T, s *pcSetup) {
			pcMkGCC(t, filepath.Join(s.root, "gcc"), "gcc", "x86_64-linux-gnu", "12")
			s.args = append(s.args, "--gcc-toolchain="+filepath.Join(s.root, "gcc"))
		}, change: func(t *testing.T, s *pcSetup) {
			pcWrite(t, filepath.Join(s.root, "gcc", "lib", "gcc", "x86_64-linux-gnu", "12", "libfoo.a"), "")
		}, same: true},
		{name: "GCC version under --sysroot", prepare: func(t *testing.T, s *pcSetup) {
			pcMkGCC(t, filepath.Join(s.root, "sysroot", "usr"), "gcc", "aarch64-linux-gnu", "12")
			s.args = append(s.args, "--sysroot="+filepath.Join(s.root, "sysroot"))
		}, change: func(t *testing.T, s *pcSetup) {
			pcMkGCC(t, filepath.Join(s.root, "sysroot", "usr"), "gcc", "aarch64-linux-gnu", "13")
		}},
		{name: "gcc-cross triple under --sysroot (separate argument)", prepare: func(t *testing.T, s *pcSetup) {
			s.args = append(s.args, "--sysroot", filepath.Join(s.root, "sysroot"))
		}, change: func(t *testing.T, s *pcSetup) {
			pcMkGCC(t, filepath.Join(s.root, "sysroot", "usr"), "gcc-cross", "riscv64-linux-gnu", "12")
		}},
		{name: "libstdc++ headers under --sysroot", prepare: func(t *testing.T, s *pcSetup) {
			os.MkdirAll(filepath.Join(s.root, "sysroot", "usr", "include", "c++", "12"), 0o755)
			s.args = append(s.args, "--sysroot="+filepath.Join(s.root, "sysroot"))
		}, change: func(t *testing.T, s *pcSetup) {
			os.MkdirAll(filepath.Join(s.root, "sysroot", "usr", "include", "c++", "13"), 0o755)
		}},
		{name: "GCC beside clang", change: func(t *testing.T, s *pcSetup) {
			pcMkGCC(t, filepath.Join(s.bin, ".."), "gcc", "x86_64-linux-gnu", "14")
		}},
		{name: "--gcc-install-dir gets crtbegin.o", prepare: func(t *testing.T, s *pcSetup) {
			dir := filepath.Join(s.root, "gcc", "lib", "gcc", "x86_64-linux-gnu", "12")
			os.MkdirAll(dir, 0o755)
			s.args = append(s.args, "--gcc-install-dir="+dir)
		}, change: func(t *testing.T, s *pcSetup) {
			pcMkGCC(t, filepath.Join(s.root, "gcc"), "gcc", "x86_64-linux-gnu", "12")
		}},

		// ROCm: the device libraries' directory.
		{name: "ROCm device libraries under --rocm-path", prepare: func(t *testing.T, s *pcSetup) {
			s.args = append(s.args, "--rocm-path="+filepath.Join(s.root, "rocm"))
		}, change: func(t *testing.T, s *pcSetup) {
			os.MkdirAll(filepath.Join(s.root, "rocm", "amdgcn", "bitcode"), 0o755)
		}},
		{name: "ROCM_PATH retargeted", prepare: func(t *testing.T, s *pcSetup) {
			os.MkdirAll(filepath.Join(s.root, "rocm-6.2"), 0o755)
			os.MkdirAll(filepath.Join(s.root, "rocm-6.3"), 0o755)
			os.Symlink("rocm-6.2", filepath.Join(s.root, "rocm"))
			s.env = append(s.env, "ROCM_PATH="+filepath.Join(s.root, "rocm"))
		}, change: func(t *testing.T, s *pcSetup) {
			os.Remove(filepath.Join(s.root, "rocm"))
			os.Symlink("rocm-6.3", filepath.Join(s.root, "rocm"))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newPCSetup(t)
			if tt.prepare != nil {
				tt.prepare(t, s)
			}
			k1, text1 := s.key(t)
			tt.change(t, s)
			k2, text2 := s.key(t)
			if (k1 == k2) != tt.same {
				want := "a different key"
				if tt.same {
					want = "the same key"
				}
				t.Errorf("got %s, want %s\nbefore:\n%s\nafter:\n%s", map[bool]string{true: "the same key", false: "a different key"}[k1 == k2], want, text1, text2)
			}
		})
	}
}

func TestPlanCacheKeyMissingClang(t *testing.T) {
	if _, ok := (&planCache{}).key(filepath.Join(t.TempDir(), "clang"), "offcc", nil, nil); ok {
		t.Error("a missing clang got a key")
	}
}

// TestPlanCacheKeyRealClang keys the installed clang, when there is one:
// its driver libraries are part of the key.
func TestPlanCacheKeyRealClang(t *testing.T) {
	clang := llvmtest.Clang(t)
	text, ok := planKeyText(clang, "offcc", []string{"-c", "m.c"}, nil)
	if !ok {
		t.Fatal("no key for", clang)
	}
	if !strings.Contains(text, "\nlibrary \"libclang-cpp.so.") {
		t.Errorf("libclang-cpp is not in the key:\n%s", text)
	}
}

func TestPlanCacheRoundTrip(t *testing.T) {
	c := &planCache{dir: filepath.Join(t.TempDir(), "plans")}
	key := strings.Repeat("ab", 32)
	tmp1, tmp2 := "/tmp/offcc-111", "/tmp/offcc-222"
	out := "clang version 22\n \"/usr/bin/clang\" \"-cc1\" \"-o\" \"" + tmp1 + "/m-gfx90a.bc\" \"m.c\"\n"
	c.store(key, tmp1, out)
	data, err := os.ReadFile(filepath.Join(c.dir, key))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), tmp1) || !strings.Contains(string(data), tempPlaceholder) {
		t.Errorf("stored entry has the temporary directory, not the placeholder:\n%q", data)
	}
	got, ok := c.load(key, tmp2)
	if want := strings.ReplaceAll(out, tmp1, tmp2); !ok || got != want {
		t.Errorf("load = %q, %v; want %q, true", got, ok, want)
	}
	if _, ok := c.load(strings.Repeat("cd", 32), tmp2); ok {
		t.Error("load of a key never stored hit")
	}
}

func TestPlanCacheCorruptEntry(t *testing.T) {
	const out = "clang version 22\n \"/usr/bin/clang\" \"-cc1\" \"m.c\"\n"
	good := planEntryHeader([]byte(out)) + out
	tests := []struct {
		name string
		data string
	}{
		{"empty", ""},
		{"no header", out},
		{"truncated", good[:len(good)-5]},
		{"byte changed", strings.Replace(good, "m.c", "n.c", 1)},
		{"header only", planEntryHeader([]byte(out))},
		{"empty body", planEntryHeader(nil)},
		{"other version", strings.Replace(good, planCacheVersion, "offcc plan v1", 1)},
		{"bad checksum", planCacheVersion + " " + strings.Repeat("0", 64) + "\n" + out},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &planCache{dir: t.TempDir()}
			key := strings.Repeat("ef", 32)
			pcWrite(t, filepath.Join(c.dir, key), tt.data)
			if got, ok := c.load(key, "/tmp/x"); ok {
				t.Errorf("corrupt entry hit: %q", got)
			}
		})
	}
	// The same bytes, intact, are a hit.
	c := &planCache{dir: t.TempDir()}
	pcWrite(t, filepath.Join(c.dir, strings.Repeat("ef", 32)), good)
	if got, ok := c.load(strings.Repeat("ef", 32), "/tmp/x"); !ok || got != out {
		t.Errorf("intact entry: load = %q, %v", got, ok)
	}
}

func TestPlanCacheLoadRefreshes(t *testing.T) {
	c := &planCache{dir: t.TempDir()}
	for _, tt := range []struct {
		age     time.Duration
		refresh bool
	}{
		{3 * time.Hour, true},
		{6 * 24 * time.Hour, true},
		{10 * time.Minute, false}, // a write per hit would cost more than it tells
	} {
		key := fmt.Sprintf("%064x", int64(tt.age))
		c.store(key, "/tmp/x", "jobs\n")
		name := filepath.Join(c.dir, key)
		pcAge(t, name, tt.age)
		before, _ := os.Stat(name)
		if _, ok := c.load(key, "/tmp/y"); !ok {
			t.Fatalf("entry aged %v: miss", tt.age)
		}
		after, _ := os.Stat(name)
		refreshed := !after.ModTime().Equal(before.ModTime())
		if refreshed != tt.refresh {
			t.Errorf("entry aged %v: refreshed = %v, want %v", tt.age, refreshed, tt.refresh)
		}
		if refreshed && time.Since(after.ModTime()) > time.Minute {
			t.Errorf("entry aged %v: refreshed to %v, not now", tt.age, after.ModTime())
		}
	}
}

// pcEntry makes an entry aged age and returns its name.
func pcEntry(t *testing.T, c *planCache, i int, age time.Duration) string {
	t.Helper()
	key := fmt.Sprintf("%064x", i)
	c.store(key, "/tmp/x", fmt.Sprintf("jobs %d\n", i))
	pcAge(t, filepath.Join(c.dir, key), age)
	return key
}

func pcExists(c *planCache, name string) bool {
	_, err := os.Stat(filepath.Join(c.dir, name))
	return err == nil
}

func TestPlanCacheTrimAge(t *testing.T) {
	c := &planCache{dir: t.TempDir()}
	fresh := pcEntry(t, c, 1, time.Hour)
	week := pcEntry(t, c, 2, planMaxAge-time.Hour)
	old := pcEntry(t, c, 3, planMaxAge+time.Hour)
	v1 := strings.Repeat("0123456789abcdef", 2) // a version 1 entry
	pcWrite(t, filepath.Join(c.dir, v1), "jobs\n")
	pcAge(t, filepath.Join(c.dir, v1), 30*24*time.Hour)
	staleTemp := "." + fresh + ".offcc-12345"
	pcWrite(t, filepath.Join(c.dir, staleTemp), "half")
	pcAge(t, filepath.Join(c.dir, staleTemp), 2*time.Hour)
	newTemp := "." + week + ".offcc-67890" // another process is writing it
	pcWrite(t, filepath.Join(c.dir, newTemp), "half")
	foreign := "README"
	pcWrite(t, filepath.Join(c.dir, foreign), "not ours")
	pcAge(t, filepath.Join(c.dir, foreign), 30*24*time.Hour)
	os.Remove(filepath.Join(c.dir, planTrimMarker))

	c.maybeTrim(time.Now())

	for name, want := range map[string]bool{
		fresh: true, week: true, old: false, v1: false,
		staleTemp: false, newTemp: true, foreign: true, planTrimMarker: true,
	} {
		if got := pcExists(c, name); got != want {
			t.Errorf("after trim, %s exists = %v, want %v", name, got, want)
		}
	}
}

func TestPlanCacheTrimCount(t *testing.T) {
	c := &planCache{dir: t.TempDir()}
	const n = planMaxEntries + 44
	var names []string
	for i := 0; i < n; i++ {
		// Entry i was last used i minutes ago.
		names = append(names, pcEntry(t, c, i, time.Duration(i)*time.Minute))
	}
	c.trim(time.Now())
	for i, name := range names {
		if got, want := pcExists(c, name), i < planMaxEntries; got != want {
			t.Errorf("entry used %d minutes ago: exists = %v, want %v", i, got, want)
		}
	}
	// A load marks an entry used: it survives the next trim over another.
	oldest := names[planMaxEntries-1]
	if _, ok := c.load(oldest, "/tmp/x"); !ok {
		t.Fatal("miss")
	}
	extra := pcEntry(t, c, n, 0)
	c.trim(time.Now())
	if !pcExists(c, oldest) || !pcExists(c, extra) || pcExists(c, names[planMaxEntries-2]) {
		t.Errorf("after a load, trim did not keep the most recently used entries")
	}
}

func TestPlanCacheTrimInterval(t *testing.T) {
	tests := []struct {
		name   string
		marker string // "" for none
		trims  bool
	}{
		{"no marker", "", true},
		{"trimmed 10 minutes ago", fmt.Sprint(time.Now().Add(-10 * time.Minute).Unix()), false},
		{"trimmed 59 minutes ago", fmt.Sprint(time.Now().Add(-59 * time.Minute).Unix()), false},
		{"trimmed 2 hours ago", fmt.Sprint(time.Now().Add(-2 * time.Hour).Unix()), true},
		{"marker from the future", fmt.Sprint(time.Now().Add(48 * time.Hour).Unix()), true},
		{"unreadable marker", "yesterday", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &planCache{dir: t.TempDir()}
			old := pcEntry(t, c, 1, planMaxAge+time.Hour)
			marker := filepath.Join(c.dir, planTrimMarker)
			os.Remove(marker) // the store above may have written one
			if tt.marker != "" {
				pcWrite(t, marker, tt.marker+"\n")
			}
			// A store checks the marker: the way a build gets here.
			c.store(fmt.Sprintf("%064x", 2), "/tmp/x", "jobs\n")
			if trimmed := !pcExists(c, old); trimmed != tt.trims {
				t.Errorf("trimmed = %v, want %v", trimmed, tt.trims)
			}
			if tt.trims {
				data, _ := os.ReadFile(marker)
				if strings.TrimSpace(string(data)) == tt.marker {
					t.Errorf("trim did not record its time in %s", planTrimMarker)
				}
			}
		})
	}
	// A hit checks it as well (a cache that only hits still ages out).
	c := &planCache{dir: t.TempDir()}
	key := pcEntry(t, c, 1, time.Hour)
	old := pcEntry(t, c, 2, planMaxAge+time.Hour)
	pcWrite(t, filepath.Join(c.dir, planTrimMarker), fmt.Sprint(time.Now().Add(-2*time.Hour).Unix()))
	if _, ok := c.load(key, "/tmp/x"); !ok {
		t.Fatal("miss")
	}
	if pcExists(c, old) {
		t.Error("a hit did not trim a cache last trimmed 2 hours ago")
	}
}

// TestPlanCacheConcurrent has stores, loads and trims race, as the offcc
// processes of a parallel build do: every load is a miss or the right plan.
func TestPlanCacheConcurrent(t *testing.T) {
	c := &planCache{dir: filepath.Join(t.TempDir(), "plans")}
	const keys = 8
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 100; i++ {
				k := (g + i) % keys
				key := fmt.Sprintf("%064x", k)
				want := fmt.Sprintf("jobs for %d in /tmp/t%d\n", k, g)
				switch i % 4 {
				case 0:
					c.store(key, fmt.Sprintf("/tmp/s%d", g), fmt.Sprintf("jobs for %d in /tmp/s%d\n", k, g))
				case 3:
					// What a trim does to an entry under the others.
					os.Remove(filepath.Join(c.dir, key))
				default:
					if got, ok := c.load(key, fmt.Sprintf("/tmp/t%d", g)); ok && got != want {
						t.Errorf("load %d = %q, want %q", k, got, want)
					}
				}
			}
		}(g)
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < 20; i++ {
			c.trim(time.Now().Add(planMaxAge + time.Hour)) // removes everything
		}
	}()
	wg.Wait()
	entries, _ := os.ReadDir(c.dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".offcc-") {
			t.Errorf("temporary %s left behind", e.Name())
		}
	}
}

func TestNewPlanCache(t *testing.T) {
	env := func(vars ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(vars); i += 2 {
				if vars[i] == k {
					return vars[i+1]
				}
			}
			return ""
		}
	}
	for _, off := range []string{"0", "off", "no", "false"} {
		if newPlanCache(env("OFFCC_PLAN_CACHE", off)) != nil {
			t.Errorf("OFFCC_PLAN_CACHE=%s did not disable the plan cache", off)
		}
	}
	root := t.TempDir()
	c := newPlanCache(env("OFFCC_CACHE_DIR", root))
	if c == nil || c.dir != filepath.Join(root, "plans") {
		t.Errorf("OFFCC_CACHE_DIR=%s: cache %+v, want dir %s", root, c, filepath.Join(root, "plans"))
	}
}
