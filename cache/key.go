package cache

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"

	"github.com/offcc/offcc/actions"
	"github.com/offcc/offcc/internal/ompinfo"
	"github.com/offcc/offcc/options"
	"github.com/offcc/offcc/toolchain"
)

// keyVersion salts every action key; changing what a key covers or how
// results are stored changes it.
const keyVersion = "offcc action v1"

// commandArgs parses an external command's arguments with its tool's
// option table of the session's LLVM release: clang's driver, -cc1 or
// -cc1as, or lld. It returns nil for other tools (NVIDIA's, offcc's own
// steps), whose options write no file the plan does not know.
func (s *Session) commandArgs(cmd []string) []*options.Arg {
	if len(cmd) < 2 {
		return nil
	}
	var table *options.Table
	args := cmd[1:]
	tables := s.optionTables()
	switch tool := toolchain.ToolName(cmd[0]); {
	case tool == "clang" && cmd[1] == "-cc1":
		table, args = tables.ClangCC1(), cmd[2:]
	case tool == "clang" && cmd[1] == "-cc1as":
		table, args = tables.ClangCC1As(), cmd[2:]
	case tool == "clang":
		table = tables.ClangDriver()
	case tool == "lld" || tool == "ld.lld":
		table = tables.LLD()
	default:
		return nil
	}
	parsed, _ := table.Parse(args) // what clang rejects, it rejects itself
	return parsed
}

// optionTables returns the option tables the session reads commands
// with: those of SessionOptions.Options, or the newest release's.
func (s *Session) optionTables() *options.Tables {
	if s.tables != nil {
		return s.tables
	}
	r := options.Releases()
	t, err := options.ForRelease(r[len(r)-1])
	if err != nil {
		panic(err)
	}
	return t
}

// uncacheable returns why a's outputs cannot be cached, or "".
func (s *Session) uncacheable(a *actions.Action) string {
	return s.uncacheableWith(a, func() []*options.Arg { return s.commandArgs(a.Command) })
}

// uncacheableWith is uncacheable with a's command parsed by args, called
// only when the options are looked at.
func (s *Session) uncacheableWith(a *actions.Action, args func() []*options.Arg) string {
	switch {
	case a.Expand != nil:
		return "expands into other jobs"
	case a.Kind == actions.HostLink || a.Kind == actions.Link:
		return "host link"
	case a.Kind == actions.Fallback && a.FallbackReason != "":
		return "run by clang's driver: " + a.FallbackReason
	case a.Kind == actions.Fallback:
		return "run by clang's driver"
	case len(a.Command) == 0 && len(a.KeyArgs) == 0:
		// (The link stage's image extraction and module generation:
		// they write data already in memory.)
		return "in-process step cheaper to run than to key"
	case len(a.Outputs) == 0:
		return "no output file"
	}
	for _, f := range a.AllInputs() {
		if f.IsStdin() {
			return "input from standard input"
		}
	}
	for _, f := range a.Outputs {
		if f.Path == "-" {
			return "output to standard output"
		}
		if strings.HasPrefix(f.Path, "/dev/") {
			return "output to a device file"
		}
	}
	for _, arg := range args() {
		// (offcc's own private outputs, such as the -MMD compile's
		// include graph, are outputs like any other.)
		if why := arg.Option.Uncacheable; why != "" && !a.PrivateOutput(arg.Value()) {
			return why
		}
	}
	return a.UnknownReads
}

// actionKey is the first-level key of an action: everything known before
// it runs.
type actionKey struct {
	text string
	sum  Sum
	// frontEndOpenMP: an OpenMP compile from source, whose kernel names
	// clang derives from each source file's device and inode numbers
	// (__omp_offloading_<dev>_<ino>_...): those numbers are keyed too.
	frontEndOpenMP bool
	// stableNames: an OpenMP front end offcc runs with stable kernel
	// names (in a directory of its own, with -working-directory): the
	// files it names relatively give names by path, not by inode, so
	// only a result whose names still hold inodes (of files named by
	// absolute paths) keys them (see candidate.Inodes).
	stableNames bool
	// searchDirs are the include search directories, in search order,
	// for direct mode's shadowing check.
	searchDirs []string
}

