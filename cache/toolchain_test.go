package cache

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/offcc/offcc/internal/llvmtest"
)

// The plan key tests (moved from driver's plan cache tests with the key
// code). Helpers are prefixed pc to keep clear of other test files in the
// package.

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
	text, ok := PlanKeyText(s.clang, s.argv0, s.args, s.env)
	if !ok {
		t.Fatalf("no key for %s %q", s.clang, s.args)
	}
	sum := sha256.Sum256([]byte(text))
	return hex.EncodeToString(sum[:]), text
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
	if _, ok := PlanKeyText(filepath.Join(t.TempDir(), "clang"), "offcc", nil, nil); ok {
		t.Error("a missing clang got a key")
	}
}

// TestPlanCacheKeyRealClang keys the installed clang, when there is one:
// its driver libraries are part of the key.
func TestPlanCacheKeyRealClang(t *testing.T) {
	clang := llvmtest.Clang(t)
	text, ok := PlanKeyText(clang, "offcc", []string{"-c", "m.c"}, nil)
	if !ok {
		t.Fatal("no key for", clang)
	}
	if !strings.Contains(text, "\nlibrary \"libclang-cpp.so.") {
		t.Errorf("libclang-cpp is not in the key:\n%s", text)
	}
}
