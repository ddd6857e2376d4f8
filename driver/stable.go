package driver

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/offcc/offcc/actions"
	"github.com/offcc/offcc/options"
	"github.com/offcc/offcc/toolchain"
)

// Stable OpenMP kernel names: one identity per translation unit.
//
// clang names an OpenMP kernel (and each offload entry) after the file its
// target region is in: __omp_offloading_<dev>_<file>_<function>_l<line>.
// When the file exists, <dev> and <file> are the file's device and inode
// numbers, so two checkouts of the same code give different objects, and
// one file compiled twice with different macros gives one name to two
// different kernels. When the name clang knows the file by does not exist
// on disk, clang 21 and later take a hash of that name instead, with
// device 0xdeadf17e.
//
// offcc compiles every OpenMP front end (the host's and each device's)
// with "-working-directory W" (W is offcc's working directory), run in an
// empty directory of its own: clang finds each file through W as usual,
// while the relative name it knows the file by names nothing from where
// the process runs, so kernel names come from names alone. Each name the
// command gives relatively (the source, its include directories) is
// given to clang behind a prefix made of "." and "/" only, which names the
// same directory but spells the translation unit's identity: a digest of
// the source's place (its canonical path relative to the base directory
// when it lies under it, else absolute) and of the command's semantic
// options (what clang's CUID hashes, less outputs and offcc's own options,
// with the files and directories read by their places). Computed once per source, it is the
// same for the host and every device. Two different sources, or one
// source under different macros or options, never share a kernel name;
// the same tree under the same options gives the same names in every
// checkout under a base directory (see rebase.go, which has made the
// command's paths under it relative before this).
//
// A source named by an absolute path is given as the prefix followed by
// its path relative to W. Headers found through absolute include
// directories keep clang's inode names (they are unique).
//
// What clang prints and writes about the files it names by the prefixed
// names is renamed back: -fmacro-prefix-map and -fdebug-prefix-map give
// __FILE__, the debug information and OpenMP's source locations the
// user's names, -fsanitize-undefined-strip-path-components strips the
// prefix from UBSan's, and offcc renames files in diagnostics and
// dependency files (actions.NameMap).

// stableDepth is how deep below the build's temporary directory the empty
// directory OpenMP front ends run in lies at least: a relative name would
// have to climb further than this to reach a file from there (names that
// climb further get a deeper one).
const stableDepth = 12

// identityBits is how many bits of a translation unit's digest its
// prefix spells (clang's file IDs have 32).
const identityBits = 32

// stableNames says how offcc names OpenMP kernels for one command line.
type stableNames struct {
	// tables are the option tables of the front ends' release.
	tables *options.Tables
	// cwd is offcc's working directory, absolute and clean.
	cwd string
	// base is the base directory, absolute and clean, or "".
	base string
	// runDir is the empty directory front ends run in.
	runDir string
	// options are the command's semantic options, rendered (see
	// semanticOptions).
	options []string
	// wd is the working directory front ends are given (see stabilize).
	wd string
}

// stableRunDir returns the empty directory below tempDir, depth levels
// deep, that stable OpenMP front ends run in.
func stableRunDir(tempDir string, depth int) string {
	return filepath.Join(append([]string{tempDir, "stable-names"}, slices.Repeat([]string{"d"}, depth-1)...)...)
}

// semanticOptions returns what of a command line decides its translation
// units' code, for their identity: every argument clang's CUID hashes
// (rendered as clang renders it) but the inputs, the files and
// directories written, the dependency-file options, those that only
// change how clang prints and those that choose devices; a file or
// directory read is there by its place (see place), not its spelling,
// so that the working directory does not matter.
func (s stableNames) semanticOptions(args []*options.Arg) []string {
	var out []string
	for _, a := range args {
		if a.IsInput() {
			continue
		}
		switch a.Option.Value {
		case options.WriteFile, options.WriteDir:
			continue
		case options.ReadFile, options.SearchDir:
			if len(a.Values) == 1 && a.Value() != "" {
				out = append(out, a.Option.ID+" "+s.place(a.Value()))
				continue
			}
		}
		switch a.Option.ID {
		case "M", "MM", "MD", "MMD", "MG", "MP", "MT", "MQ", "MV", "dumpdir",
			"_HASH_HASH_HASH", "ccc_print_bindings", "ccc_print_phases", "v",
			"fcolor_diagnostics", "fno_color_diagnostics", "fdiagnostics_color_EQ",
			// Which devices get images: each image is the same whichever
			// others there are, so adding one reruns only its compile.
			"offload_arch_EQ", "no_offload_arch_EQ", "fopenmp_targets_EQ", "offload_targets_EQ":
			continue
		case "Xopenmp_target", "Xopenmp_target_EQ", "Xarch__", "Xarch_device":
			if v := a.Values[len(a.Values)-1]; strings.HasPrefix(v, "--offload-arch=") || strings.HasPrefix(v, "-march=") || strings.HasPrefix(v, "--cuda-gpu-arch=") {
				continue
			}
		}
		out = append(out, a.Typed().String())
	}
	return out
}

