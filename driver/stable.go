package driver

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/offcc/offcc/actions"
	"github.com/offcc/offcc/options"
)

// Stable OpenMP kernel names.
//
// clang names an OpenMP kernel (and each offload entry) after the file its
// target region is in: __omp_offloading_<dev>_<file>_<function>_l<line>.
// When the file exists, <dev> and <file> are the file's device and inode
// numbers, so two checkouts of the same code give different objects. When
// the name clang knows the file by does not exist on disk, clang 21 and
// later take a hash of that name instead, with device 0xdeadf17e.
//
// offcc compiles every OpenMP front end (the host's and each device's)
// with "-working-directory W", run in an empty directory of its own: clang
// finds each file through the working directory as usual, while the
// relative name it knows the file by names nothing from where the process
// runs, so the kernel names come from the relative names alone. Files
// named by absolute paths keep clang's inode names.
//
// W is offcc's working directory when the command names its sources and
// include directories relatively (the names are those of the command
// line, and everything clang prints is exactly what it prints without
// offcc). When the command names them by absolute paths under
// OFFCC_BASE_DIR (as CMake does), W is the base directory and those paths
// are given to clang relative to it, as ccache's base_dir does;
// -fmacro-prefix-map and -fdebug-prefix-map then give __FILE__ and the
// debug information the absolute paths back, and offcc writes them back
// into diagnostics and dependency files.

// stableNamesMinClang is the first clang major version that hashes the
// name of a file it cannot find (LLVM PR 131646); older ones stop with
// "Unable to get unique ID".
const stableNamesMinClang = 21

// stableDepth is how deep below the build's temporary directory the empty
// directory OpenMP front ends run in lies: a relative name would have to
// climb further than this to reach a file from there.
const stableDepth = 12

// stableNames says how offcc names OpenMP kernels for one command line.
type stableNames struct {
	// cwd is offcc's working directory, absolute and clean.
	cwd string
	// base is OFFCC_BASE_DIR, absolute and clean, or "".
	base string
	// runDir is the empty directory front ends run in.
	runDir string
}

// stableRunDir returns the empty directory below tempDir that stable
// OpenMP front ends run in.
func stableRunDir(tempDir string) string {
	return filepath.Join(append([]string{tempDir, "stable-names"}, slices.Repeat([]string{"d"}, stableDepth-1)...)...)
}

// clangMajor returns the major version in clang's version header line
// ("Debian clang version 22.1.8 (...)"), or 0.
func clangMajor(header []string) int {
	for _, line := range header {
		if m := clangVersionRE.FindStringSubmatch(line); m != nil {
			n, _ := strconv.Atoi(m[1])
			return n
		}
	}
	return 0
}

var clangVersionRE = regexp.MustCompile(`clang version (\d+)\.`)

// stableFrontEnd is the rewrite of one OpenMP front end.
type stableFrontEnd struct {
	a       *actions.Action
	command []string
	// diagDir is set when clang sees paths relative to the base directory
	// the user gave as absolute: diagnostics and dependency files name
	// them joined to it.
	diagDir string
}

// isOpenMPFrontEnd reports whether a is an OpenMP compile whose kernel
// names clang derives from its files: the host front end or a device
// compile.
func isOpenMPFrontEnd(a *actions.Action) bool {
	return a.Offload == actions.OpenMP && (a.Kind == actions.HostFrontend || a.Kind == actions.DeviceCompile) &&
		len(a.Command) > 1 && a.Command[1] == "-cc1"
}

// stabilize rewrites every OpenMP front end of g for stable kernel names
// (see above). All of them change or none do, since the host and the
// devices must agree on each name; it returns why none did, or "".
func (s stableNames) stabilize(g *actions.Graph) string {
	var fes []*actions.Action
	for _, a := range g.Actions {
		if isOpenMPFrontEnd(a) {
			fes = append(fes, a)
		}
	}
	if len(fes) == 0 {
		return ""
	}
	// The base directory applies when a front end names a source or an
	// include directory by an absolute path under it.
	useBase := false
	if s.base != "" {
		for _, a := range fes {
			for _, p := range namingPaths(a.Command) {
				if filepath.IsAbs(p) && under(filepath.Clean(p), s.base) {
					useBase = true
				}
			}
		}
	}
	var out []stableFrontEnd
	for _, a := range fes {
		fe, why := s.rewrite(a, useBase)
		if why != "" {
			return why
		}
		out = append(out, fe)
	}
	for _, fe := range out {
		fe.a.Command = fe.command
		fe.a.Dir = s.runDir
		fe.a.DiagnosticDir = fe.diagDir
	}
	return ""
}