// key computes a's first-level key. It fails, with the reason counted as
// uncacheable, when a cannot be cached, an input cannot be read or a
// command names a temporary file the plan does not know.
func (s *Session) key(a *actions.Action) (*actionKey, string) {
	// The command is parsed once, for all the key looks at.
	args := sync.OnceValue(func() []*options.Arg { return s.commandArgs(a.Command) })
	if why := s.uncacheableWith(a, args); why != "" {
		return nil, why
	}
	var k keyText
	k.add("version", keyVersion)
	k.add("kind", a.Kind.String(), a.SideName())
	k.add("target", a.Target.Triple, a.Target.Arch)
	k.add("tool", a.ToolName())
	inProcess := a.Run != nil
	if inProcess {
		k.add("offcc", s.tools.digest(s.self))
	} else {
		s.keyTool(&k, a.Command)
	}
	isCC1 := len(a.Command) > 1 && (a.Command[1] == "-cc1" || a.Command[1] == "-cc1as")
	// (Only offcc's stable-names rewrite runs a compile elsewhere.)
	stable := isCC1 && a.Dir != ""

	// Temporaries are named by role: their random names must not reach
	// the key, their contents do through the input lines.
	temp := s.tempDir + string(filepath.Separator)
	repl := map[string]string{}
	roles := func(list []*actions.Artifact, role string) {
		for i, f := range list {
			if strings.HasPrefix(f.Path, temp) {
				repl[f.Path] = fmt.Sprintf("@%s%d", role, i)
			}
		}
	}
	roles(a.Inputs, "in")
	roles(a.Reads, "read")
	roles(a.Outputs, "out")
	// Output names do not reach the bytes of offcc's own steps, nor of a
	// compile's -o: k.c compiled to k.o and to k2.o share one entry.
	outRole := map[string]string{}
	for i, f := range a.Outputs {
		outRole[f.Path] = fmt.Sprintf("@out%d", i)
		if stable && !filepath.IsAbs(f.Path) {
			// (The stable-names rewrite names outputs absolutely.)
			if abs, err := filepath.Abs(f.Path); err == nil {
				outRole[abs] = outRole[f.Path]
			}
		}
		if inProcess {
			repl[f.Path] = outRole[f.Path]
		}
	}
	if a.DepFile != "" && strings.HasPrefix(a.DepFile, temp) {
		if _, ok := repl[a.DepFile]; !ok {
			repl[a.DepFile] = "@depfile"
		}
	}
	debugInfo, coverage := false, false
	for _, arg := range args() {
		switch arg.Option.ID {
		case "debug_info_kind_EQ", "gcodeview", "dwarf_version_EQ":
			debugInfo = isCC1
		case "fcoverage_mapping", "fprofile_instrument_EQ":
			coverage = isCC1
		case "dumpdir":
			// The prefix of auxiliary outputs (-save-temps', split DWARF's,
			// which make a job uncacheable anyway), named after the
			// output: the link stage's device links name it in the
			// build's temporary directory.
			if v := arg.Value(); strings.HasPrefix(v, temp) {
				repl[v] = "@dumpdir"
			}
		}
		if arg.Option.Spelling() == "-coverage-data-file=" {
			coverage = isCC1
		}
	}
	olds := make([]string, 0, len(repl))
	for p := range repl {
		olds = append(olds, p)
	}
	// Longest first, so that no path replaces part of a longer one.
	sort.Slice(olds, func(i, j int) bool { return len(olds[i]) > len(olds[j]) })
	frontEndOpenMP := false
	argv := a.Command
	if len(argv) == 0 {
		argv = append([]string{"(in-process)"}, a.KeyArgs...)
	}
	for i, arg := range argv {
		if i == 0 {
			continue
		}
		for _, p := range olds {
			if strings.Contains(arg, p) {
				arg = strings.ReplaceAll(arg, p, repl[p])
			}
		}
		if strings.Contains(arg, temp) || arg == s.tempDir {
			return nil, "names a temporary file its plan does not list"
		}
		if isCC1 && (argv[i-1] == "-o" || argv[i-1] == "-dependency-file") {
			if r, ok := outRole[arg]; ok {
				arg = r
			}
		}
		if stable && argv[i-1] == "-working-directory" {
			// clang finds files through it; their relative names, which
			// reach the outputs, are keyed as the arguments spell them.
			arg = "@wd"
		}
		if isCC1 && argv[i-1] == "-MT" && strings.HasPrefix(a.DepFile, temp) {
			// The target of offcc's private dependency file, which only
			// offcc reads (for its prerequisites).
			arg = "@target"
		}
		// The working directory reaches the output only through debug
		// information (and coverage mappings): elsewhere it is left out,
		// so that two checkouts share results (ccache's hash_dir).
		if isCC1 && !debugInfo && strings.HasPrefix(arg, "-fdebug-compilation-dir=") {
			arg = "-fdebug-compilation-dir=@unused"
		}
		if isCC1 && !coverage && strings.HasPrefix(arg, "-fcoverage-compilation-dir=") {
			arg = "-fcoverage-compilation-dir=@unused"
		}
		if isCC1 && arg == "-fopenmp" {
			frontEndOpenMP = true
		}
		k.add("arg", arg)
	}
	if a.Argv0 != "" {
		k.add("argv0", a.Argv0)
	}
	for _, r := range a.FileNames {
		// (Named in the diagnostics and dependency files written.)
		k.add("file-names", r.From, r.To)
	}
	for _, kv := range a.Env {
		k.add("action-env", kv)
	}
	for _, name := range []string{"SOURCE_DATE_EPOCH", "ZERO_AR_DATE"} {
		if v, ok := s.env[name]; ok {
			k.add("env", name+"="+v)
		}
	}

	hostIR := ""
	if isCC1 {
		if v := argValues(a.Command, "-fopenmp-host-ir-file-path", true); len(v) > 0 {
			hostIR = v[0]
		}
	}
	fromSource := false
	addFiles := func(list []*actions.Artifact, what string) string {
		for i, f := range list {
			fi := s.files.get(f.Path)
			if fi.err != nil {
				return fmt.Sprintf("cannot read %s: %v", f.Path, fi.err)
			}
			name := f.Path
			if r, ok := repl[f.Path]; ok {
				name = r
			} else if what == "input" && isCC1 {
				fromSource = true
			}
			if f.Path == hostIR && hostIR != "" {
				// An OpenMP device compile reads the host IR only for
				// its offload entries (!omp_offload.info): a change to
				// host-only code must not rerun it.
				if d := s.offloadInfo(a.Command[0], fi.sum, f.Path); d != "" {
					k.add(what, fmt.Sprint(i), name, "omp-offload-info="+d)
					continue
				}
			}
			if fi.mentionsTemp {
				// A generated file naming temporaries (a registration
				// module's .incbin of the images): keyed with their
				// names replaced by their roles, which are keyed by
				// content themselves.
				sum, ok := normalizedDigest(f.Path, olds, repl, temp)
				if !ok {
					return "an input names a temporary file its plan does not list"
				}
				k.add(what, fmt.Sprint(i), name, "sha256-roles="+sum.String())
				continue
			}
			k.add(what, fmt.Sprint(i), name, "sha256="+fi.sum.String())
			if frontEndOpenMP && what == "input" && !strings.HasPrefix(name, "@") && (!stable || filepath.IsAbs(a.Command[len(a.Command)-1])) {
				k.add("file-id", name, fmt.Sprintf("dev=%d ino=%d", fi.stat.Dev, fi.stat.Ino))
			}
		}
		return ""
	}
	if why := addFiles(a.Inputs, "input"); why != "" {
		return nil, why
	}
	if why := addFiles(a.Reads, "read"); why != "" {
		return nil, why
	}
	ak := &actionKey{frontEndOpenMP: frontEndOpenMP && fromSource, stableNames: stable}
	if isCC1 {
		ak.searchDirs = options.HeaderSearchDirs(args())
	}
	ak.text = k.String()
	ak.sum = sha256.Sum256([]byte(ak.text))
	return ak, ""
}

