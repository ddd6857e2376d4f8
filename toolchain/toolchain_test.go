package toolchain

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// fakeLLVM makes <root>/bin/clang<suffix> and <root>/lib/clang/<major>.
func fakeLLVM(t *testing.T, major, suffix string) string {
	t.Helper()
	root := t.TempDir()
	bin := filepath.Join(root, "bin")
	os.MkdirAll(bin, 0o755)
	os.MkdirAll(filepath.Join(root, "lib", "clang", major), 0o755)
	if err := os.WriteFile(filepath.Join(bin, "clang"+suffix), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestFindExplicitDir(t *testing.T) {
	bin := fakeLLVM(t, "22", "")
	l, err := Find(bin, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if l.Bin != bin || l.Major != 22 || l.Clang() != filepath.Join(bin, "clang") {
		t.Errorf("got %+v", l)
	}
}

func TestFindEnvBeforePath(t *testing.T) {
	fromEnv := fakeLLVM(t, "22", "")
	onPath := fakeLLVM(t, "22", "-22")
	l, err := Find("", env(map[string]string{EnvLLVMDir: fromEnv, "PATH": onPath}))
	if err != nil || l.Bin != fromEnv {
		t.Fatalf("Find = %+v, %v; want %s", l, err, fromEnv)
	}
}

func TestFindVersionedNamesOnPath(t *testing.T) {
	onPath := fakeLLVM(t, "22", "-22")
	l, err := Find("", env(map[string]string{"PATH": "/nonexistent:" + onPath}))
	if err != nil {
		t.Fatal(err)
	}
	// Debian's /usr/bin: versioned names only.
	touch(t, filepath.Join(onPath, "llvm-offload-binary-22"))
	if l.Bin != onPath || l.Clang() != filepath.Join(onPath, "clang-22") || l.Tool("llvm-offload-binary") != filepath.Join(onPath, "llvm-offload-binary-22") {
		t.Errorf("got %+v: clang %s, llvm-offload-binary %s", l, l.Clang(), l.Tool("llvm-offload-binary"))
	}
}

func touch(t *testing.T, path string) {
	t.Helper()
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
}

// TestToolsOneByOne is LLVM's own bin directory first on PATH
// (PATH=/usr/lib/llvm-22/bin:$PATH): it holds clang and, beside it,
// clang-22, but llc only as llc. Each tool is found under the name it has.
func TestToolsOneByOne(t *testing.T) {
	bin := fakeLLVM(t, "22", "")
	if err := os.Symlink("clang", filepath.Join(bin, "clang-22")); err != nil {
		t.Fatal(err)
	}
	touch(t, filepath.Join(bin, "llc"))
	touch(t, filepath.Join(bin, "clang-linker-wrapper"))
	l, err := Find("", env(map[string]string{"PATH": "/nonexistent:" + bin + ":/usr/bin"}))
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		"clang":                filepath.Join(bin, "clang"),
		"llc":                  filepath.Join(bin, "llc"),
		"clang-linker-wrapper": filepath.Join(bin, "clang-linker-wrapper"),
		"ld.lld":               filepath.Join(bin, "ld.lld"), // missing: named plainly
	} {
		if got := l.Tool(name); got != want {
			t.Errorf("Tool(%q) = %s, want %s", name, got, want)
		}
	}
	// The choice is made once per LLVM: a tool that appears later is
	// not looked for again by this LLVM, but is by a new one.
	touch(t, filepath.Join(bin, "ld.lld-22"))
	if got := l.Tool("ld.lld"); got != filepath.Join(bin, "ld.lld") {
		t.Errorf("Tool(ld.lld) changed to %s within one LLVM", got)
	}
	l2, err := Find(bin, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if got := l2.Tool("ld.lld"); got != filepath.Join(bin, "ld.lld-22") {
		t.Errorf("new LLVM: Tool(ld.lld) = %s, want ld.lld-22", got)
	}
}

// TestToolPlainNameOfAnotherLLVM is a /usr/bin whose plain clang is
// another LLVM's (Debian's clang package) beside clang-22: the versioned
// name wins.
func TestToolPlainNameOfAnotherLLVM(t *testing.T) {
	bin := fakeLLVM(t, "22", "-22")
	touch(t, filepath.Join(bin, "clang")) // a different file
	touch(t, filepath.Join(bin, "llc-22"))
	l, err := Find("", env(map[string]string{"PATH": bin}))
	if err != nil {
		t.Fatal(err)
	}
	if l.Clang() != filepath.Join(bin, "clang-22") || l.Tool("llc") != filepath.Join(bin, "llc-22") {
		t.Errorf("clang %s, llc %s; want the -22 names", l.Clang(), l.Tool("llc"))
	}
}

// TestToolOfLLVMLiteral checks that an LLVM not made by Find still finds
// its tools.
func TestToolOfLLVMLiteral(t *testing.T) {
	bin := fakeLLVM(t, "22", "-22")
	l := &LLVM{Bin: bin, Major: 22}
	if got := l.Clang(); got != filepath.Join(bin, "clang-22") {
		t.Errorf("Clang() = %s", got)
	}
}

func TestFindOldLLVM(t *testing.T) {
	bin := fakeLLVM(t, "14", "")
	_, err := Find(bin, env(nil))
	if err == nil || !strings.Contains(err.Error(), "found LLVM 14") || !strings.Contains(err.Error(), "clang-22") {
		t.Fatalf("err = %v, want a message naming LLVM 14 and what to install", err)
	}
	if strings.Contains(err.Error(), "\n") {
		t.Errorf("error is not one line: %q", err)
	}
}

func TestFindMissing(t *testing.T) {
	_, err := Find(filepath.Join(t.TempDir(), "nothing"), env(nil))
	if err == nil || !strings.Contains(err.Error(), "no clang in") || !strings.Contains(err.Error(), "apt-get install") {
		t.Fatalf("err = %v", err)
	}
}

func TestToolName(t *testing.T) {
	for in, want := range map[string]string{
		"/usr/bin/clang-linker-wrapper-22":         "clang-linker-wrapper",
		"/usr/lib/llvm-22/bin/llvm-offload-binary": "llvm-offload-binary",
		"clang-offload-packager-22":                "clang-offload-packager",
		"ld.lld":                                   "ld.lld",
		"x86_64-linux-gnu-ld":                      "x86_64-linux-gnu-ld",
		"tool-":                                    "tool-",
	} {
		if got := ToolName(in); got != want {
			t.Errorf("ToolName(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestToolPlainNameInNamedDir is a directory named by --llvm-dir whose
// plain clang is a wrapper (a logging script, ccache's link) beside LLVM's
// clang-22: the user named the directory, so its plain names win, and a
// tool it has only as a versioned name is still found.
func TestToolPlainNameInNamedDir(t *testing.T) {
	bin := fakeLLVM(t, "22", "-22")
	touch(t, filepath.Join(bin, "clang")) // a different file
	touch(t, filepath.Join(bin, "llc-22"))
	l, err := Find(bin, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if l.Clang() != filepath.Join(bin, "clang") || l.Tool("llc") != filepath.Join(bin, "llc-22") {
		t.Errorf("clang %s, llc %s; want clang, llc-22", l.Clang(), l.Tool("llc"))
	}
}

// TestFindDirOfLinks: a directory of links to an installation's tools, or
// a link to its bin directory, has no resource directory beside it; its
// version is that of the installation its clang links to.
func TestFindDirOfLinks(t *testing.T) {
	for _, c := range []struct {
		major string
		ok    bool
	}{{"22", true}, {"19", true}} {
		real := fakeLLVM(t, c.major, "")
		links := filepath.Join(t.TempDir(), "bin")
		os.MkdirAll(links, 0o755)
		if err := os.Symlink(filepath.Join(real, "clang"), filepath.Join(links, "clang")); err != nil {
			t.Fatal(err)
		}
		linkedBin := filepath.Join(t.TempDir(), "llvm")
		if err := os.Symlink(real, linkedBin); err != nil {
			t.Fatal(err)
		}
		for _, dir := range []string{links, linkedBin} {
			l, err := Find(dir, env(nil))
			switch {
			case c.ok && (err != nil || strconv.Itoa(l.Major) != c.major || l.Clang() != filepath.Join(dir, "clang")):
				t.Errorf("Find(%s) of LLVM %s = %+v, %v", dir, c.major, l, err)
			case !c.ok && err == nil:
				t.Errorf("Find(%s) of LLVM %s: found", dir, c.major)
			}
		}
	}
	// A clang linking nowhere with a version says it cannot tell.
	links := filepath.Join(t.TempDir(), "bin")
	os.MkdirAll(links, 0o755)
	touch(t, filepath.Join(links, "clang"))
	if _, err := Find(links, env(nil)); err == nil || !strings.Contains(err.Error(), "cannot tell the LLVM version of "+links) {
		t.Errorf("Find of a clang with no version: %v", err)
	}
}

// TestFindRootDir: the installation's root given instead of its bin
// directory is named so, not met with "install LLVM".
func TestFindRootDir(t *testing.T) {
	bin := fakeLLVM(t, "22", "")
	root := filepath.Dir(bin)
	_, err := Find(root, env(nil))
	if err == nil || !strings.Contains(err.Error(), "it is in "+bin+": --llvm-dir names LLVM's bin directory") || strings.Contains(err.Error(), "install") {
		t.Errorf("Find(root): %v", err)
	}
	_, err = Find(t.TempDir(), env(nil))
	if err == nil || !strings.Contains(err.Error(), "no clang in ") || !strings.Contains(err.Error(), "install LLVM 22") {
		t.Errorf("Find(empty dir): %v", err)
	}
}