// namingOptions are the cc1 options whose values clang finds files
// through by name (the header search), so that the names reach kernel
// names, __FILE__, diagnostics and dependency files: they stay relative.
var namingOptions = map[string]bool{
	"I": true, "iquote": true, "isystem": true, "idirafter": true, "c_isystem": true,
	"cxx_isystem": true, "objc_isystem": true, "objcxx_isystem": true, "isystem_after": true,
	"embed_dir_EQ": true, "include": true, "imacros": true,
}

// refusedOptions are cc1 options under which offcc does not rewrite a
// front end: they give files other names (or read them from elsewhere) in
// ways the rewrite does not model.
var refusedOptions = map[string]string{
	"working_directory":     "the command sets -working-directory itself",
	"remap_file":            "-remap-file",
	"ivfsoverlay":           "a VFS overlay",
	"vfsoverlay":            "a VFS overlay",
	"include_pch":           "a precompiled header",
	"chain_include":         "a precompiled header",
	"fmodule_file":          "clang modules",
	"fmodule_map_file":      "clang modules",
	"fmodules":              "clang modules",
	"fprebuilt_module_path": "clang modules",
	"iprefix":               "-iprefix",
	"iwithprefix":           "-iprefix",
	"iwithprefixbefore":     "-iprefix",
	"iwithsysroot":          "sysroot-relative include directories",
	"isysroot":              "sysroot-relative include directories",
}

// namingPaths returns the source and the naming options' values of a
// cc1 command.
func namingPaths(argv []string) []string {
	n := len(argv)
	if n < 5 || argv[n-3] != "-x" {
		return nil
	}
	paths := []string{argv[n-1]}
	args, err := options.ClangCC1().Parse(argv[2 : n-3])
	if err != nil {
		return paths
	}
	for _, a := range args {
		if namingOptions[a.Option.ID] {
			paths = append(paths, a.Value())
		}
	}
	return paths
}

// under reports whether the clean absolute path p is dir or lies in it.
func under(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, dir+"/") || dir == "/"
}

