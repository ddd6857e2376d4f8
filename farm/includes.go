package farm

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/offcc/offcc/cache"
	"github.com/offcc/offcc/options"
)

// IncludeScanner finds, without running clang, a superset of the files a
// clang -cc1 compile can read through its preprocessor: the main input, the
// forced includes, and every file any #include, #include_next, #import,
// #embed, __has_include, __has_include_next or __has_embed in them could
// name, looked up in every directory clang could look in (the includer's,
// the main file's, every -iquote and system/-I directory, the --embed-dir
// ones), whatever the macros and the conditionals. Like distcc-pump's
// include server it reads only directives, so it is much cheaper than a
// clang preprocessor run, and it says when it cannot promise a superset
// (a computed include, an option it does not model), so that the caller
// can fall back to clang's own dependency scan.
//
// An IncludeScanner is safe for concurrent use; it memoises each header's
// directives by path (and its size, mtime, ctime and inode) for its
// lifetime, and the listings of the directories it searches, so that a
// scan whose headers it has seen costs little more than a stat of each.
type IncludeScanner struct {
	mu   sync.Mutex
	memo map[string]*inclHeader // by clean path
	dirs map[string]*inclDir    // by path as searched
}

// inclHeader is what the scanner remembers of a file: what it refers to
// and the stat it was read under.
type inclHeader struct {
	stamp cache.FileStat
	// stable is set when the file had not changed for inclRacy before it
	// was read, so that a later change must show in its stamp: a file
	// changed just before (or while) it was read is read again next time,
	// as a coarse timestamp might not show a change made in the same tick.
	stable bool
	parsed *inclParsed
}

// inclRacy is how long a file (or directory) must have been left alone
// before what the scanner read of it is trusted while its stamp stays the
// same (ccache's inode cache and cache.FileStat use 2 s too). A variable
// for tests.
var inclRacy = 2 * time.Second

// inclRef is one file name a header refers to.
type inclRef struct {
	name   string
	angled bool // <name>, searched for in the system/-I directories only
	embed  bool // #embed or __has_embed: data, looked up but not scanned
}

// NewIncludeScanner returns an IncludeScanner with an empty memo.
func NewIncludeScanner() *IncludeScanner {
	return &IncludeScanner{memo: map[string]*inclHeader{}, dirs: map[string]*inclDir{}}
}

// Scan returns the absolute, clean paths of the files the compile whose
// cc1 arguments (argv[1:], starting "-cc1") are args may read through its
// preprocessor, run in directory cwd: its main input (the last argument,
// which must follow -x LANG, as in every cc1 line clang's driver writes),
// forced includes (-include, -imacros, OpenCL's and HLSL's default headers),
// the extra dependencies clang lists in its dependency file (-fdepfile-entry=,
// sanitizer ignorelists, -fprofile-list=), and every header any #include /
// #include_next / #import / #embed or __has_include / __has_include_next /
// __has_embed could name, resolved against every candidate directory
// (clang's implicit /usr/local/include, <resource-dir>/include and
// /usr/include among them). Files found only through #embed or __has_embed
// are returned but not scanned; missing candidates are skipped.
//
// ok is false (with a reason, and no files) when it cannot promise a
// superset: a computed include (#include MACRO, __has_include(MACRO)), a
// header name it cannot parse, an option it does not model (modules,
// precompiled headers, frameworks, header maps, VFS overlays, -iprefix and
// sysroot-relative directories, MSVC include rules), a forced include it
// cannot find, an unreadable main input, or a path whose ".." crosses a
// symlink, so that it names another file than its clean form.
func (s *IncludeScanner) Scan(args []string, cwd string) (files []string, ok bool, why string) {
	a, why := inclParseArgs(args, cwd)
	if why != "" {
		return nil, false, why
	}
	w := newInclWalk(s, a)
	if why := w.run(); why != "" {
		return nil, false, why
	}
	return w.files, true, ""
}

// inclArgs is what a cc1 line tells the scanner.
type inclArgs struct {
	cwd        string      // the directory relative paths are relative to
	input      string      // the main input, absolute
	preprocess bool        // false for inputs clang does not preprocess (-x ir)
	quoted     []string    // -iquote directories, absolute
	angled     []string    // directories searched for "" and <> names
	embed      []string    // --embed-dir directories
	forced     []string    // -include and -imacros files, which must exist
	implicit   []string    // headers the predefines may include (default headers)
	extra      []string    // other files clang lists in its dependency file
	defs       [][2]string // -D NAME=IDENT
}

// inclUnmodelledPrefixes are the prefixes of the IDs of modules options
// (-fmodules, -fmodule-map-file=, -fmodule-file=, -fprebuilt-module-path=,
// -fapinotes-modules ...), which the scan does not model.
var inclUnmodelledPrefixes = []string{"fmodule", "fprebuilt", "fapinotes"}

// inclIncludePathGroups are the groups of clang's include-path options
// (-I, -i...): one inclParseArgs does not handle is not modelled.
var inclIncludePathGroups = []string{"IncludePath_Group", "clang_i_Group", "i_Group"}