// place returns where the file or directory p (relative to the working
// directory, or absolute) lies, for an identity: its canonical path
// relative to the base directory when it lies under it, else its
// canonical absolute path.
func (s stableNames) place(p string) string {
	if !filepath.IsAbs(p) {
		p = filepath.Join(s.cwd, p)
	}
	p = canonical(filepath.Clean(p))
	if s.base != "" {
		base := canonical(s.base)
		if under(p, base) {
			rel, _ := filepath.Rel(base, p)
			return "base:" + rel
		}
	}
	return p
}

// canonical returns p with its symbolic links resolved, or p when that
// fails.
func canonical(p string) string {
	if real, err := filepath.EvalSymlinks(p); err == nil {
		return real
	}
	return p
}

// prefix returns the spelling of the identity of the translation unit of
// source: one "." then one to four "/" for each two bits of its digest,
// then a last "." (see the prefixes of rewrite).
func (s stableNames) prefix(source string) string {
	h := sha256.New()
	fmt.Fprintf(h, "offcc translation unit v1\x00%s\x00", s.place(source))
	for _, o := range s.options {
		fmt.Fprintf(h, "%s\x00", o)
	}
	sum := h.Sum(nil)
	var b strings.Builder
	for i := 0; i < identityBits/2; i++ {
		digit := sum[i/4] >> (2 * (i % 4)) & 3
		b.WriteByte('.')
		b.WriteString(strings.Repeat("/", int(digit)+1))
	}
	b.WriteByte('.')
	return b.String()
}

// prefixComponents is how many path components a prefix has.
const prefixComponents = identityBits/2 + 1

// stableFrontEnd is the rewrite of one OpenMP front end.
type stableFrontEnd struct {
	a       *actions.Action
	command []string
	names   actions.NameMap
	// climb is how many directories the names clang is given climb
	// ("..") from the working directory.
	climb int
}

// isOpenMPFrontEnd reports whether a is an OpenMP compile whose kernel
// names clang derives from its files: the host front end or a device
// compile.
func isOpenMPFrontEnd(a *actions.Action) bool {
	return a.Offload == actions.OpenMP && (a.Kind == actions.HostFrontend || a.Kind == actions.DeviceCompile) &&
		len(a.Command) > 1 && a.Command[1] == "-cc1"
}

// stabilize rewrites every OpenMP front end of g for stable kernel names
// (see above), running them in a directory below tempDir. All of them
// change or none do, since the host and the devices must agree on each
// name; it returns why none did, or "".
func (s stableNames) stabilize(g *actions.Graph, tempDir string) string {
	var out []stableFrontEnd
	climb := 0
	// Every front end runs in one W: offcc's working directory, or "/"
	// when none names a file relatively, so that the names do not depend
	// on where the command runs.
	s.wd = "/"
	for _, a := range g.Actions {
		if isOpenMPFrontEnd(a) && namesRelatively(orNewest(s.tables), a.Command, s.cwd) {
			s.wd = s.cwd
		}
	}
	// Each source's identity, computed once for its host and devices.
	bodies := map[string]string{}
	for _, a := range g.Actions {
		if !isOpenMPFrontEnd(a) {
			continue
		}
		input := a.Command[len(a.Command)-1]
		if _, ok := bodies[input]; !ok {
			bodies[input] = s.prefix(input)
		}
		fe, why := s.rewrite(a, bodies[input])
		if why != "" {
			return why
		}
		out = append(out, fe)
		climb = max(climb, fe.climb)
	}
	if s.runDir == "" {
		s.runDir = stableRunDir(tempDir, max(stableDepth, climb+1))
	}
	for _, fe := range out {
		fe.a.Command = fe.command
		fe.a.Dir = s.runDir
		fe.a.FileNames = fe.names
	}
	return ""
}

// namingOptions are the cc1 options whose values clang finds files
// through by name (the header search), so that the names reach kernel
// names, __FILE__, diagnostics and dependency files: relative ones get
// the translation unit's prefix.
var namingOptions = map[string]bool{
	"I": true, "iquote": true, "isystem": true, "idirafter": true, "c_isystem": true,
	"cxx_isystem": true, "objc_isystem": true, "objcxx_isystem": true, "isystem_after": true,
	"embed_dir_EQ": true, "include": true, "imacros": true,
}

