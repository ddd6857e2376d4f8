// Search paths and include resolution: one scan's walk over the files it
// finds, looking each reference up in every directory clang could search.

package includescan

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// statResult is a memoised os.Stat.
type statResult struct {
	fi  os.FileInfo
	err error
}

// foundFile is a file to scan: its path as found and its clean form.
type foundFile struct {
	path, clean string
}

// lookupKey identifies the lookups of a reference: its kind, its name and
// what else they depend on.
type lookupKey struct {
	kind       byte
	from, name string
}

// scannedFile is a scanned file and what it refers to.
type scannedFile struct {
	f foundFile
	p *directives
}

// dirListing is a directory's listing as one scan sees it: ok is false
// when the directory cannot be listed (each candidate is then stat'ed);
// names is nil when nothing exists under the path.
type dirListing struct {
	names map[string]bool
	ok    bool
}

// walk is one Scan's state.
type walk struct {
	s        *Scanner
	a        *cc1Args
	stats    map[string]statResult // os.Stat by path, for this scan only
	listings map[string]dirListing // directory listings, checked for this scan
	sameDirs map[string]bool       // directories with ".." that are their clean form
	done     map[lookupKey]bool    // references already resolved
	files    []string              // the result
	found    map[string]bool       // clean paths in files
	queued   map[string]bool       // clean paths scanned or to scan
	queue    []foundFile
	scanned  []scannedFile // the files scanned, in order
	mainDir  []string      // the main input's directory (as given and clean)
}

// newWalk returns the state of a scan of a on s.
func newWalk(s *Scanner, a *cc1Args) *walk {
	return &walk{s: s, a: a, stats: map[string]statResult{}, listings: map[string]dirListing{},
		sameDirs: map[string]bool{}, done: map[lookupKey]bool{}, found: map[string]bool{}, queued: map[string]bool{}}
}

// stat is os.Stat, once per path and scan.
func (w *walk) stat(p string) (os.FileInfo, error) {
	st, ok := w.stats[p]
	if !ok {
		st.fi, st.err = os.Stat(p)
		w.stats[p] = st
	}
	return st.fi, st.err
}

// entries returns the listing of directory d for this scan.
func (w *walk) entries(d string) dirListing {
	l, ok := w.listings[d]
	if !ok {
		l = w.s.listing(d, w.stat)
		w.listings[d] = l
	}
	return l
}

// isCleanName reports whether a relative name has no ".", ".." or empty
// components.
func isCleanName(name string) bool {
	return name != "" && name != "." && name != ".." && filepath.Clean(name) == name && !strings.HasPrefix(name, "../")
}

// present reports whether name may exist under directory d: false only
// when a listing on the way says it does not.
func (w *walk) present(d, name string) bool {
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
		d, name = joinPath(d, comp), rest
	}
}

// sameDir reports whether directory d, which has "..", is the directory
// its clean form names (so that d/name and clean(d)/name are one file).
func (w *walk) sameDir(d string) bool {
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
func (w *walk) dirs(list []string, seen map[string]bool) ([]string, string) {
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
func (w *walk) add(clean string) {
	if !w.found[clean] {
		w.found[clean] = true
		w.files = append(w.files, clean)
	}
}

// try looks name up in directory d ("" for an absolute name): when it is
// a regular file it is added (and queued for scanning when scan is set).
// found says whether it was; why is set when the path and its clean form
// are different files.
func (w *walk) try(d, name string, scan bool) (found bool, why string) {
	p := name
	if d != "" {
		if !w.present(d, name) {
			return false, ""
		}
		p = joinPath(d, name)
	}
	fi, err := w.stat(p)
	if err != nil || !fi.Mode().IsRegular() {
		return false, ""
	}
	clean := filepath.Clean(p)
	if clean != p && (d == "" || !isCleanName(name) || filepath.Clean(d) != d && !w.sameDir(d)) {
		cfi, err := w.stat(clean)
		if err != nil || !os.SameFile(fi, cfi) {
			return false, fmt.Sprintf("%s is not the file its clean path %s names (a symlink before ..?)", p, clean)
		}
	}
	w.add(clean)
	if scan && !w.queued[clean] {
		w.queued[clean] = true
		w.queue = append(w.queue, foundFile{p, clean})
	}
	return true, ""
}

// lookup tries name in each directory of lists (or as it is when it is
// absolute) and reports whether it found it anywhere.
func (w *walk) lookup(name string, scan bool, lists ...[]string) (bool, string) {
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
func (w *walk) run() string {
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
		w.queue = append(w.queue, foundFile{a.input, clean})
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
func (w *walk) scanFile(f foundFile) string {
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
	w.scanned = append(w.scanned, scannedFile{f, p})
	own := f.dirs()
	for _, r := range p.refs {
		if why := w.resolve(f, own, r); why != "" {
			return why
		}
	}
	return ""
}

// dirs returns the directory of f (as found, and clean when different).
func (f foundFile) dirs() []string {
	own := []string{filepath.Dir(f.path)}
	if d := filepath.Dir(f.clean); d != own[0] {
		own = append(own, d)
	}
	return own
}

// resolve looks up the reference r of file f, in directory own (f.dirs).
func (w *walk) resolve(f foundFile, own []string, r headerRef) string {
	// An angled reference resolves the same from every file; a quoted
	// one the same from every file in one directory.
	key := lookupKey{kind: 'A', name: r.name}
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
func (w *walk) drain() string {
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
func (w *walk) aliases() map[string]uint8 {
	// Without a definition by an operator there is no alias (the usual
	// case, made quick).
	some := false
	for _, d := range w.a.defs {
		some = some || operators[d[1]] != 0
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
			k := kinds[def[1]] | operators[def[1]]
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
	for op := range operators {
		delete(kinds, op)
	}
	return kinds
}

// useAliases resolves the calls of aliases of the operators in the
// scanned files, as the operators' own; any other use of an alias in a
// directive is as a computed include.
func (w *walk) useAliases() string {
	aliases := w.aliases()
	if len(aliases) == 0 {
		return ""
	}
	for _, sc := range w.scanned {
		if len(sc.p.uses) == 0 {
			continue
		}
		for name := range aliases {
			if u := sc.p.uses[name]; u.how&^useCall != 0 {
				return fmt.Sprintf("%s:%d: %s, an alias of __has_include or __has_embed, used without a header name", sc.f.clean, u.line, name)
			}
		}
		for _, c := range sc.p.calls {
			kinds := aliases[c.name]
			if kinds&kindInclude != 0 {
				if why := w.resolve(sc.f, sc.f.dirs(), c.ref); why != "" {
					return why
				}
			}
			if kinds&kindEmbed != 0 {
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