// inclParseArgs reads a cc1 line; why says what it cannot model.
func inclParseArgs(args []string, cwd string) (*inclArgs, string) {
	n := len(args)
	if n < 4 || args[0] != "-cc1" {
		return nil, "not a clang -cc1 command line"
	}
	if args[n-3] != "-x" || args[n-1] == "" || args[n-1] == "-" || strings.HasPrefix(args[n-1], "-") {
		return nil, "the cc1 line does not end with -x LANG FILE"
	}
	a := &inclArgs{}
	switch lang := args[n-2]; lang {
	case "ir":
	default:
		base := lang
		for _, suf := range []string{"-cpp-output", "-header-unit-header", "-system-header", "-user-header", "-header"} {
			if b, ok := strings.CutSuffix(lang, suf); ok {
				base = b
				break
			}
		}
		switch base {
		case "c", "c++", "objective-c", "objective-c++", "cuda", "hip", "cl", "clcpp", "hlsl",
			"assembler-with-cpp", "cpp-output":
			a.preprocess = true
		default:
			return nil, fmt.Sprintf("input language %q is not modelled", lang)
		}
	}
	if cwd == "" || !filepath.IsAbs(cwd) {
		abs, err := filepath.Abs(cwd)
		if err != nil {
			return nil, fmt.Sprintf("working directory: %v", err)
		}
		cwd = abs
	}
	var quoted, angled, embed, forced, extra []string
	var workDir, resourceDir string
	sysroot := "/"
	noStdSys, noBuiltin, defaultHeader := false, false, false
	dir := func(list *[]string, opt, v string) string {
		if strings.HasPrefix(v, "=") || strings.HasPrefix(v, "$SYSROOT") {
			return fmt.Sprintf("sysroot-relative directory %s %s is not modelled", opt, v)
		}
		if v == "" {
			return fmt.Sprintf("empty directory for %s", opt)
		}
		*list = append(*list, v)
		return ""
	}
	// The options, parsed as cc1 parses them, before the final -x LANG
	// FILE: an option there that lacks its value would take them.
	opts := args[1 : n-3]
	parsed, err := options.ClangCC1().Parse(opts)
	var missing *options.MissingValueError
	if errors.As(err, &missing) {
		return nil, fmt.Sprintf("option %s lacks its value", missing.Spelling)
	} else if err != nil {
		return nil, err.Error()
	}
	for _, arg := range parsed {
		o := arg.Option
		// The option as typed, for messages.
		typed := strings.Join(arg.Words(opts), " ")
		var why string
		switch {
		case arg.IsInput():
			return nil, fmt.Sprintf("unexpected positional argument %q (cc1 input not last?)", arg.Value())
		case arg.IsUnknown():
			return nil, fmt.Sprintf("clang -cc1 has no option %s", arg.Value())
		}
		switch o.ID {
		case "include_pch", "chain_include", "ast_merge", "remap_file", "load", "ivfsoverlay", "vfsoverlay",
			"fms_compatibility", "fcxx_modules", "fimplicit_module_maps", "fbuiltin_module_map",
			"F", "I_", "internal_iframework":
			// Precompiled headers and ASTs, remapped files, plugins, VFS
			// overlays, MSVC's header search rules, modules, frameworks
			// and -I- (a driver option: cc1 reads "-I-" as -I with the
			// directory "-"): the scan cannot promise a superset under
			// them.
			return nil, fmt.Sprintf("option %s is not modelled", typed)
		case "I", "isystem", "idirafter", "internal_isystem", "internal_externc_isystem",
			"c_isystem", "cxx_isystem", "objc_isystem", "objcxx_isystem":
			why = dir(&angled, arg.Spelling, arg.Value())
		case "iquote":
			why = dir(&quoted, arg.Spelling, arg.Value())
		case "embed_dir_EQ":
			why = dir(&embed, "--embed-dir", arg.Value())
		case "include", "imacros":
			forced = append(forced, arg.Value())
		case "isysroot":
			sysroot = arg.Value()
		case "working_directory":
			workDir = arg.Value()
		case "resource_dir":
			resourceDir = arg.Value()
		case "D":
			why = inclDefine(a, arg.Value())
		case "nostdsysteminc":
			noStdSys = true
		case "nobuiltininc":
			noBuiltin = true
		case "finclude_default_header":
			defaultHeader = true
		case "fdepfile_entry", "fprofile_list_EQ":
			extra = append(extra, arg.Value())
		case "fsanitize_ignorelist_EQ", "fsanitize_system_ignorelist_EQ":
			// As clang, which lists only values without '='.
			if v := arg.Value(); !strings.Contains(v, "=") {
				extra = append(extra, v)
			}
		case "nostdincxx", "system_header_prefix", "no_system_header_prefix":
			// They remove directories cc1 would add itself, or change
			// which headers are system headers: the scan's
			// directories remain a superset.
		default:
			if inclHasPrefix(o.ID, inclUnmodelledPrefixes) {
				return nil, fmt.Sprintf("option %s is not modelled", typed)
			}
			for _, g := range inclIncludePathGroups {
				if o.InGroup(g) {
					return nil, fmt.Sprintf("option %s is not modelled", typed)
				}
			}
		}
		if why != "" {
			return nil, why
		}
	}
	if workDir != "" {
		cwd = inclJoin(cwd, workDir)
	}
	a.cwd = cwd
	abs := func(list []string) []string {
		out := make([]string, 0, len(list))
		for _, p := range list {
			out = append(out, inclJoin(cwd, p))
		}
		return out
	}
	a.input = inclJoin(cwd, args[n-1])
	a.quoted, a.angled, a.embed, a.extra = abs(quoted), abs(angled), abs(embed), abs(extra)
	a.forced = forced
	// cc1 itself adds these for some targets (amdgcn, nvptx, spirv,
	// bare-metal ones), after the driver's; adding them always is a superset.
	root := strings.TrimSuffix(inclJoin(cwd, sysroot), "/")
	if !noStdSys {
		a.angled = append(a.angled, root+"/usr/local/include")
	}
	if !noBuiltin {
		if resourceDir == "" {
			return nil, "no -resource-dir (cc1 would use its own builtin headers' directory)"
		}
		a.angled = append(a.angled, inclJoin(cwd, resourceDir)+"/include")
	}
	if !noStdSys {
		a.angled = append(a.angled, root+"/usr/include")
	}
	if defaultHeader {
		a.implicit = []string{"opencl-c.h", "opencl-c-base.h", "hlsl.h"}
	}
	return a, ""
}