// prefixMaps are the cc1 options that map the prefixes of file names in
// what clang writes.
var prefixMaps = map[string]bool{
	"fdebug_prefix_map_EQ": true, "fmacro_prefix_map_EQ": true, "fcoverage_prefix_map_EQ": true,
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

// under reports whether the clean absolute path p is dir or lies in it.
func under(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, dir+"/") || dir == "/"
}

// climbs returns how many leading ".." a clean relative path has.
func climbs(rel string) int {
	n := 0
	for rel == ".." || strings.HasPrefix(rel, "../") {
		n++
		rel = strings.TrimPrefix(strings.TrimPrefix(rel, ".."), "/")
	}
	return n
}

// namesRelatively reports whether an OpenMP front end names its source,
// or a directory or file of its naming options (see namingOptions),
// relatively; a forced include not in dir is clang's own.
func namesRelatively(tables *options.Tables, argv []string, dir string) bool {
	n := len(argv)
	if n < 5 || !filepath.IsAbs(argv[n-1]) {
		return true
	}
	args, _ := tables.ClangCC1().Parse(argv[2 : n-3])
	for _, a := range args {
		v := a.Value()
		switch {
		case !namingOptions[a.Option.ID] || filepath.IsAbs(v):
		case (a.Option.ID == "include" || a.Option.ID == "imacros") && !exists(filepath.Join(dir, v)):
		default:
			return true
		}
	}
	return false
}

// rewrite returns a's command for stable names, with body its source's
// prefix, or why it cannot have them.
func (s stableNames) rewrite(a *actions.Action, body string) (stableFrontEnd, string) {
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
	args, err := orNewest(s.tables).ClangCC1().Parse(argv[2 : n-3])
	if err != nil {
		return fe, err.Error()
	}
	// The names clang is given, behind the translation unit's prefix P
	// (ending with "."): P + "//" + the user's relative names; P + "///"
	// + the directory of a source named absolutely, relative to the
	// working directory, + "/" + its name. clang names a file it finds
	// beside a source given without a directory "./<name>": here P +
	// "/<name>".
	prefix, beside, absolute := body+"//", body+"/", body+"///"
	// name returns how clang is to name a file or directory the user's
	// command names relatively; absolute ones stay.
	name := func(p string) string {
		if filepath.IsAbs(p) {
			return p
		}
		fe.climb = max(fe.climb, climbs(filepath.Clean(p)))
		return prefix + p
	}
	// inWorkDir returns a path clang opens from the process's directory.
	inWorkDir := func(p string) string {
		if p == "" || filepath.IsAbs(p) || p == "-" {
			return p
		}
		return filepath.Join(s.cwd, p)
	}
	// The renames, most specific first. clang strips a leading run of
	// "./" and "/" from the names it writes in dependency files (and
	// from the main file's name in the debug information): there a
	// source named absolutely is named relative to the working
	// directory, and stripped renames it.
	inputName := name(input)
	var renames, stripped []actions.NameRule
	var debugMaps []string
	wd := s.wd
	wdSlash := strings.TrimSuffix(wd, "/") + "/"
	if filepath.IsAbs(input) {
		rel, err := filepath.Rel(wd, filepath.Clean(input))
		if err != nil {
			return fe, err.Error()
		}
		fe.climb = max(fe.climb, climbs(rel))
		relDir, dir := filepath.Dir(rel), filepath.Dir(filepath.Clean(input))
		inputName = absolute + relDir + "/" + filepath.Base(rel)
		renames = append(renames, actions.NameRule{From: absolute + relDir, To: strings.TrimSuffix(dir, "/")})
		if relDir == "." {
			// (An empty From renames relative names only.)
			stripped = append(stripped, actions.NameRule{From: "", To: wdSlash})
			debugMaps = append(debugMaps, "="+wdSlash, "/=/")
		} else {
			stripped = append(stripped, actions.NameRule{From: relDir + "/", To: strings.TrimSuffix(dir, "/") + "/"})
			debugMaps = append(debugMaps, relDir+"="+dir)
		}
	}
	renames = append(renames, actions.NameRule{From: prefix, To: ""}, actions.NameRule{From: beside, To: "./"})
	fe.names = slices.Concat(renames, stripped)
	// The debug information names the directory of files found beside
	// a source given without a directory: P, clang's ".".
	debugMaps = append(debugMaps, body+"=.")
	for i := len(renames) - 1; i >= 0; i-- {
		debugMaps = append(debugMaps, renames[i].From+"="+renames[i].To)
	}

	cmd := append([]string(nil), argv[:2]...)
	// __FILE__ and the debug information name the files as the user's
	// command does: -fdebug-prefix-map takes the last match, so offcc's
	// maps come first and the user's after them; -fmacro-prefix-map the
	// longest prefix, and the user's relative ones are given again
	// behind the prefix.
	for _, m := range debugMaps {
		cmd = append(cmd, "-fdebug-prefix-map="+m)
	}
	ubsanSet := false
	for _, arg := range args {
		words := arg.Words(argv[2:])
		id := arg.Option.ID
		if why, ok := refusedOptions[id]; ok {
			return fe, why
		}
		switch {
		case arg.IsUnknown() || arg.IsInput():
			return fe, fmt.Sprintf("the compile has an argument offcc cannot read: %s", arg.Value())
		case (id == "include" || id == "imacros") && !filepath.IsAbs(arg.Value()) && !exists(filepath.Join(s.cwd, arg.Value())):
			// clang looks a relative forced include up in the working
			// directory, then in the include path: not in the working
			// directory, it is left for the include path (clang's own
			// -include __clang_openmp_device_functions.h).
		case namingOptions[id]:
			words = replaceValue(arg, words, name(arg.Value()))
		case prefixMaps[id]:
			// The user's map, and for a relative prefix the same map
			// of the names clang now has.
			if old, new, ok := strings.Cut(arg.Value(), "="); ok && old != "" {
				words = slices.Clone(words)
				for _, m := range userMapOfNames(renames, old, new) {
					words = append(words, arg.Spelling+m)
				}
			}
		case id == "fsanitize_undefined_strip_path_components_EQ":
			// UBSan's file names lose the prefix's components too.
			if k, err := strconv.Atoi(arg.Value()); err == nil && k >= 0 {
				words = []string{arg.Spelling + strconv.Itoa(k+prefixComponents)}
				ubsanSet = true
			} else {
				ubsanSet = true // (kept as the user gave it)
			}
		default:
			switch arg.Option.Value {
			case options.ReadFile, options.WriteFile, options.SearchDir, options.WriteDir:
				if len(arg.Values) != 1 {
					return fe, fmt.Sprintf("%s takes %d values", arg.Spelling, len(arg.Values))
				}
				words = replaceValue(arg, words, inWorkDir(arg.Value()))
			}
		}
		cmd = append(cmd, words...)
	}
	for _, r := range renames {
		cmd = append(cmd, "-fmacro-prefix-map="+r.From+"="+r.To)
	}
	if !ubsanSet {
		cmd = append(cmd, fmt.Sprintf("-fsanitize-undefined-strip-path-components=%d", prefixComponents))
	}
	cmd = append(cmd, "-working-directory", wd, "-x", lang, inputName)
	fe.command = cmd
	return fe, ""
}