// keyTool describes the executable of an external command by content:
// the file, and for LLVM tools the libLLVM and libclang-cpp libraries they
// load. A clang that runs as a driver (not -cc1) also depends on what it
// finds installed: configuration files, GCC, ROCm and CUDA (as the plan
// cache keys them), and the linker beside it.
func (s *Session) keyTool(k *keyText, argv []string) {
	exe := argv[0]
	real := s.realPath(exe)
	k.add("exe", toolchain.ToolName(exe), s.tools.digest(real))
	for _, lib := range s.libraries(real) {
		k.add("library", lib[0], s.tools.digest(lib[1]))
	}
	if toolchain.ToolName(exe) == "clang" && (len(argv) < 2 || argv[1] != "-cc1" && argv[1] != "-cc1as") {
		s.driverFacts(k, real, argv[1:])
	}
}

// realPath returns where exe leads after symbolic links (exe itself if
// that cannot be found), memoised per build as the tools' digests are.
func (s *Session) realPath(exe string) string {
	s.mu.Lock()
	real, ok := s.reals[exe]
	s.mu.Unlock()
	if ok {
		return real
	}
	real, err := filepath.EvalSymlinks(exe)
	if err != nil {
		real = exe
	}
	s.mu.Lock()
	s.reals[exe] = real
	s.mu.Unlock()
	return real
}

// libraries returns the LLVM libraries (name, path) an executable loads,
// memoised per build.
func (s *Session) libraries(exe string) [][2]string {
	s.mu.Lock()
	libs, ok := s.libs[exe]
	s.mu.Unlock()
	if ok {
		return libs
	}
	for _, l := range DriverLibraries(exe) {
		if len(l) >= 2 {
			libs = append(libs, [2]string{l[0], l[1]})
		}
	}
	s.mu.Lock()
	s.libs[exe] = libs
	s.mu.Unlock()
	return libs
}