// inclHasPrefix reports whether s starts with one of prefixes.
func inclHasPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// inclDefine records the value of -D in a when it may define an alias
// of the operators (NAME=IDENT); why is set when it uses them otherwise.
func inclDefine(a *inclArgs, v string) string {
	name, body, _ := strings.Cut(v, "=")
	body = strings.TrimSpace(body)
	ident := body != "" && !strings.ContainsFunc(body, func(r rune) bool { return r >= 0x80 || !inclIdentChars[byte(r)] })
	if ident && body[0] > '9' {
		a.defs = append(a.defs, [2]string{name, body})
		return ""
	}
	if strings.Contains(v, "__has_") {
		return fmt.Sprintf("-D %s uses __has_include or __has_embed", v)
	}
	return ""
}

// inclJoin returns p made absolute against dir without cleaning it (a
// ".." after a symlink is not the same as dropping both).
func inclJoin(dir, p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	if strings.HasSuffix(dir, "/") {
		return dir + p
	}
	return dir + "/" + p
}

// inclStat is a memoised os.Stat.
type inclStat struct {
	fi  os.FileInfo
	err error
}

// inclFile is a file to scan: its path as found and its clean form.
type inclFile struct {
	path, clean string
}

// inclKey identifies the lookups of a reference: its kind, its name and
// what else they depend on.
type inclKey struct {
	kind       byte
	from, name string
}

// inclScanned is a scanned file and what it refers to.
type inclScanned struct {
	f inclFile
	p *inclParsed
}

// inclDir is a directory listing the scanner remembers, with the stamp
// it was read under (see inclHeader for stable).
type inclDir struct {
	stamp  cache.FileStat
	stable bool
	names  map[string]bool
}

// inclListing is a directory's listing as one scan sees it: ok is false
// when the directory cannot be listed (each candidate is then stat'ed);
// names is nil when nothing exists under the path.
type inclListing struct {
	names map[string]bool
	ok    bool
}

// inclWalk is one Scan's state.
type inclWalk struct {
	s        *IncludeScanner
	a        *inclArgs
	stats    map[string]inclStat    // os.Stat by path, for this scan only
	listings map[string]inclListing // directory listings, checked for this scan
	sameDirs map[string]bool        // directories with ".." that are their clean form
	done     map[inclKey]bool       // references already resolved
	files    []string               // the result
	found    map[string]bool        // clean paths in files
	queued   map[string]bool        // clean paths scanned or to scan
	queue    []inclFile
	scanned  []inclScanned // the files scanned, in order
	mainDir  []string      // the main input's directory (as given and clean)
}

// newInclWalk returns the state of a scan of a on s.
func newInclWalk(s *IncludeScanner, a *inclArgs) *inclWalk {
	return &inclWalk{s: s, a: a, stats: map[string]inclStat{}, listings: map[string]inclListing{},
		sameDirs: map[string]bool{}, done: map[inclKey]bool{}, found: map[string]bool{}, queued: map[string]bool{}}
}

// stat is os.Stat, once per path and scan.
func (w *inclWalk) stat(p string) (os.FileInfo, error) {
	st, ok := w.stats[p]
	if !ok {
		st.fi, st.err = os.Stat(p)
		w.stats[p] = st
	}
	return st.fi, st.err
}

// entries returns the listing of directory d for this scan.
func (w *inclWalk) entries(d string) inclListing {
	l, ok := w.listings[d]
	if !ok {
		l = w.s.listing(d, w.stat)
		w.listings[d] = l
	}
	return l
}

// listing returns directory d's names, from the memo when d's stamp says
// it has not changed since (and it was stable then), else by reading it:
// adding, removing or renaming an entry moves a directory's mtime and
// ctime.
func (s *IncludeScanner) listing(d string, stat func(string) (os.FileInfo, error)) inclListing {
	fi, err := stat(d)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			return inclListing{ok: true}
		}
		return inclListing{}
	}
	if !fi.IsDir() {
		return inclListing{ok: true}
	}
	s.mu.Lock()
	c := s.dirs[d]
	s.mu.Unlock()
	stamp := cache.StatOf(fi)
	if c != nil && c.stable && c.stamp == stamp {
		return inclListing{names: c.names, ok: true}
	}
	now := time.Now()
	f, err := os.Open(d)
	if err != nil {
		return inclListing{}
	}
	list, err := f.Readdirnames(-1)
	f.Close()
	if err != nil {
		return inclListing{}
	}
	names := make(map[string]bool, len(list))
	for _, n := range list {
		names[n] = true
	}
	s.mu.Lock()
	s.dirs[d] = &inclDir{stamp: stamp, stable: stamp.Settled(now, inclRacy), names: names}
	s.mu.Unlock()
	return inclListing{names: names, ok: true}
}

// inclCleanName reports whether a relative name has no ".", ".." or empty
// components.
func inclCleanName(name string) bool {
	return name != "" && name != "." && name != ".." && filepath.Clean(name) == name && !strings.HasPrefix(name, "../")
}

// present reports whether name may exist under directory d: false only
// when a listing on the way says it does not.
func (w *inclWalk) present(d, name string) bool {
	for {
		comp, rest, more := strings.Cut(name, "/")
		if comp == "" || comp == "." || comp == ".." {
			return true // let os.Stat decide
		}
		l := w.entries(d)
		if !l.ok {
			return true
		}
		if !l.names[comp] {
			return false
		}
		if !more {
			return true
		}
		d, name = inclJoin(d, comp), rest
	}
}

// sameDir reports whether directory d, which has "..", is the directory
// its clean form names (so that d/name and clean(d)/name are one file).
func (w *inclWalk) sameDir(d string) bool {
	same, ok := w.sameDirs[d]
	if !ok {
		fi, err := w.stat(d)
		if err == nil {
			var cfi os.FileInfo
			cfi, err = w.stat(filepath.Clean(d))
			same = err == nil && os.SameFile(fi, cfi)
		}
		w.sameDirs[d] = same
	}
	return same
}