// userMapOfNames returns the user's map of the prefix old to new as maps
// of the names clang has for the files (see rewrite): a rename's From
// followed by X names what clang would name its To followed by X.
func userMapOfNames(renames []actions.NameRule, old, new string) []string {
	var out []string
	for _, r := range renames {
		switch {
		case r.To == "" && filepath.IsAbs(old):
		case strings.HasPrefix(old, r.To):
			out = append(out, r.From+old[len(r.To):]+"="+new)
		case strings.HasPrefix(r.To, old):
			out = append(out, r.From+"="+new+r.To[len(old):])
		}
	}
	return out
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
// unless --no-offload-stable-names asks for clang's; where it cannot (the
// release's clang cannot, see toolchain.Profile.StableNames), the plan
// keeps clang's names and -v says why.
func (inv *Invocation) stabilize(plan *Plan, opts *Options, release *toolchain.Profile, tempDir string) {
	if opts.ClangKernelNames {
		return
	}
	why := ""
	s := stableNames{base: inv.baseDir(), tables: opts.tables()}
	cwd, err := os.Getwd()
	switch {
	case err != nil:
		why = fmt.Sprintf("cannot find the working directory: %v", err)
	case !release.StableNames:
		if opts.Verbose {
			inv.inodeNamesNote(release)
		}
		return
	default:
		s.cwd = filepath.Clean(cwd)
		s.options = s.semanticOptions(opts.Args)
		why = s.stabilize(plan.Graph, tempDir)
	}
	if why != "" && opts.Verbose {
		fmt.Fprintf(inv.Stderr, "%s: note: OpenMP kernels keep clang's names (after the source files' inodes): %s\n", inv.prog(), why)
	}
}

// inodeNamesNote says, under -v, that a release's OpenMP kernels keep
// clang's names, as it cannot give stable ones.
func (inv *Invocation) inodeNamesNote(release *toolchain.Profile) {
	fmt.Fprintf(inv.Stderr, "%s: note: OpenMP kernels keep clang's names (after the source files' inodes): clang %d names kernels only after inodes (it stops with \"Unable to get unique ID\" on a source it cannot find; clang 21 and later hash the names of such files)\n", inv.prog(), release.Major)
}

// exists reports whether a file exists.
func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
