// Package toolchain finds the LLVM installation offcc drives and names the
// tools in it. offcc runs LLVM's tools by their paths in that directory and
// never resolves symbolic links, so a toolchain directory of links works.
package toolchain

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// EnvLLVMDir names the environment variable that selects the LLVM bin directory.
const EnvLLVMDir = "OFFCC_LLVM_DIR"

// LLVM is one LLVM installation: its bin directory, major version and
// the profile of its release. Make one with Find; its tools are looked up
// one by one (see Tool).
type LLVM struct {
	// Bin is the directory holding clang and the LLVM tools.
	Bin string
	// Major is the LLVM major version read from the resource directory.
	Major int
	// Profile is what offcc knows of the release (see Profile); Find
	// sets it, and only to a release offcc drives.
	Profile *Profile

	// tools remembers the path Tool chose for each name; nil (an LLVM
	// not made by Find) looks every name up afresh.
	tools *toolPaths
	// versionedFirst prefers clang-22 to clang (see Tool): Bin was found
	// on PATH through a clang-22 (the versioned clang of a release offcc
	// knows) that its plain clang, if any, is not.
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
	major := l.Major
	if major <= 0 {
		major = Preferred().Major
	}
	versioned := fmt.Sprintf("%s-%d", plain, major)
	if vfi, err := os.Stat(versioned); err == nil && !vfi.IsDir() {
		if perr == nil && os.SameFile(pfi, vfi) {
			return plain
		}
		return versioned
	}
	return plain
}

// Clang returns the path of the clang driver.
func (l *LLVM) Clang() string { return l.Tool("clang") }

// Find locates LLVM and picks the profile of its release: explicit dir
// (from --llvm-dir) first, then $OFFCC_LLVM_DIR, then, for each release
// offcc knows (those it drives first, newest first), the directory of its
// versioned clang (clang-22) on PATH and then its DefaultDir. A release
// offcc has no profile for, or does not drive yet, is refused in one line.
// getenv is os.Getenv in production; tests pass their own.
func Find(explicit string, getenv func(string) string) (*LLVM, error) {
	if explicit != "" {
		return probe(explicit, "--llvm-dir", false, 0)
	}
	if d := getenv(EnvLLVMDir); d != "" {
		return probe(d, EnvLLVMDir, false, 0)
	}
	var tried []string
	for _, p := range searchOrder() {
		for _, dir := range filepath.SplitList(getenv("PATH")) {
			if dir == "" {
				continue
			}
			if fi, err := os.Stat(filepath.Join(dir, fmt.Sprintf("clang-%d", p.Major))); err == nil && !fi.IsDir() {
				// Debian's /usr/bin holds the tools as versioned names
				// (clang-22, llvm-offload-binary-22, ...), maybe beside
				// another LLVM's clang; LLVM's own bin directory plain ones
				// beside a clang-22 that is its clang: Tool finds each.
				pfi, perr := os.Stat(filepath.Join(dir, "clang"))
				return probe(dir, "PATH", perr != nil || !os.SameFile(pfi, fi), p.Major)
			}
		}
		tried = append(tried, p.DefaultDir)
		if l, err := probe(p.DefaultDir, "default", false, 0); err == nil || !errors.Is(err, errNoClang) {
			return l, err
		}
	}
	pref := Preferred()
	return nil, fmt.Errorf("LLVM %d not found (looked in %s); install it with: %s", pref.Major, strings.Join(tried, ", "), pref.InstallHint)
}

// errNoClang is the error of probe for a directory without clang.
var errNoClang = errors.New("no clang")

// noClangError is probe's error for a directory without clang; it is
// errNoClang.
type noClangError struct{ msg string }

func (e *noClangError) Error() string        { return e.msg }
func (e *noClangError) Is(target error) bool { return target == errNoClang }

// probe checks that dir (whose versioned names come first if
// versionedFirst, see Tool) holds clang (plain or versioned), reads the
// LLVM major version from the resource directory (<dir>/../lib/clang/<major>),
// which costs no process start, and picks the release's profile. A
// directory of links to an installation's tools (or a link to its bin
// directory) has no resource directory beside it: the one beside the
// directory, or the clang, they link to is read. found is the release
// whose versioned clang the directory was found by (0: none): a resource
// directory shared by several releases (Debian's /usr/lib/clang) is
// read as that one's.
func probe(dir, how string, versionedFirst bool, found int) (*LLVM, error) {
	pref := Preferred()
	l := &LLVM{Bin: dir, tools: &toolPaths{paths: map[string]string{}}, versionedFirst: versionedFirst}
	majors := resourceMajors(dir)
	major := newest(majors)
	if found != 0 && slices.Contains(majors, found) {
		major = found
	}
	l.Major = major
	if fi, err := os.Stat(l.Clang()); err != nil || fi.IsDir() {
		if fi, err := os.Stat(filepath.Join(dir, "bin", "clang")); err == nil && !fi.IsDir() {
			return nil, &noClangError{fmt.Sprintf("no clang in %s (from %s); it is in %s: %s names LLVM's bin directory", dir, how, filepath.Join(dir, "bin"), how)}
		}
		return nil, &noClangError{fmt.Sprintf("no clang in %s (from %s); install LLVM %d with: %s", dir, how, pref.Major, pref.InstallHint)}
	}
	if major == 0 {
		major = linkedMajor(dir, l.Clang())
		l.Major = major
		l.tools = &toolPaths{paths: map[string]string{}} // clang-<major> may be the one
	}
	if major == 0 {
		return nil, fmt.Errorf("cannot tell the LLVM version of %s (no lib/clang/<version> beside it or beside what it links to); offcc needs LLVM %d: %s", dir, pref.Major, pref.InstallHint)
	}
	p, err := check(major, dir)
	if err != nil {
		return nil, err
	}
	l.Profile = p
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

// resourceMajor returns the newest LLVM major version with a resource
// directory beside bin (<bin>/../lib/clang/<major>), or 0.
func resourceMajor(bin string) int { return newest(resourceMajors(bin)) }

// resourceMajors returns the LLVM major versions with a resource
// directory beside bin, in increasing order.
func resourceMajors(bin string) []int {
	entries, err := os.ReadDir(filepath.Join(bin, "..", "lib", "clang"))
	if err != nil {
		return nil
	}
	var majors []int
	for _, e := range entries {
		v := e.Name()
		if i := strings.IndexByte(v, '.'); i >= 0 {
			v = v[:i]
		}
		if n, err := strconv.Atoi(v); err == nil && !slices.Contains(majors, n) {
			majors = append(majors, n)
		}
	}
	sort.Ints(majors)
	return majors
}

// newest returns the last of majors (sorted), or 0.
func newest(majors []int) int {
	if len(majors) == 0 {
		return 0
	}
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