// dirs keeps the directories of list that exist, once each; a search path
// entry that is a file (a header map) is refused.
func (w *inclWalk) dirs(list []string, seen map[string]bool) ([]string, string) {
	var out []string
	for _, d := range list {
		d = strings.TrimSuffix(d, "/")
		if d == "" {
			d = "/"
		}
		if seen[d] {
			continue
		}
		seen[d] = true
		fi, err := w.stat(d)
		if err != nil {
			continue
		}
		if !fi.IsDir() {
			return nil, fmt.Sprintf("search path entry %s is not a directory (a header map?)", d)
		}
		out = append(out, d)
	}
	return out, ""
}

// add records a found file.
func (w *inclWalk) add(clean string) {
	if !w.found[clean] {
		w.found[clean] = true
		w.files = append(w.files, clean)
	}
}

// try looks name up in directory d ("" for an absolute name): when it is
// a regular file it is added (and queued for scanning when scan is set).
// found says whether it was; why is set when the path and its clean form
// are different files.
func (w *inclWalk) try(d, name string, scan bool) (found bool, why string) {
	p := name
	if d != "" {
		if !w.present(d, name) {
			return false, ""
		}
		p = inclJoin(d, name)
	}
	fi, err := w.stat(p)
	if err != nil || !fi.Mode().IsRegular() {
		return false, ""
	}
	clean := filepath.Clean(p)
	if clean != p && (d == "" || !inclCleanName(name) || filepath.Clean(d) != d && !w.sameDir(d)) {
		cfi, err := w.stat(clean)
		if err != nil || !os.SameFile(fi, cfi) {
			return false, fmt.Sprintf("%s is not the file its clean path %s names (a symlink before ..?)", p, clean)
		}
	}
	w.add(clean)
	if scan && !w.queued[clean] {
		w.queued[clean] = true
		w.queue = append(w.queue, inclFile{p, clean})
	}
	return true, ""
}

// lookup tries name in each directory of lists (or as it is when it is
// absolute) and reports whether it found it anywhere.
func (w *inclWalk) lookup(name string, scan bool, lists ...[]string) (bool, string) {
	if name == "" {
		return false, ""
	}
	if filepath.IsAbs(name) {
		return w.try("", name, scan)
	}
	found := false
	for _, l := range lists {
		for _, d := range l {
			ok, why := w.try(d, name, scan)
			if why != "" {
				return false, why
			}
			found = found || ok
		}
	}
	return found, ""
}

// run does the scan.
func (w *inclWalk) run() string {
	a := w.a
	fi, err := os.Stat(a.input)
	if err != nil {
		return fmt.Sprintf("main input: %v", err)
	}
	if fi.IsDir() {
		return fmt.Sprintf("main input %s is a directory", a.input)
	}
	clean := filepath.Clean(a.input)
	if clean != a.input {
		if cfi, err := os.Stat(clean); err != nil || !os.SameFile(fi, cfi) {
			return fmt.Sprintf("main input %s is not the file its clean path %s names (a symlink before ..?)", a.input, clean)
		}
	}
	w.add(clean)
	if fi.Mode().IsRegular() && a.preprocess {
		w.queued[clean] = true
		w.queue = append(w.queue, inclFile{a.input, clean})
	}
	w.mainDir = []string{filepath.Dir(a.input)}
	if d := filepath.Dir(clean); d != w.mainDir[0] {
		w.mainDir = append(w.mainDir, d)
	}
	seen := map[string]bool{}
	var why string
	// A directory both -iquote and angled is searched as angled.
	if a.angled, why = w.dirs(a.angled, seen); why != "" {
		return why
	}
	if a.quoted, why = w.dirs(a.quoted, seen); why != "" {
		return why
	}
	if a.embed, why = w.dirs(a.embed, map[string]bool{}); why != "" {
		return why
	}
	for _, p := range a.extra {
		if _, why := w.try("", p, false); why != "" {
			return why
		}
	}
	if !a.preprocess {
		return ""
	}
	cwd := []string{a.cwd}
	// Forced includes come from the predefines, which look in the working
	// directory and then in the search path.
	for _, f := range a.forced {
		ok, why := w.lookup(f, true, cwd, w.mainDir, a.quoted, a.angled)
		if why != "" {
			return why
		}
		if !ok {
			return fmt.Sprintf("forced include %s not found", f)
		}
	}
	for _, f := range a.implicit {
		if _, why := w.lookup(f, true, cwd, a.quoted, a.angled); why != "" {
			return why
		}
	}
	// Scan, then look at the aliases of the operators the files define,
	// until their calls find no new file.
	for {
		if why := w.drain(); why != "" {
			return why
		}
		if why := w.useAliases(); why != "" {
			return why
		}
		if len(w.queue) == 0 {
			return ""
		}
	}
}

// scanFile reads f and resolves its references.
func (w *inclWalk) scanFile(f inclFile) string {
	fi, err := w.stat(f.path) // the file f.clean names too (see try)
	if err != nil {
		return fmt.Sprintf("reading %s: %v", f.clean, err)
	}
	p, err := w.s.header(f.clean, fi)
	if err != nil {
		return fmt.Sprintf("reading %s: %v", f.clean, err)
	}
	if p.bad != "" {
		return fmt.Sprintf("%s:%s", f.clean, p.bad)
	}
	w.scanned = append(w.scanned, inclScanned{f, p})
	own := f.dirs()
	for _, r := range p.refs {
		if why := w.resolve(f, own, r); why != "" {
			return why
		}
	}
	return ""
}

// dirs returns the directory of f (as found, and clean when different).
func (f inclFile) dirs() []string {
	own := []string{filepath.Dir(f.path)}
	if d := filepath.Dir(f.clean); d != own[0] {
		own = append(own, d)
	}
	return own
}

