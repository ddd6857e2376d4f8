package toolchain

import (
	"os"
	"path/filepath"
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
	if l.Bin != onPath || l.Suffix != "-22" || l.Tool("llvm-offload-binary") != filepath.Join(onPath, "llvm-offload-binary-22") {
		t.Errorf("got %+v", l)
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