// rewrite returns a's command for stable names, or why it cannot have
// them.
func (s stableNames) rewrite(a *actions.Action, useBase bool) (stableFrontEnd, string) {
	fe := stableFrontEnd{a: a}
	argv := a.Command
	n := len(argv)
	if n < 5 || argv[n-3] != "-x" {
		return fe, "the compile does not end with -x <language> <input>"
	}
	lang, input := argv[n-2], argv[n-1]
	if lang == "ir" || strings.HasSuffix(lang, "cpp-output") || lang == "assembler" {
		return fe, "a front end compiles preprocessed input (-save-temps)"
	}
	if input == "-" {
		return fe, "the source is standard input"
	}
	wd := s.cwd
	if useBase {
		wd = s.base
		fe.diagDir = s.base
	}
	// name returns how clang is to name a file or directory of the
	// header search.
	name := func(p string) string {
		if !useBase {
			return p
		}
		abs := p
		if !filepath.IsAbs(abs) {
			abs = filepath.Join(s.cwd, abs)
		}
		abs = filepath.Clean(abs)
		if under(abs, s.base) {
			rel, err := filepath.Rel(s.base, abs)
			if err == nil {
				return rel
			}
		}
		return abs
	}
	// absolute returns a path clang opens from the process's directory.
	absolute := func(p string) string {
		if p == "" || filepath.IsAbs(p) || p == "-" {
			return p
		}
		return filepath.Join(s.cwd, p)
	}
	args, err := options.ClangCC1().Parse(argv[2 : n-3])
	if err != nil {
		return fe, err.Error()
	}
	cmd := append([]string(nil), argv[:2]...)
	// The user's maps of paths under the base directory, for the names
	// clang now has for them.
	userMaps := map[int]string{}
	baseMap := map[int]bool{}
	if useBase {
		for i, arg := range args {
			id := arg.Option.ID
			if id != "fdebug_prefix_map_EQ" && id != "fmacro_prefix_map_EQ" {
				continue
			}
			old, new, ok := strings.Cut(arg.Value(), "=")
			if !ok || !filepath.IsAbs(old) || !under(filepath.Clean(old), s.base) {
				continue
			}
			from := name(old)
			switch {
			case from == ".":
				// The base directory itself: clang's path goes on with
				// "/" unless the map's prefix ended with one.
				from = ""
				if !strings.HasSuffix(old, "/") {
					new += "/"
				}
				baseMap[i] = id == "fdebug_prefix_map_EQ"
			case strings.HasSuffix(old, "/"):
				from += "/"
			}
			userMaps[i] = arg.Spelling + from + "=" + new
		}
		// The debug information and __FILE__ name the files the user
		// named: clang's relative names map back under the base
		// directory, absolute ones stay ("/" maps to itself). The
		// user's maps win: -fdebug-prefix-map takes the last match, so
		// ours come first; -fmacro-prefix-map the longest prefix, the
		// first given of equal ones, so ours come last.
		cmd = append(cmd, "-fdebug-prefix-map="+"="+s.base+"/", "-fdebug-prefix-map=/=/")
	}
	// absMaps are the user's -fdebug-prefix-map words of absolute paths
	// so far.
	var absMaps []string
	for i, arg := range args {
		words := arg.Words(argv[2:])
		id := arg.Option.ID
		if why, ok := refusedOptions[id]; ok {
			return fe, why
		}
		switch {
		case arg.IsUnknown() || arg.IsInput():
			return fe, fmt.Sprintf("the compile has an argument offcc cannot read: %s", arg.Value())
		case (id == "include" || id == "imacros") && useBase && !filepath.IsAbs(arg.Value()) && !exists(filepath.Join(s.cwd, arg.Value())):
			// clang looks a relative forced include up in the working
			// directory, then in the include path: not in the working
			// directory, it is left for the include path (clang's own
			// -include __clang_openmp_device_functions.h).
		case namingOptions[id]:
			words = replaceValue(arg, words, name(arg.Value()))
		case id == "o":
			if useBase {
				words = replaceValue(arg, words, absolute(arg.Value()))
			}
		case userMaps[i] != "":
			// The map stays for the absolute paths clang still sees
			// (the compilation directory), and maps the relative names.
			if id == "fdebug_prefix_map_EQ" {
				absMaps = append(absMaps, words...)
			}
			words = append(slices.Clone(words), userMaps[i])
			if baseMap[i] {
				// A map of every relative name, which would match
				// absolute ones too: "/" maps to itself after it, and
				// the user's maps of absolute paths so far again.
				words = append(append(words, "-fdebug-prefix-map=/=/"), absMaps...)
			}
		case useBase && id == "fdebug_prefix_map_EQ":
			absMaps = append(absMaps, words...)
		default:
			switch arg.Option.Value {
			case options.ReadFile, options.WriteFile, options.SearchDir, options.WriteDir:
				if len(arg.Values) != 1 {
					return fe, fmt.Sprintf("%s takes %d values", arg.Spelling, len(arg.Values))
				}
				words = replaceValue(arg, words, absolute(arg.Value()))
			}
		}
		cmd = append(cmd, words...)
	}
	if useBase {
		cmd = append(cmd, "-fmacro-prefix-map=/=/", "-fmacro-prefix-map="+"="+s.base+"/")
	}
	cmd = append(cmd, "-working-directory", wd, "-x", lang, name(input))
	fe.command = cmd
	return fe, ""
}

// replaceValue returns the words of arg with its one value replaced.
func replaceValue(arg *options.Arg, words []string, v string) []string {
	if arg.Value() == v {
		return words
	}
	out := append([]string(nil), words...)
	last := len(out) - 1
	out[last] = strings.TrimSuffix(out[last], arg.Value()) + v
	return out
}

// stabilize gives the OpenMP front ends of plan stable kernel names
// unless --no-offload-stable-names asks for clang's; where it cannot, the
// plan keeps clang's names and -v says why.
func (inv *Invocation) stabilize(plan *Plan, opts *Options, header []string, tempDir string) {
	if opts.ClangKernelNames {
		return
	}
	why := ""
	s := stableNames{runDir: stableRunDir(tempDir)}
	cwd, err := os.Getwd()
	switch {
	case err != nil:
		why = fmt.Sprintf("cannot find the working directory: %v", err)
	case clangMajor(header) < stableNamesMinClang:
		why = fmt.Sprintf("clang %d names kernels only after inodes (clang %d and later hash the names of files they cannot find)", clangMajor(header), stableNamesMinClang)
	default:
		s.cwd = filepath.Clean(cwd)
		if base := inv.getenv("OFFCC_BASE_DIR"); base != "" {
			if abs, err := filepath.Abs(base); err == nil && base != "/" {
				s.base = filepath.Clean(abs)
			}
		}
		why = s.stabilize(plan.Graph)
	}
	if why != "" && opts.Verbose {
		fmt.Fprintf(inv.Stderr, "%s: note: OpenMP kernels keep clang's names (after the source files' inodes): %s\n", inv.prog(), why)
	}
}

// exists reports whether a file exists.
func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