// resolve looks up the reference r of file f, in directory own (f.dirs).
func (w *inclWalk) resolve(f inclFile, own []string, r inclRef) string {
	// An angled reference resolves the same from every file; a quoted
	// one the same from every file in one directory.
	key := inclKey{kind: 'A', name: r.name}
	switch {
	case r.angled && r.embed:
		key.kind = 'E'
	case r.embed:
		key.kind, key.from = 'e', f.path
	case !r.angled:
		key.kind, key.from = 'q', own[0]
	}
	if w.done[key] {
		return ""
	}
	w.done[key] = true
	var why string
	switch {
	case r.embed && r.angled:
		_, why = w.lookup(r.name, false, w.a.embed, w.a.angled)
	case r.embed:
		// clang looks a quoted #embed up from the includer's real path.
		var real []string
		if p, err := filepath.EvalSymlinks(f.clean); err == nil {
			real = append(real, filepath.Dir(p))
		}
		_, why = w.lookup(r.name, false, own, real, []string{w.a.cwd}, w.mainDir, w.a.embed, w.a.quoted, w.a.angled)
	case r.angled:
		_, why = w.lookup(r.name, true, w.a.angled)
	default:
		_, why = w.lookup(r.name, true, own, w.mainDir, w.a.quoted, w.a.angled)
	}
	return why
}

// drain scans the queued files.
func (w *inclWalk) drain() string {
	for len(w.queue) > 0 {
		f := w.queue[0]
		w.queue = w.queue[1:]
		if why := w.scanFile(f); why != "" {
			return why
		}
	}
	return ""
}

// aliases returns the macros that are, by their one-identifier
// definitions in the files scanned so far or by -D, aliases of the
// operators, with the kinds of reference they make.
func (w *inclWalk) aliases() map[string]uint8 {
	// Without a definition by an operator there is no alias (the usual
	// case, made quick).
	some := false
	for _, d := range w.a.defs {
		some = some || inclOperators[d[1]] != 0
	}
	for _, sc := range w.scanned {
		some = some || sc.p.opDef
	}
	if !some {
		return nil
	}
	var kinds map[string]uint8
	for changed := true; changed; {
		changed = false
		step := func(def [2]string) {
			k := kinds[def[1]] | inclOperators[def[1]]
			if k&^kinds[def[0]] != 0 {
				if kinds == nil {
					kinds = map[string]uint8{}
				}
				kinds[def[0]] |= k
				changed = true
			}
		}
		for _, d := range w.a.defs {
			step(d)
		}
		for _, sc := range w.scanned {
			for _, d := range sc.p.defs {
				step(d)
			}
		}
	}
	for op := range inclOperators {
		delete(kinds, op)
	}
	return kinds
}

// useAliases resolves the calls of aliases of the operators in the
// scanned files, as the operators' own; any other use of an alias in a
// directive is as a computed include.
func (w *inclWalk) useAliases() string {
	aliases := w.aliases()
	if len(aliases) == 0 {
		return ""
	}
	for _, sc := range w.scanned {
		if len(sc.p.uses) == 0 {
			continue
		}
		for name := range aliases {
			if u := sc.p.uses[name]; u.how&^inclUseCall != 0 {
				return fmt.Sprintf("%s:%d: %s, an alias of __has_include or __has_embed, used without a header name", sc.f.clean, u.line, name)
			}
		}
		for _, c := range sc.p.calls {
			kinds := aliases[c.name]
			if kinds&inclKindInclude != 0 {
				if why := w.resolve(sc.f, sc.f.dirs(), c.ref); why != "" {
					return why
				}
			}
			if kinds&inclKindEmbed != 0 {
				r := c.ref
				r.embed = true
				if why := w.resolve(sc.f, sc.f.dirs(), r); why != "" {
					return why
				}
			}
		}
	}
	return ""
}

// header returns what the file at path, whose stat is fi, refers to,
// from the memo or by reading it.
func (s *IncludeScanner) header(path string, fi os.FileInfo) (*inclParsed, error) {
	s.mu.Lock()
	h := s.memo[path]
	s.mu.Unlock()
	stamp := cache.StatOf(fi)
	if h != nil && h.stable && h.stamp == stamp {
		return h.parsed, nil
	}
	now := time.Now()
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	h = &inclHeader{stamp: stamp, parsed: inclParse(data), stable: int64(len(data)) == fi.Size() && stamp.Settled(now, inclRacy)}
	s.mu.Lock()
	s.memo[path] = h
	s.mu.Unlock()
	return h.parsed, nil
}

// Token kinds of inclLexer.
const (
	inclEOF = iota
	inclNewline
	inclIdent
	inclHash // # or %: (## and %:%: are inclOther)
	inclLParen
	inclString // a string or character literal, raw strings included
	inclOther
)

// inclTok is a token: its kind, its spelling (identifiers only, splices
// removed) and where it starts.
type inclTok struct {
	kind int
	raw  []byte
	pos  int
}

// is reports whether t is the identifier s.
func (t inclTok) is(s string) bool { return t.kind == inclIdent && string(t.raw) == s }

// inclLexer splits a C-family source file into the few tokens the
// directive parser needs, translation phases 1-3 style: line splices
// (a backslash, optional blanks, a newline) vanish, comments are blanks,
// string and character literals (raw ones too) are single tokens.
type inclLexer struct {
	b []byte
	i int
}

// sk returns j moved past any line splices.
func (l *inclLexer) sk(j int) int {
	for j < len(l.b) && l.b[j] == '\\' {
		k := j + 1
		for k < len(l.b) && (l.b[k] == ' ' || l.b[k] == '\t') {
			k++
		}
		switch {
		case k < len(l.b) && l.b[k] == '\n':
			j = k + 1
		case k < len(l.b) && l.b[k] == '\r':
			k++
			if k < len(l.b) && l.b[k] == '\n' {
				k++
			}
			j = k
		default:
			return j
		}
	}
	return j
}

// at returns the byte at j after any splices (-1 at the end) and its
// position.
func (l *inclLexer) at(j int) (int, int) {
	if j < len(l.b) && l.b[j] != '\\' {
		return int(l.b[j]), j
	}
	j = l.sk(j)
	if j >= len(l.b) {
		return -1, len(l.b)
	}
	return int(l.b[j]), j
}

