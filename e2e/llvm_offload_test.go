package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/offcc/offcc/internal/llvmtest"
)

// TestLLVMOffloadTests runs LLVM's own OpenMP offload runtime tests,
// vendored under testdata/llvm-offload from llvm-project's offload/test
// (see its README.md), as lit runs them for the host device: each file's
// RUN lines are expanded with lit's substitutions for the generic target
// (%libomptarget-compile-run-and-check-generic and its relatives), with
// offcc and offcc++ in place of clang and clang++, and run by bash with
// pipefail, the programs under OMP_TARGET_OFFLOAD=MANDATORY, their output
// checked by FileCheck against the file.
//
// A file is skipped when its REQUIRES, UNSUPPORTED or XFAIL lines rule it
// out for the host target (litFeatures), or when a RUN line uses a
// substitution or command this runner does not provide. A file that fails
// under offcc is run again with clang 22 itself: if it fails there too it
// is skipped (it is not offcc's to fix); if clang passes, offcc fails.
//
// Stable kernel names are offcc's default. lit names the sources by
// absolute paths, which keep clang's inode names unless they lie under
// OFFCC_BASE_DIR (as in a CMake build), so offcc runs with OFFCC_BASE_DIR
// set to the tests' root, and the kernels of each program a test leaves
// (lit's %t) must be named by path.
func TestLLVMOffloadTests(t *testing.T) {
	t.Parallel()
	runLLVMOffloadTests(t, getCompiler(t), litRelease22)
}

// TestLLVMOffloadTests19 runs the same tests with LLVM 19: offcc driving
// Debian's clang 19 (--llvm-dir) against its privately unpacked OpenMP
// runtime, with lit's features of clang 19; a file failing under offcc is
// run again with clang 19 itself. clang 19 names kernels only after inodes
// (toolchain.Profile.StableNames), so their names are not checked.
func TestLLVMOffloadTests19(t *testing.T) {
	t.Parallel()
	c := offccOnly(t, "offcc's LLVM 19 profile")
	llvmtest.Tool19(t, "clang")
	llvmtest.OpenMP19(t)
	runLLVMOffloadTests(t, c, litRelease19)
}

// litRelease is what running the tests with one LLVM release takes.
type litRelease struct {
	major      int
	ref, refXX string   // the release's clang and clang++, the reference
	offccArgs  string   // offcc's arguments that pick the release (shell words)
	features   []string // lit's features
	include    string   // the directory of the release's omp.h ("": clang's own)
	lib        string   // the directory of its OpenMP runtime, for -L and LD_LIBRARY_PATH
	rpath      bool     // link with -rpath to lib, as lit does for a runtime in LLVM's own tree
	// stableNames: offcc names the kernels of a program under
	// OFFCC_BASE_DIR by path, which the runner checks.
	stableNames bool
}

// litRelease22 runs the tests with Debian's LLVM 22, offcc's default.
var litRelease22 = litRelease{
	major: 22, ref: refClang, refXX: refClangXX,
	features: litFeatures, lib: llvmLib, rpath: true, stableNames: true,
}

// litRelease19 runs them with Debian's LLVM 19 and clang 19's OpenMP
// runtime unpacked beside it: omp.h from there, and the runtime found by
// LD_LIBRARY_PATH only (the host plugin loads libomp.so by name; a second
// copy aborts the program).
var litRelease19 = litRelease{
	major: 19, ref: filepath.Join(llvmtest.Bin19, "clang"), refXX: filepath.Join(llvmtest.Bin19, "clang++"),
	offccArgs: "--llvm-dir=" + llvmtest.Bin19,
	features:  []string{litTarget, "clang", "clang-19", "unified_shared_memory"},
	include:   filepath.Join(llvmtest.OMPLib19, "clang", "19", "include"), lib: llvmtest.OMPLib19,
}

// runLLVMOffloadTests runs every vendored test with c driving the release.
func runLLVMOffloadTests(t *testing.T, c compiler, rel litRelease) {
	root, err := filepath.Abs(filepath.Join("..", "testdata", "llvm-offload"))
	if err != nil {
		t.Fatal(err)
	}
	files := litTestFiles(t, root)
	if len(files) == 0 {
		t.Fatalf("no tests under %s", root)
	}
	st := litStats{major: rel.major}
	sem := make(chan struct{}, 2) // two at a time: each compile is itself parallel
	start := time.Now()
	t.Run("tests", func(t *testing.T) {
		for _, file := range files {
			t.Run(strings.ReplaceAll(file, "/", "_"), func(t *testing.T) {
				t.Parallel()
				sem <- struct{}{}
				defer func() { <-sem }()
				runLLVMOffloadTest(t, c, rel, root, file, &st)
			})
		}
	})
	t.Logf("%d LLVM offload tests in %v under %s with LLVM %d: %s", len(files), time.Since(start).Round(time.Second), c.desc, rel.major, st.summary())
}