// driverFacts keys what a clang driver run finds installed.
func (s *Session) driverFacts(k *keyText, exe string, args []string) {
	// Variables clang's driver reads (options, search paths).
	for _, name := range []string{"CCC_OVERRIDE_OPTIONS", "COMPILER_PATH", "LIBRARY_PATH", "CPATH",
		"C_INCLUDE_PATH", "CPLUS_INCLUDE_PATH", "GCC_EXEC_PREFIX", "CLANG_NO_DEFAULT_CONFIG"} {
		if v, ok := s.env[name]; ok {
			k.add("driver-env", name+"="+v)
		}
	}
	dir := filepath.Dir(exe)
	k.keyConfig(dir, "clang", args, s.env)
	k.keyGCC(dir, args)
	k.keyOffload(dir, args, s.env)
	for _, ld := range []string{"ld.lld", "lld"} {
		k.add("linker", ld, s.tools.digest(filepath.Join(dir, ld)))
	}
}

// normalizedDigest hashes a file with every temporary path of olds
// replaced by its role; it fails if another temporary path remains.
func normalizedDigest(path string, olds []string, repl map[string]string, temp string) (Sum, bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Sum{}, false
	}
	for _, p := range olds {
		data = bytes.ReplaceAll(data, []byte(p), []byte(repl[p]))
	}
	if bytes.Contains(data, []byte(temp)) {
		return Sum{}, false
	}
	return sha256.Sum256(data), true
}

// offloadInfo returns the digest of the OpenMP offload entries of the host
// IR file path (whose bytes have digest sum), by llvm-dis beside clang,
// memoised in the build and in the store by the bytes' digest and
// llvm-dis's; "" when it cannot be had (the caller keys the bytes).
func (s *Session) offloadInfo(clang string, sum Sum, path string) string {
	dis := filepath.Join(filepath.Dir(clang), "llvm-dis")
	memo := Sum(sha256.Sum256([]byte(fmt.Sprintf("offcc derived v1\n%s\nllvm-dis %s\nbitcode %s\n", ompinfo.Version, s.tools.digest(dis), sum))))
	s.mu.Lock()
	once := s.derived[memo]
	if once == nil {
		once = &derivedDigest{}
		s.derived[memo] = once
	}
	s.mu.Unlock()
	once.Do(func() {
		if e, err := s.store.Get(memo); err == nil && e.Kind == KindDerived {
			once.value = string(e.Record)
			return
		}
		// llvm-dis reads the file, which a hit may have left in memory.
		if s.Flush() != nil {
			return
		}
		d, err := ompinfo.Digest(context.Background(), dis, path)
		if err != nil {
			return
		}
		once.value = d
		if s.c.Writable() {
			s.store.Put(memo, &Entry{Kind: KindDerived, Record: []byte(d)})
		}
	})
	return once.value
}

// derivedDigest is a digest computed once per build.
type derivedDigest struct {
	sync.Once
	value string
}

// exists reports whether a path exists (for shadowing checks).
func exists(p string) bool {
	var st syscall.Stat_t
	for {
		err := syscall.Lstat(p, &st)
		if err != syscall.EINTR {
			return err == nil
		}
	}
}

// pathProbes memoises, for one build, the shadowing checks of its lookups
// (see Session.present): the headers five device compiles read are looked
// up in the same directories, most of which do not exist.
type pathProbes struct {
	mu    sync.Mutex
	dirs  map[string]bool // a directory (or other file) that lstat finds
	paths map[string]bool
}

// present reports whether p exists (lstat finds it), as the build first
// saw it, as the headers' digests are (fileDigests). A path whose
// directory lstat does not find does not exist: its lookup would fail at
// the same name (or earlier), so the directory answers for all its
// entries, one lstat for the tens of names probed in a missing include
// directory.
func (pp *pathProbes) present(p string) bool {
	pp.mu.Lock()
	defer pp.mu.Unlock()
	if pp.dirs == nil {
		pp.paths, pp.dirs = map[string]bool{}, map[string]bool{}
	}
	// (The directory as a prefix of p: what the lookup of p walks first.)
	if i := strings.LastIndexByte(p, '/'); i > 0 {
		d := p[:i]
		there, ok := pp.dirs[d]
		if !ok {
			there = exists(d)
			pp.dirs[d] = there
		}
		if !there {
			return false
		}
	}
	v, ok := pp.paths[p]
	if !ok {
		v = exists(p)
		pp.paths[p] = v
	}
	return v
}
