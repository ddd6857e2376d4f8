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
	"sync"
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
// Make one with Find; its tools are looked up one by one (see Tool).
type LLVM struct {
	// Bin is the directory holding clang and the LLVM tools.
	Bin string
	// Major is the LLVM major version read from the resource directory.
	Major int

	// tools remembers the path Tool chose for each name; nil (an LLVM
	// not made by Find) looks every name up afresh.
	tools *toolPaths
	// versionedFirst prefers clang-22 to clang (see Tool): Bin was found
	// on PATH through a clang-22 that its plain clang, if any, is not.
	versionedFirst bool
}

// toolPaths is an LLVM's memo of its tools' paths.
type toolPaths struct {
	mu    sync.Mutex
	paths map[string]string
}

// Tool returns the path of the named tool in the bin directory, found on
// its own, by two stat calls at most and once per LLVM. In an LLVM
// installation's bin directory (--llvm-dir, OFFCC_LLVM_DIR, the default,
// or a PATH directory whose clang is its clang-22) the plain name comes
// first (/usr/lib/llvm-22/bin/llc), then the versioned one. In a PATH
// directory where clang-22 stands beside no clang or another LLVM's
// (Debian's /usr/bin), the versioned name comes first (/usr/bin/llc-22),
// then the plain one only when it is the same file or there is no
// versioned one. A tool found under neither name is named plainly, so
// that running it says what is missing.
func (l *LLVM) Tool(name string) string {
	if l.tools == nil {
		return l.lookTool(name)
	}
	l.tools.mu.Lock()
	defer l.tools.mu.Unlock()
	if p, ok := l.tools.paths[name]; ok {
		return p
	}
	p := l.lookTool(name)
	l.tools.paths[name] = p
	return p
}

// lookTool finds the named tool in Bin (see Tool).
func (l *LLVM) lookTool(name string) string {
	plain := filepath.Join(l.Bin, name)
	pfi, perr := os.Stat(plain)
	if perr == nil && pfi.IsDir() {
		perr = os.ErrNotExist
	}
	if perr == nil && !l.versionedFirst {
		return plain
	}
	for _, major := range []int{l.Major, RequiredMajor} {
		if major <= 0 {
			continue
		}
		versioned := fmt.Sprintf("%s-%d", plain, major)
		vfi, err := os.Stat(versioned)
		if err != nil || vfi.IsDir() {
			continue
		}
		if perr == nil && os.SameFile(pfi, vfi) {
			return plain
		}
		return versioned
	}
	return plain
}

// Clang returns the path of the clang driver.
func (l *LLVM) Clang() string { return l.Tool("clang") }

// Find locates LLVM: explicit dir (from --llvm-dir) first, then
// $OFFCC_LLVM_DIR, then the directory of clang-22 on PATH, then DefaultDir.
// getenv is os.Getenv in production; tests pass their own.
func Find(explicit string, getenv func(string) string) (*LLVM, error) {
	var tried []string
	try := func(dir, how string) (*LLVM, error) {
		tried = append(tried, dir)
		return probe(dir, how, false)
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
		if fi, err := os.Stat(filepath.Join(p, fmt.Sprintf("clang-%d", RequiredMajor))); err == nil && !fi.IsDir() {
			// Debian's /usr/bin holds the tools as versioned names
			// (clang-22, llvm-offload-binary-22, ...), maybe beside
			// another LLVM's clang; LLVM's own bin directory plain ones
			// beside a clang-22 that is its clang: Tool finds each.
			pfi, perr := os.Stat(filepath.Join(p, "clang"))
			tried = append(tried, p)
			return probe(p, "PATH", perr != nil || !os.SameFile(pfi, fi))
		}
	}
	l, err := try(DefaultDir, "default")
	if err != nil {
		return nil, fmt.Errorf("LLVM %d not found (looked in %s); install it with: %s", RequiredMajor, strings.Join(tried, ", "), InstallHint)
	}
	return l, nil
}

// probe checks that dir (whose versioned names come first if
// versionedFirst, see Tool) holds clang (plain or versioned) and reads the LLVM
// major version from the resource directory (<dir>/../lib/clang/<major>),
// which costs no process start. A directory of links to an installation's
// tools (or a link to its bin directory) has no resource directory beside
// it: the one beside the directory, or the clang, they link to is read.
func probe(dir, how string, versionedFirst bool) (*LLVM, error) {
	l := &LLVM{Bin: dir, tools: &toolPaths{paths: map[string]string{}}, versionedFirst: versionedFirst}
	major := resourceMajor(dir)
	l.Major = major
	if fi, err := os.Stat(l.Clang()); err != nil || fi.IsDir() {
		if fi, err := os.Stat(filepath.Join(dir, "bin", "clang")); err == nil && !fi.IsDir() {
			return nil, fmt.Errorf("no clang in %s (from %s); it is in %s: %s names LLVM's bin directory", dir, how, filepath.Join(dir, "bin"), how)
		}
		return nil, fmt.Errorf("no clang in %s (from %s); install LLVM %d with: %s", dir, how, RequiredMajor, InstallHint)
	}
	if major == 0 {
		major = linkedMajor(dir, l.Clang())
		l.Major = major
		l.tools = &toolPaths{paths: map[string]string{}} // clang-<major> may be the one
	}
	if major == 0 {
		return nil, fmt.Errorf("cannot tell the LLVM version of %s (no lib/clang/<version> beside it or beside what it links to); offcc needs LLVM %d: %s", dir, RequiredMajor, InstallHint)
	}
	if major < RequiredMajor {
		return nil, fmt.Errorf("found LLVM %d in %s, but offcc needs LLVM %d or newer; install it with: %s", major, dir, RequiredMajor, InstallHint)
	}
	return l, nil
}

// linkedMajor returns the LLVM major version of the installation that
// bin, or its clang, links to: the resource directory beside the directory
// either resolves to. It returns 0 when there is none.
func linkedMajor(bin, clang string) int {
	var dirs []string
	if real, err := filepath.EvalSymlinks(bin); err == nil {
		dirs = append(dirs, real)
	}
	if real, err := filepath.EvalSymlinks(clang); err == nil {
		dirs = append(dirs, filepath.Dir(real))
	}
	for _, d := range dirs {
		if m := resourceMajor(d); m != 0 {
			return m
		}
	}
	return 0
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