// litTarget is lit's name of the host offload target (its
// libomptarget_current_target), used as -fopenmp-targets= and as a
// feature, as in LLVM's own runs.
const litTarget = "x86_64-unknown-linux-gnu"

// litFeatures are the lit features of LLVM's offload test suite for the
// host target with Debian's LLVM 22: the target itself, clang as the test
// compiler, and unified shared memory (assumed for all but old GPUs).
// Missing: gpu, libc (no GPU libc), libomptarget-debug (Debian's
// libomptarget prints nothing under LIBOMPTARGET_DEBUG), ompt, flang, apu.
var litFeatures = []string{litTarget, "clang", "clang-22", "unified_shared_memory"}

// litCommands are the plain commands a RUN line may use besides lit's
// substitutions.
var litCommands = []string{"ar", "env", "mkdir"}

// litStats counts the outcomes of the test files.
type litStats struct {
	major                           int // the LLVM release of the reference clang
	mu                              sync.Mutex
	passed, failed                  []string
	skipFeature, skipRun, skipClang []string
}

func (s *litStats) add(list *[]string, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	*list = append(*list, name)
}

func (s *litStats) summary() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	sorted := func(s []string) []string { return slices.Sorted(slices.Values(s)) }
	return fmt.Sprintf("%d passed, %d failed %v, %d skipped for features (REQUIRES/UNSUPPORTED/XFAIL) %v, %d skipped for RUN lines this runner does not support %v, %d skipped as failing under clang %d too %v",
		len(s.passed), len(s.failed), sorted(s.failed), len(s.skipFeature), sorted(s.skipFeature),
		len(s.skipRun), sorted(s.skipRun), len(s.skipClang), s.major, sorted(s.skipClang))
}

