// Package toolchain finds the LLVM installation offcc drives and names the
// tools in it. offcc runs LLVM's tools by their paths in that directory and
// never resolves symbolic links, so a toolchain directory of links works.
package toolchain

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// RequiredMajor is the LLVM major version offcc is written against.
const RequiredMajor = 22

// EnvLLVMDir names the environment variable that selects the LLVM bin directory.
const EnvLLVMDir = "OFFCC_LLVM_DIR"

// DefaultDir is where Debian's LLVM 22 packages install their tools.
const DefaultDir = "/usr/lib/llvm-22/bin"

// InstallHint is the command that installs what offcc needs on Debian.
const InstallHint = "apt-get install clang-22 clang-tools-22 lld-22 llvm-22 liboffload-22 liboffload-22-dev libomp-22-dev"

// LLVM is one LLVM installation: its bin directory and major version.
type LLVM struct {
	// Bin is the directory holding clang and the LLVM tools.
	Bin string
	// Major is the LLVM major version read from the resource directory.
	Major int
	// Suffix is appended to every tool name: "-22" when the tools were found
	// as versioned names (Debian's /usr/bin/clang-22), else empty.
	Suffix string
}

// Tool returns the path of the named tool in the bin directory.
func (l *LLVM) Tool(name string) string { return filepath.Join(l.Bin, name+l.Suffix) }

// Clang returns the path of the clang driver.
func (l *LLVM) Clang() string { return l.Tool("clang") }

// Find locates LLVM: explicit dir (from --llvm-dir) first, then
// $OFFCC_LLVM_DIR, then the directory of clang-22 on PATH, then DefaultDir.
// getenv is os.Getenv in production; tests pass their own.
func Find(explicit string, getenv func(string) string) (*LLVM, error) {
	var tried []string
	try := func(dir, how string) (*LLVM, error) {
		tried = append(tried, dir)
		return probe(dir, how)
	}
	if explicit != "" {
		return try(explicit, "--llvm-dir")
	}
	if d := getenv(EnvLLVMDir); d != "" {
		return try(d, EnvLLVMDir)
	}
	for _, p := range filepath.SplitList(getenv("PATH")) {
		if p == "" {
			continue
		}
		suffix := fmt.Sprintf("-%d", RequiredMajor)
		if fi, err := os.Stat(filepath.Join(p, "clang"+suffix)); err == nil && !fi.IsDir() {
			// Debian's /usr/bin holds the tools as versioned names
			// (clang-22, llvm-offload-binary-22, ...): use them as they are.
			tried = append(tried, p)
			return probeSuffix(p, "PATH", suffix)
		}
	}
	l, err := try(DefaultDir, "default")
	if err != nil {
		return nil, fmt.Errorf("LLVM %d not found (looked in %s); install it with: %s", RequiredMajor, strings.Join(tried, ", "), InstallHint)
	}
	return l, nil
}

// probe checks that dir holds clang and reads the LLVM major version from the
// resource directory (<dir>/../lib/clang/<major>), which costs no process start.
func probe(dir, how string) (*LLVM, error) { return probeSuffix(dir, how, "") }

func probeSuffix(dir, how, suffix string) (*LLVM, error) {
	clang := filepath.Join(dir, "clang"+suffix)
	if fi, err := os.Stat(clang); err != nil || fi.IsDir() {
		return nil, fmt.Errorf("no clang in %s (from %s); install LLVM %d with: %s", dir, how, RequiredMajor, InstallHint)
	}
	major := resourceMajor(dir)
	if major == 0 {
		return nil, fmt.Errorf("cannot tell the LLVM version of %s (no lib/clang/<version> beside it); offcc needs LLVM %d: %s", dir, RequiredMajor, InstallHint)
	}
	if major < RequiredMajor {
		return nil, fmt.Errorf("found LLVM %d in %s, but offcc needs LLVM %d or newer; install it with: %s", major, dir, RequiredMajor, InstallHint)
	}
	return &LLVM{Bin: dir, Major: major, Suffix: suffix}, nil
}

func resourceMajor(bin string) int {
	entries, err := os.ReadDir(filepath.Join(bin, "..", "lib", "clang"))
	if err != nil {
		return 0
	}
	var majors []int
	for _, e := range entries {
		v := e.Name()
		if i := strings.IndexByte(v, '.'); i >= 0 {
			v = v[:i]
		}
		if n, err := strconv.Atoi(v); err == nil {
			majors = append(majors, n)
		}
	}
	if len(majors) == 0 {
		return 0
	}
	sort.Ints(majors)
	return majors[len(majors)-1]
}

// ToolName returns the tool a path names: its base name without a version
// suffix, so /usr/bin/clang-linker-wrapper-22 names clang-linker-wrapper.
func ToolName(path string) string {
	base := filepath.Base(path)
	if i := strings.LastIndexByte(base, '-'); i > 0 && i+1 < len(base) {
		if _, err := strconv.Atoi(base[i+1:]); err == nil {
			return base[:i]
		}
	}
	return base
}