// inclIdentChars are the bytes identifiers are made of.
var inclIdentChars = func() (t [256]bool) {
	for c := range t {
		t[c] = inclIdentChar(c)
	}
	return t
}()

// inclIdentStart reports whether byte c (-1 at the end) may start an
// identifier (any non-ASCII byte may: UTF-8 identifiers).
func inclIdentStart(c int) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == '$' || c >= 0x80
}

// inclIdentChar reports whether byte c may continue an identifier.
func inclIdentChar(c int) bool {
	return inclIdentStart(c) || c >= '0' && c <= '9'
}

// lineCommentEnd returns the position of the newline that ends the //
// comment whose text starts at j (a splice continues it).
func (l *inclLexer) lineCommentEnd(j int) int {
	for k := j; k < len(l.b); k++ {
		c := l.b[k]
		if c != '\n' && c != '\r' {
			continue
		}
		if c == '\r' && k+1 < len(l.b) && l.b[k+1] == '\n' {
			continue // the \n ends it
		}
		m := k - 1
		if c == '\n' && m >= j && l.b[m] == '\r' {
			m--
		}
		for m >= j && (l.b[m] == ' ' || l.b[m] == '\t') {
			m--
		}
		if m >= j && l.b[m] == '\\' {
			continue // spliced
		}
		if c == '\n' && k > 0 && l.b[k-1] == '\r' {
			return k - 1
		}
		return k
	}
	return len(l.b)
}

// blockCommentEnd returns the position after the */ that ends the block
// comment whose text starts at j (the end of the file if none does).
func (l *inclLexer) blockCommentEnd(j int) int {
	for j < len(l.b) {
		k := bytes.IndexByte(l.b[j:], '*')
		if k < 0 {
			return len(l.b)
		}
		k += j
		if c, m := l.at(k + 1); c == '/' {
			return m + 1
		}
		j = k + 1
	}
	return len(l.b)
}

// quoteEnd returns the position after the literal whose text starts at j
// and is closed by q; an unterminated one ends before its line's end.
func (l *inclLexer) quoteEnd(j int, q byte) int {
	for {
		c, k := l.at(j)
		switch {
		case c < 0 || c == '\n' || c == '\r':
			return k
		case c == '\\':
			c2, k2 := l.at(k + 1)
			if c2 < 0 || c2 == '\n' || c2 == '\r' {
				return k2
			}
			j = k2 + 1
		case c == int(q):
			return k + 1
		default:
			j = k + 1
		}
	}
}

// rawEnd returns the position after the raw string literal whose text
// (after R") starts at j.
func (l *inclLexer) rawEnd(j int) int {
	k := j
	for k < len(l.b) && k-j <= 16 {
		c := l.b[k]
		if c == '(' {
			term := append(append([]byte{')'}, l.b[j:k]...), '"')
			if e := bytes.Index(l.b[k+1:], term); e >= 0 {
				return k + 1 + e + len(term)
			}
			return len(l.b)
		}
		if c == ')' || c == '\\' || c == ' ' || c == '\t' || c == '\v' || c == '\f' || c == '\n' || c == '\r' || c == '"' {
			break
		}
		k++
	}
	return l.quoteEnd(j, '"') // not a valid raw string: lex it as an ordinary one
}

// ppNumberEnd returns the position after the pp-number starting at j.
func (l *inclLexer) ppNumberEnd(j int) int {
	for {
		c, k := l.at(j)
		switch {
		case c == 'e' || c == 'E' || c == 'p' || c == 'P':
			if n, m := l.at(k + 1); n == '+' || n == '-' {
				j = m + 1
			} else {
				j = k + 1
			}
		case inclIdentChar(c) || c == '.':
			j = k + 1
		case c == '\'':
			if n, _ := l.at(k + 1); inclIdentChar(n) {
				j = k + 1 // a digit separator
			} else {
				return k
			}
		default:
			return k
		}
	}
}

// skipBlanks moves past blanks and comments, but not past a newline.
func (l *inclLexer) skipBlanks() {
	for {
		c, j := l.at(l.i)
		switch {
		case c == ' ' || c == '\t' || c == '\f' || c == '\v' || c == 0:
			l.i = j + 1
		case c == '/':
			n, k := l.at(j + 1)
			switch n {
			case '/':
				l.i = l.lineCommentEnd(k + 1)
			case '*':
				l.i = l.blockCommentEnd(k + 1)
			default:
				l.i = j
				return
			}
		default:
			l.i = j
			return
		}
	}
}

// next returns the next token.
func (l *inclLexer) next() inclTok {
	for {
		l.skipBlanks()
		c, j := l.at(l.i)
		t := inclTok{pos: j}
		switch {
		case c < 0:
			l.i = j
			t.kind = inclEOF
		case c == '\n':
			l.i = j + 1
			t.kind = inclNewline
		case c == '\r':
			l.i = j + 1
			if l.i < len(l.b) && l.b[l.i] == '\n' {
				l.i++
			}
			t.kind = inclNewline
		case c == '"' || c == '\'':
			l.i = l.quoteEnd(j+1, byte(c))
			t.kind = inclString
		case c == '#':
			t.kind = inclHash
			l.i = j + 1
			if n, k := l.at(j + 1); n == '#' {
				l.i, t.kind = k+1, inclOther
			}
		case c == '%':
			t.kind = inclOther
			l.i = j + 1
			if n, k := l.at(j + 1); n == ':' {
				l.i, t.kind = k+1, inclHash
				if n2, k2 := l.at(k + 1); n2 == '%' {
					if n3, k3 := l.at(k2 + 1); n3 == ':' {
						l.i, t.kind = k3+1, inclOther
					}
				}
			}
		case c == '(':
			l.i = j + 1
			t.kind = inclLParen
		case c >= '0' && c <= '9':
			l.i = l.ppNumberEnd(j)
			t.kind = inclOther
		case c == '.':
			if n, _ := l.at(j + 1); n >= '0' && n <= '9' {
				l.i = l.ppNumberEnd(j)
			} else {
				l.i = j + 1
			}
			t.kind = inclOther
		case inclIdentStart(c):
			return l.ident(j)
		default:
			l.i = j + 1
			t.kind = inclOther
		}
		return t
	}
}