// litTestFiles lists the test files under root (lit's config.suffixes,
// without Inputs, which holds the files tests include or build).
func litTestFiles(t *testing.T, root string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "Inputs" {
			return filepath.SkipDir
		}
		switch filepath.Ext(p) {
		case ".c", ".cpp", ".cc":
			rel, err := filepath.Rel(root, p)
			if err != nil {
				return err
			}
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// litSpec is what lit reads from a test file.
type litSpec struct {
	run                          []string
	requires, unsupported, xfail []string // comma-separated expressions
}

var litKeyword = regexp.MustCompile(`(?:^|[^\w-])(RUN|REQUIRES|UNSUPPORTED|XFAIL):(.*)$`)

// parseLitFile reads the RUN, REQUIRES, UNSUPPORTED and XFAIL lines of a
// test; RUN lines ending in a backslash go on in the next RUN line.
func parseLitFile(src []byte) (litSpec, error) {
	var s litSpec
	cont := false
	for _, line := range strings.Split(string(src), "\n") {
		m := litKeyword.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		text := strings.TrimSpace(m[2])
		switch m[1] {
		case "RUN":
			if cont {
				s.run[len(s.run)-1] += " " + text
			} else {
				s.run = append(s.run, text)
			}
			cont = strings.HasSuffix(text, `\`)
			if cont {
				last := &s.run[len(s.run)-1]
				*last = strings.TrimSpace(strings.TrimSuffix(*last, `\`))
			}
		case "REQUIRES":
			s.requires = append(s.requires, splitLitList(text)...)
		case "UNSUPPORTED":
			s.unsupported = append(s.unsupported, splitLitList(text)...)
		case "XFAIL":
			s.xfail = append(s.xfail, splitLitList(text)...)
		}
	}
	if cont {
		return s, errors.New("the last RUN line ends in a backslash")
	}
	return s, nil
}

func splitLitList(s string) []string {
	var out []string
	for _, e := range strings.Split(s, ",") {
		if e = strings.TrimSpace(e); e != "" {
			out = append(out, e)
		}
	}
	return out
}

// ruledOut says why the features rule the test out, or "".
func (s litSpec) ruledOut(features []string) (string, error) {
	for _, e := range s.requires {
		ok, err := evalLitExpr(e, features)
		if err != nil {
			return "", err
		}
		if !ok {
			return "REQUIRES: " + e, nil
		}
	}
	for _, e := range s.unsupported {
		ok, err := evalLitExpr(e, features)
		if err != nil {
			return "", err
		}
		if ok {
			return "UNSUPPORTED: " + e, nil
		}
	}
	for _, e := range s.xfail {
		if e == "*" {
			return "XFAIL: *", nil
		}
		ok, err := evalLitExpr(e, features)
		if err != nil {
			return "", err
		}
		if ok {
			return "XFAIL: " + e, nil
		}
	}
	return "", nil
}

var litExprToken = regexp.MustCompile(`^\s*(&&|\|\||!|\(|\)|(?:[-+=._a-zA-Z0-9*/]|\{\{.+?\}\})+)`)

// evalLitExpr evaluates one of lit's boolean feature expressions: names
// (possibly with {{regex}} parts), true, false, !, &&, || and parentheses.
func evalLitExpr(expr string, features []string) (bool, error) {
	var toks []string
	for rest := expr; strings.TrimSpace(rest) != ""; {
		m := litExprToken.FindStringSubmatch(rest)
		if m == nil {
			return false, fmt.Errorf("cannot parse feature expression %q", expr)
		}
		toks = append(toks, m[1])
		rest = rest[len(m[0]):]
	}
	p := litExprParser{toks: toks, features: features}
	v, err := p.or()
	if err == nil && p.pos != len(toks) {
		err = fmt.Errorf("unexpected %q", toks[p.pos])
	}
	if err != nil {
		return false, fmt.Errorf("feature expression %q: %w", expr, err)
	}
	return v, nil
}

type litExprParser struct {
	toks     []string
	pos      int
	features []string
}

func (p *litExprParser) peek() string {
	if p.pos < len(p.toks) {
		return p.toks[p.pos]
	}
	return ""
}

func (p *litExprParser) or() (bool, error) {
	v, err := p.and()
	for err == nil && p.peek() == "||" {
		p.pos++
		var w bool
		w, err = p.and()
		v = v || w
	}
	return v, err
}

func (p *litExprParser) and() (bool, error) {
	v, err := p.not()
	for err == nil && p.peek() == "&&" {
		p.pos++
		var w bool
		w, err = p.not()
		v = v && w
	}
	return v, err
}

func (p *litExprParser) not() (bool, error) {
	switch tok := p.peek(); tok {
	case "!":
		p.pos++
		v, err := p.not()
		return !v, err
	case "(":
		p.pos++
		v, err := p.or()
		if err == nil && p.peek() != ")" {
			err = errors.New("missing )")
		}
		p.pos++
		return v, err
	case "", ")", "&&", "||":
		return false, fmt.Errorf("expected a feature at %q", tok)
	default:
		p.pos++
		switch tok {
		case "true":
			return true, nil
		case "false":
			return false, nil
		}
		if !strings.Contains(tok, "{{") {
			return slices.Contains(p.features, tok), nil
		}
		var re strings.Builder
		re.WriteString("^")
		for rest := tok; rest != ""; {
			i := strings.Index(rest, "{{")
			if i < 0 {
				re.WriteString(regexp.QuoteMeta(rest))
				break
			}
			j := strings.Index(rest[i:], "}}")
			re.WriteString(regexp.QuoteMeta(rest[:i]) + "(?:" + rest[i+2:i+j] + ")")
			rest = rest[i+j+2:]
		}
		re.WriteString("$")
		r, err := regexp.Compile(re.String())
		if err != nil {
			return false, err
		}
		return slices.ContainsFunc(p.features, r.MatchString), nil
	}
}

// litSubst holds what lit's substitutions expand to.
type litSubst struct {
	rel      litRelease
	cc, cxx  string // %clang, %clangxx (with the release's arguments)
	src, tmp string // %s, %t
	testRoot string // lit's test_source_root, for -I
}

var (
	litSubstToken = regexp.MustCompile(`%[A-Za-z0-9_-]+|%%`)
	litCompile    = regexp.MustCompile(`^libomptarget-compile(xx|opt|optxx)?(-run-and-check|-and-run)?-(.+)$`)
)

// flags is lit's %flags for the host target: the test root for includes,
// the OpenMP runtime's directory to link (and run) with, no GPU libraries.
func (s litSubst) flags() string {
	f := "-I " + shq(s.testRoot)
	if s.rel.include != "" {
		f += " -isystem " + shq(s.rel.include)
	}
	f += " -L " + shq(s.rel.lib) + " -nogpulib"
	if s.rel.rpath {
		f += " -Wl,-rpath," + shq(s.rel.lib)
	}
	return f
}

// cc returns the compiler as a shell word, with the release's arguments.
func (s litSubst) shellCC(cc string) string {
	if s.rel.offccArgs == "" || cc == s.rel.ref || cc == s.rel.refXX {
		return shq(cc)
	}
	return shq(cc) + " " + s.rel.offccArgs
}

// compiler is %clang-<target> (or %clangxx-<target>): the compiler with
// lit's %openmp_flags, %flags and -fopenmp-targets=.
func (s litSubst) compiler(cxx bool) string {
	cc := s.cc
	if cxx {
		cc = s.cxx
	}
	return s.shellCC(cc) + " -fopenmp -pthread " + s.flags() + " -fopenmp-targets=" + litTarget
}

// expand expands one RUN line for the host target; it fails on a
// substitution or a command this runner does not provide.
func (s litSubst) expand(line string) (string, error) {
	for _, seg := range regexp.MustCompile(`&&|\|\|?|;`).Split(line, -1) {
		f := strings.Fields(seg)
		if len(f) > 0 && !strings.HasPrefix(f[0], "%") && !slices.Contains(litCommands, f[0]) {
			return "", fmt.Errorf("command %q", f[0])
		}
	}
	fileCheck := shq(filepath.Join(llvmBin, "FileCheck"))
	var bad error
	out := litSubstToken.ReplaceAllStringFunc(line, func(tok string) string {
		name := tok[1:]
		if m := litCompile.FindStringSubmatch(name); m != nil {
			if m[3] != "generic" && m[3] != litTarget {
				bad = fmt.Errorf("substitution %s (not for C or C++ on the host target)", tok)
				return tok
			}
			x := strings.Contains(m[1], "xx")
			cmd := s.compiler(x)
			if strings.HasPrefix(m[1], "opt") {
				cmd += " -O3"
			}
			cmd += " " + shq(s.src) + " -o " + shq(s.tmp)
			switch m[2] {
			case "-run-and-check":
				return cmd + " && " + shq(s.tmp) + " | " + fileCheck + " " + shq(s.src)
			case "-and-run":
				return cmd + " && " + shq(s.tmp)
			}
			return cmd
		}
		switch name {
		case "libomptarget-run-generic", "libomptarget-run-" + litTarget:
			return shq(s.tmp)
		case "libomptarget-run-fail-generic", "libomptarget-run-fail-" + litTarget:
			return shq(filepath.Join(llvmBin, "not")) + " --crash " + shq(s.tmp)
		case "clang-generic", "clang-" + litTarget:
			return s.compiler(false)
		case "clangxx-generic", "clangxx-" + litTarget:
			return s.compiler(true)
		case "fcheck-generic", "fcheck-" + litTarget:
			return fileCheck + " " + shq(s.src)
		case "fcheck-plain-generic":
			return fileCheck
		case "clang":
			return s.shellCC(s.cc)
		case "clangxx":
			return s.shellCC(s.cxx)
		case "openmp_flags":
			return "-fopenmp -pthread"
		case "flags":
			return s.flags()
		case "flags_clang", "cuda_flags":
			return ""
		case "not":
			return shq(filepath.Join(llvmBin, "not"))
		case "target_triple":
			return litTarget
		case "s":
			return shq(s.src)
		case "S", "p":
			return shq(filepath.Dir(s.src))
		case "t":
			return shq(s.tmp)
		case "T":
			return shq(filepath.Dir(s.tmp))
		case "%":
			return "%"
		}
		bad = fmt.Errorf("substitution %s", tok)
		return tok
	})
	return out, bad
}

func shq(s string) string { return shellJoin([]string{s}) }

// fixedLayout reports whether setarch -R runs here (litRun).
var fixedLayout = sync.OnceValue(func() bool {
	return exec.Command("setarch", "-R", "true").Run() == nil
})

// litRun runs the expanded RUN lines in order in dir, as lit does (bash
// with pipefail), and returns the log of what ran and whether all passed.
// Address-space layout randomisation is off (setarch -R): some upstream
// checks match output that holds a pointer (offloading/ctor_dtor_api.cpp
// prints the host address of a global, then checks for a "7" that, under
// LLVM 19's runtime, is found in about half of the random addresses), and
// a program that passes or fails by the draw of its addresses would make
// offcc's run and clang's disagree by chance. (Where setarch cannot turn
// it off, say under a seccomp policy that refuses personality(2), the
// lines run as they are.)
func litRun(dir string, env, lines []string) (string, bool) {
	var log bytes.Buffer
	for _, line := range lines {
		fmt.Fprintf(&log, "$ %s\n", line)
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		argv := []string{"bash", "-o", "pipefail", "-c", line}
		if fixedLayout() {
			argv = append([]string{"setarch", "-R"}, argv...)
		}
		cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), env...)
		cmd.Stdout, cmd.Stderr = &log, &log
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
		cmd.WaitDelay = 5 * time.Second
		err := cmd.Run()
		timedOut := ctx.Err() != nil
		cancel()
		if err != nil {
			if timedOut {
				fmt.Fprintf(&log, "(timed out)\n")
			}
			fmt.Fprintf(&log, "(%v)\n", err)
			return log.String(), false
		}
	}
	return log.String(), true
}

// runLLVMOffloadTest runs one vendored test with the compiler under test
// driving the release, and with the release's clang when it fails.
func runLLVMOffloadTest(t *testing.T, c compiler, release litRelease, root, rel string, st *litStats) {
	src := filepath.Join(root, filepath.FromSlash(rel))
	text, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	spec, err := parseLitFile(text)
	if err == nil && len(spec.run) == 0 {
		err = errors.New("no RUN lines")
	}
	if err != nil {
		st.add(&st.failed, rel)
		t.Fatalf("%s: %v", rel, err)
	}
	why, err := spec.ruledOut(release.features)
	if err != nil {
		st.add(&st.failed, rel)
		t.Fatalf("%s: %v", rel, err)
	}
	if why != "" {
		st.add(&st.skipFeature, rel)
		t.Skipf("%s: %s (features here: %v)", rel, why, release.features)
	}
	// run builds and runs the test with the compilers cc and cxx in a
	// fresh directory; prog is lit's %t, the program it builds.
	run := func(cc, cxx string, env ...string) (log, prog string, ok bool, err error) {
		dir := t.TempDir()
		_, tmp := tmpEnv(t)
		prog = filepath.Join(dir, filepath.Base(rel)+".tmp")
		sub := litSubst{rel: release, cc: cc, cxx: cxx, src: src, tmp: prog, testRoot: root}
		var lines []string
		for _, l := range spec.run {
			e, err := sub.expand(l)
			if err != nil {
				return "", "", false, fmt.Errorf("RUN: %s: %w", l, err)
			}
			lines = append(lines, e)
		}
		runEnv := []string{tmp, "OMP_TARGET_OFFLOAD=MANDATORY", "LD_LIBRARY_PATH=" + release.lib}
		log, ok = litRun(dir, append(runEnv, env...), lines)
		return log, prog, ok, nil
	}
	// lit names sources by absolute paths; OFFCC_BASE_DIR (as for a CMake
	// build) gives their kernels stable names, which is what is tested.
	log, prog, ok, err := run(c.cc, c.cxx, "OFFCC_BASE_DIR="+root)
	if err != nil {
		st.add(&st.skipRun, rel)
		t.Skipf("%s: not run: %v", rel, err)
	}
	if ok {
		if !c.reference && release.stableNames {
			if bad := litInodeKernels(t, prog); len(bad) > 0 {
				st.add(&st.failed, rel)
				t.Fatalf("%s passes, but the kernels of %s are named after inodes, not stably: %v\n%s", rel, prog, bad, log)
			}
		}
		st.add(&st.passed, rel)
		return
	}
	if c.reference {
		st.add(&st.skipClang, rel)
		t.Skipf("%s fails under clang (the compiler under test):\n%s", rel, log)
	}
	refLog, _, refOK, _ := run(release.ref, release.refXX)
	if !refOK {
		st.add(&st.skipClang, rel)
		t.Skipf("%s fails under clang %d too, not offcc's to fix:\n%s", rel, release.major, refLog)
	}
	st.add(&st.failed, rel)
	t.Fatalf("%s fails under offcc but passes under clang %d:\n%s", rel, release.major, log)
}

// litKernelRE matches an OpenMP kernel name in llvm-nm output; its first
// group is the device number, 0xdeadf17e for a kernel named by path.
var litKernelRE = regexp.MustCompile(`__omp_offloading_([0-9a-f]+)_([0-9a-f]+)_(\w+)_l(\d+)`)

// litInodeKernels returns the OpenMP kernels of prog (when the test left
// it) that are named after an inode rather than a path.
func litInodeKernels(t *testing.T, prog string) []string {
	t.Helper()
	if _, err := os.Stat(prog); err != nil {
		return nil
	}
	r := cmdSpec{name: filepath.Join(llvmBin, "llvm-nm"), args: []string{prog}}.mustRun(t)
	var bad []string
	for _, m := range litKernelRE.FindAllStringSubmatch(r.stdout, -1) {
		if m[1] != "deadf17e" && !slices.Contains(bad, m[0]) {
			bad = append(bad, m[0])
		}
	}
	return bad
}

// TestLLVMOffloadLitParsing checks the runner's reading of lit's RUN lines, feature
// expressions and substitutions; it needs no LLVM.
func TestLLVMOffloadLitParsing(t *testing.T) {
	spec, err := parseLitFile([]byte(`// RUN: %libomptarget-compilexx-generic && \
// RUN:   env X=1 %libomptarget-run-generic
// RUN: %libomptarget-compileopt-run-and-check-generic
// REQUIRES: x86_64-unknown-linux-gnu
// UNSUPPORTED: amdgcn-amd-amdhsa, intelgpu
// XCHECK: not a keyword
`))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"%libomptarget-compilexx-generic && env X=1 %libomptarget-run-generic", "%libomptarget-compileopt-run-and-check-generic"}
	if !slices.Equal(spec.run, want) {
		t.Errorf("RUN lines %q, want %q", spec.run, want)
	}
	if why, err := spec.ruledOut(litFeatures); why != "" || err != nil {
		t.Errorf("ruled out: %q, %v", why, err)
	}
	for expr, want := range map[string]bool{
		"gpu":                          false,
		"!gpu":                         true,
		"x86_64-unknown-linux-gnu":     true,
		"clang && !(gpu || libc)":      true,
		"{{.*}}-linux-gnu":             true,
		"{{nvptx|amdgcn}}{{.*}}":       false,
		"gpu || unified_shared_memory": true,
	} {
		if got, err := evalLitExpr(expr, litFeatures); err != nil || got != want {
			t.Errorf("evalLitExpr(%q) = %v, %v; want %v", expr, got, err, want)
		}
	}
	for _, expr := range []string{"gpu &&", "(gpu", "&& gpu"} {
		if _, err := evalLitExpr(expr, litFeatures); err == nil {
			t.Errorf("evalLitExpr(%q): no error", expr)
		}
	}
	s := litSubst{rel: litRelease22, cc: "/cc", cxx: "/cxx", src: "/t/a.c", tmp: "/o/a.c.tmp", testRoot: "/t"}
	got, err := s.expand("%libomptarget-compileopt-run-and-check-generic -DX")
	if err != nil {
		t.Fatal(err)
	}
	wantLine := "/cc -fopenmp -pthread -I /t -L " + llvmLib + " -nogpulib -Wl,-rpath," + llvmLib +
		" -fopenmp-targets=" + litTarget + " -O3 /t/a.c -o /o/a.c.tmp && /o/a.c.tmp | " +
		filepath.Join(llvmBin, "FileCheck") + " /t/a.c -DX"
	if got != wantLine {
		t.Errorf("expanded to\n%s\nwant\n%s", got, wantLine)
	}
	// LLVM 19: offcc is told the release, and clang 19's omp.h and
	// runtime are the unpacked ones, found without an rpath.
	s19 := litSubst{rel: litRelease19, cc: "/cc", cxx: "/cxx", src: "/t/a.c", tmp: "/o/a.c.tmp", testRoot: "/t"}
	got, err = s19.expand("%clang-generic %s -o %t && %clang -c %s")
	if err != nil {
		t.Fatal(err)
	}
	inc := filepath.Join(llvmtest.OMPLib19, "clang", "19", "include")
	wantLine = "/cc --llvm-dir=" + llvmtest.Bin19 + " -fopenmp -pthread -I /t -isystem " + inc + " -L " + llvmtest.OMPLib19 + " -nogpulib" +
		" -fopenmp-targets=" + litTarget + " /t/a.c -o /o/a.c.tmp && /cc --llvm-dir=" + llvmtest.Bin19 + " -c /t/a.c"
	if got != wantLine {
		t.Errorf("LLVM 19: expanded to\n%s\nwant\n%s", got, wantLine)
	}
	for _, line := range []string{"%libomptarget-compile-fortran-run-and-check-generic", "%libomptarget-compile-nvptx64-nvidia-cuda", "llvm-nm %t", "%libomptarget-compile-generic && %offload-tblgen"} {
		if _, err := s.expand(line); err == nil {
			t.Errorf("%q expanded, want an error", line)
		}
	}
}