// ident lexes the identifier at j, or the string literal it prefixes.
func (l *inclLexer) ident(j int) inclTok {
	start := j
	for j < len(l.b) && inclIdentChars[l.b[j]] {
		j++
	}
	var spliced []byte // the spelling, when a splice interrupts it
	for {
		c, k := l.at(j)
		if k != j && spliced == nil {
			spliced = append([]byte(nil), l.b[start:j]...)
		}
		if !inclIdentChar(c) {
			j = k
			break
		}
		if spliced != nil {
			spliced = append(spliced, byte(c))
		}
		j = k + 1
	}
	t := inclTok{kind: inclIdent, raw: spliced, pos: start}
	if spliced == nil {
		t.raw = l.b[start:j]
	}
	l.i = j
	if c, k := l.at(j); c == '"' || c == '\'' {
		switch string(t.raw) {
		case "L", "u", "U", "u8":
			l.i, t.kind, t.raw = l.quoteEnd(k+1, byte(c)), inclString, nil
		case "R", "LR", "uR", "UR", "u8R":
			if c == '"' {
				l.i, t.kind, t.raw = l.rawEnd(k+1), inclString, nil
			}
		}
	}
	return t
}

// skipText moves past the tokens of a line that is not a directive, up
// to its newline; it stops early, and returns true, at an identifier that
// may be one of the __has_ operators. It is next without the tokens.
func (l *inclLexer) skipText() bool {
	b := l.b
	i := l.i
	for i < len(b) {
		c := b[i]
		switch {
		case c == '\n' || c == '\r':
			l.i = i
			return false
		case c == '\\':
			if j := l.sk(i); j != i {
				i = j
			} else {
				i++
			}
		case c >= '0' && c <= '9':
			i = l.ppNumberEnd(i)
		case inclIdentChars[c]:
			j := i
			for j < len(b) && inclIdentChars[b[j]] {
				j++
			}
			if j-i >= 6 && string(b[i:i+6]) == "__has_" || j < len(b) && (b[j] == '"' || b[j] == '\'' || b[j] == '\\') {
				// An operator, a string literal's prefix, or an identifier
				// a splice may continue.
				save := l.i
				t := l.ident(i)
				if t.kind == inclIdent && bytes.HasPrefix(t.raw, []byte("__has_")) {
					l.i = i
					return true
				}
				i, l.i = l.i, save
				continue
			}
			i = j
		case c == '"' || c == '\'':
			i = l.quoteEnd(i+1, c)
		case c == '/':
			n, k := l.at(i + 1)
			switch n {
			case '/':
				i = l.lineCommentEnd(k + 1)
			case '*':
				i = l.blockCommentEnd(k + 1)
			default:
				i++
			}
		default:
			i++
		}
	}
	l.i = i
	return false
}

// headerName reads a header name starting at l.i (after blanks): "name"
// or <name>, read raw up to the closing character on the same line. why
// is set when there is none: a macro (a computed include) or anything
// else.
func (l *inclLexer) headerName() (r inclRef, why string) {
	l.skipBlanks()
	c, j := l.at(l.i)
	var end int
	switch {
	case c == '"':
		end = '"'
	case c == '<':
		end, r.angled = '>', true
	case inclIdentStart(c):
		t := l.ident(j)
		if t.kind == inclIdent {
			return r, fmt.Sprintf("computed (%s is a macro)", t.raw)
		}
		return r, "has a prefixed string literal, not a header name"
	default:
		return r, "has no header name"
	}
	var name []byte
	for k := j + 1; ; {
		c, m := l.at(k)
		if c < 0 || c == '\n' || c == '\r' {
			return r, "has an unterminated header name"
		}
		if c == end {
			l.i = m + 1
			break
		}
		name = append(name, byte(c))
		k = m + 1
	}
	r.name = string(name)
	return r, ""
}

// inclParsed is what the scanner reads from a file.
type inclParsed struct {
	refs []inclRef // file names its directives and operators name
	bad  string    // why the file defeats the scan ("LINE: what"); "" if nothing does
	// defs are its object-like macros whose body is one identifier (NAME,
	// IDENT), which may make NAME an alias of __has_include.
	defs  [][2]string
	opDef bool // one of defs defines an alias of an operator itself
	// uses are the identifiers of its directives with how they are used
	// (inclUse* bits), but for those defined tests, #ifdef and the like
	// test and #define defines; calls are those followed by ( and a
	// header name. Both matter only for the identifiers that turn out to
	// be aliases of the operators.
	uses  map[string]inclUse
	calls []inclCall
}

// inclUse says how an identifier is used in a file's directives.
type inclUse struct {
	how  uint8 // inclUse* bits
	line int   // the first line with a use other than a call with a header name
}

// How an identifier is used in directives.
const (
	inclUseCall     = 1 << iota // NAME ( "name" or NAME ( <name>
	inclUseComputed             // NAME ( anything else
	inclUseBare                 // NAME not followed by (
)

// inclCall is NAME ( header-name in a directive.
type inclCall struct {
	name string
	ref  inclRef
}

// inclOperators are the operators that look files up, with the kinds of
// reference they make (inclKind*).
var inclOperators = map[string]uint8{"__has_include": inclKindInclude, "__has_include_next": inclKindInclude, "__has_embed": inclKindEmbed}

// Kinds of reference an operator (or its alias) makes.
const (
	inclKindInclude = 1 << iota
	inclKindEmbed
)

// inclParse returns what a header's text refers to: the file names of its
// #include, #include_next, #import, #__include_macros, #embed and #pragma
// GCC dependency directives and of its __has_include, __has_include_next
// and __has_embed operators, wherever they are (in #if 0 blocks too), and
// what could make another identifier such an operator (see inclParsed).
// Its bad says why the text defeats the scan: a computed include (a macro
// where a header name should be), an operator used other than as NAME(,
// as the body of a #define NAME, or after defined, #ifdef and the like,
// an unparsable header name.
func inclParse(b []byte) *inclParsed {
	return inclParseWith(b, true)
}

// inclParseWith is inclParse, which skips the lines that are not
// directives with inclLexer.skipText when fast is set, and lexes them
// token by token otherwise (to check the one against the other).
func inclParseWith(b []byte, fast bool) *inclParsed {
	p := &inclParsed{}
	l := &inclLexer{b: b}
	bol := true       // at the start of a line
	dir := ""         // the directive of the current line
	dirToks := 0      // tokens after the directive's name
	funcLike := false // the #define of the line defines a function-like macro
	var prev, prev2 inclTok
	lines := &inclLines{b: b}
	fail := func(pos int, format string, args ...any) *inclParsed {
		p.bad = fmt.Sprintf("%d: %s", lines.line(pos), fmt.Sprintf(format, args...))
		return p
	}
	// oneIdentBody reports whether the identifier just lexed is the whole
	// body of an object-like #define.
	oneIdentBody := func() bool {
		if dir != "define" || dirToks != 1 || funcLike || prev.kind != inclIdent {
			return false
		}
		save := l.i
		l.skipBlanks()
		c, _ := l.at(l.i)
		l.i = save
		return c < 0 || c == '\n' || c == '\r'
	}
	for {
		var t inclTok
		if bol || dir != "" || !fast || !l.skipText() {
			t = l.next()
		} else {
			t = l.ident(l.i) // an identifier starting __has_
		}
		switch t.kind {
		case inclEOF:
			return p
		case inclNewline:
			bol, dir, dirToks, funcLike, prev, prev2 = true, "", 0, false, inclTok{}, inclTok{}
			continue
		}
		if t.kind == inclHash && bol {
			bol = false
			save := l.i
			kw := l.next()
			if kw.kind != inclIdent {
				l.i = save // a null directive, a line marker
				continue
			}
			dir, dirToks, prev, prev2 = string(kw.raw), 0, inclTok{}, inclTok{}
			switch dir {
			case "include", "include_next", "import", "__include_macros", "embed":
				r, why := l.headerName()
				if why != "" {
					return fail(kw.pos, "#%s %s", dir, why)
				}
				r.embed = dir == "embed"
				p.refs = append(p.refs, r)
			case "pragma":
				save := l.i
				ns := l.next()
				if ns.is("GCC") || ns.is("clang") {
					if d := l.next(); d.is("dependency") {
						r, why := l.headerName()
						if why != "" {
							return fail(kw.pos, "#pragma %s dependency %s", ns.raw, why)
						}
						p.refs = append(p.refs, r)
						continue
					}
				}
				l.i = save
			}
			continue
		}
		bol = false
		if t.kind == inclIdent && (dir != "" || inclOperators[string(t.raw)] != 0) {
			_, op := inclOperators[string(t.raw)]
			defined := dir != "" && (prev.is("defined") || prev.kind == inclLParen && prev2.is("defined"))
			tested := dirToks == 0 && (dir == "ifdef" || dir == "ifndef" || dir == "elifdef" || dir == "elifndef" || dir == "undef")
			switch {
			case dir == "define" && dirToks == 0:
				// The macro being defined.
				if c, _ := l.at(l.i); c == '(' {
					funcLike = true
				}
			case t.is("defined") || defined || tested:
			case oneIdentBody():
				p.defs = append(p.defs, [2]string{string(prev.raw), string(t.raw)})
				p.opDef = p.opDef || op
			case op:
				l.skipBlanks()
				c, j := l.at(l.i)
				if c != '(' {
					return fail(t.pos, "%s without ( (used through a macro?)", t.raw)
				}
				l.i = j + 1
				r, why := l.headerName()
				if why != "" {
					return fail(t.pos, "%s %s", t.raw, why)
				}
				r.embed = t.is("__has_embed")
				p.refs = append(p.refs, r)
			default:
				p.use(l, t, lines)
			}
		}
		if dir != "" {
			dirToks++
		}
		prev2, prev = prev, t
	}
}

// use records how the identifier t of a directive is used, looking ahead
// without moving l.
func (p *inclParsed) use(l *inclLexer, t inclTok, lines *inclLines) {
	save := l.i
	how := uint8(inclUseBare)
	l.skipBlanks()
	if c, j := l.at(l.i); c == '(' {
		l.i = j + 1
		how = inclUseComputed
		l.skipBlanks()
		if c, _ := l.at(l.i); c == '"' || c == '<' {
			if r, why := l.headerName(); why == "" {
				how = inclUseCall
				p.calls = append(p.calls, inclCall{string(t.raw), r})
			}
		}
	}
	l.i = save
	if p.uses == nil {
		p.uses = map[string]inclUse{}
	}
	u, ok := p.uses[string(t.raw)]
	nu := u
	nu.how |= how
	if how != inclUseCall && u.how&^inclUseCall == 0 {
		nu.line = lines.line(t.pos)
	}
	if !ok || nu != u {
		p.uses[string(t.raw)] = nu
	}
}

// inclLines turns positions of b into line numbers, counting on from the
// last position asked about.
type inclLines struct {
	b      []byte
	pos, n int // a position and its line
}

// line returns the 1-based line of position pos.
func (c *inclLines) line(pos int) int {
	pos = min(pos, len(c.b))
	if pos < c.pos || c.n == 0 {
		c.pos, c.n = 0, 1
	}
	c.n += bytes.Count(c.b[c.pos:pos], []byte{'\n'})
	c.pos = pos
	return c.n
}
