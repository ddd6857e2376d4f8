package driver

import (
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
	"strings"

	"github.com/offcc/offcc/actions"
	"github.com/offcc/offcc/cache"
	"github.com/offcc/offcc/options"
)

// planCache remembers clang's job list (its -### output) per command line,
// so that rebuilding the same translation unit with the same flags skips the
// clang driver start on the critical path. The private temporary directory
// is stored as a placeholder and replaced by the new one on reuse.
//
// Plans are entries (cache.KindPlan) of the build cache's store, trimmed
// with everything else in it (one cache, one size limit). The key (see
// cache.PlanKeyText) covers everything clang's job list depends on that can
// change between runs of one command: the clang executable and its driver
// libraries, the configuration files clang reads, the GCC installations it
// picks its C++ library and crt files from, the ROCm and CUDA installations
// it takes device libraries from, the working directory, the driver name,
// every argument and the environment (less variables that differ per run:
// make's jobserver, TMPDIR, ...). A hit is used only if every source file
// the plan reads still exists. Nothing the plan cache does can fail a
// build: an unreadable, damaged or vanished entry is a miss, and write
// errors are ignored.
//
// A plan is stored, where it can be, without where the build runs and
// what it writes (see planPlaces): the working directory, OFFCC_BASE_DIR
// and the -o file's stem are keyed and stored as placeholders, so that a
// rebuild in a fresh build directory, or of an object under another name,
// finds the plan too. Where clang's jobs name them in a way offcc cannot
// reproduce for other values, the plan is stored under the exact key
// above: a miss for a command elsewhere, never a wrong plan.
type planCache struct {
	c *cache.Cache
	// tables are the option tables of the release whose plans are kept
	// (nil: the newest release's).
	tables *options.Tables
}

// The placeholders of stored plans. No path or argument holds a NUL byte.
const (
	// tempPlaceholder stands for the private temporary directory.
	tempPlaceholder = "\x00OFFCC_TMP\x00"
	// cwdPlaceholder stands for the working directory.
	cwdPlaceholder = "\x00OFFCC_CWD\x00"
	// basePlaceholder stands for OFFCC_BASE_DIR.
	basePlaceholder = "\x00OFFCC_BASE\x00"
	// stemPlaceholder stands for the -o file's name less its extension.
	stemPlaceholder = "\x00OFFCC_STEM\x00"
)

// newPlanCache returns the plan cache of the build cache c, or nil when
// that is off (c is nil) or OFFCC_PLAN_CACHE=0.
func newPlanCache(c *cache.Cache, getenv func(string) string) *planCache {
	switch getenv("OFFCC_PLAN_CACHE") {
	case "0", "off", "no", "false":
		return nil
	}
	if c == nil {
		return nil
	}
	return &planCache{c: c}
}

// planQuery is where one clang invocation's plan lives in the plan cache.
type planQuery struct {
	// exact is the key of the invocation as it is (cache.PlanKeyText).
	exact string
	// moved is the key with the places templated, or "" when nothing is.
	moved string
	// at are the places of the invocation.
	at *planPlaces
	// shape is the key with the source and the output templated too (see
	// planShape), or "" when the command has no shape; sh is the shape.
	shape string
	sh    *planShape
}

// query keys one clang invocation run in cwd (absolute) with base
// (OFFCC_BASE_DIR as set, or ""). It reports false when the invocation
// cannot be keyed (clang cannot be found); the caller then runs clang
// uncached.
func (c *planCache) query(clang, argv0 string, args, env []string, cwd, base string) (*planQuery, bool) {
	facts, ok := cache.NewPlanFacts(clang, argv0, args, env)
	if !ok {
		return nil, false
	}
	at := newPlanPlaces(orNewest(c.tables), args, cwd, base)
	// The LLVM installation is keyed by its facts: its paths may lie
	// beside the working directory.
	at.toolRoot = filepath.Dir(filepath.Dir(clang)) + "/"
	q := &planQuery{exact: planKey(facts.Text(cwd, args, env)), at: at}
	if q.at.active() && !overridesArgs(env) {
		keyEnv := q.at.keyEnv(env)
		q.moved = planKey(facts.Text(q.at.keyCwd(), q.at.keyArgs, keyEnv))
		if q.sh = newPlanShape(q.at, args); q.sh != nil {
			q.shape = planKey(facts.Text(q.at.keyCwd(), q.sh.keyArgs, keyEnv))
		}
	}
	return q, true
}

// overridesArgs reports whether the environment has clang's driver edit
// its arguments (CCC_OVERRIDE_OPTIONS): an edit such as "s/b.o/c.o/"
// applies to some names and not to others, so such a plan is kept only
// under its exact key.
func overridesArgs(env []string) bool {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "CCC_OVERRIDE_OPTIONS="); ok && v != "" {
			return true
		}
	}
	return false
}

// planKey is the store key of a key text: its SHA-256.
func planKey(text string) string {
	sum := sha256.Sum256([]byte(text))
	return hex.EncodeToString(sum[:])
}

// lookup returns the invocation's plan with tempDir and its places put
// in, from the entry without places if there is one, else from the exact
// entry, else from the entry of its shape (another file's plan).
func (c *planCache) lookup(q *planQuery, tempDir string) (string, bool) {
	if q.moved != "" {
		if body, ok := c.get(q.moved); ok {
			return q.at.fill(body, tempDir), true
		}
	}
	if out, ok := c.load(q.exact, tempDir); ok {
		return out, true
	}
	if q.shape != "" {
		if body, ok := c.get(q.shape); ok {
			return q.at.fill(q.sh.fill(body), tempDir), true
		}
	}
	return "", false
}

// save stores a successful -### output of the invocation: without its
// places where planPlaces.template can, else under the exact key.
func (c *planCache) save(q *planQuery, tempDir, output string) {
	if q.moved != "" && output != "" {
		body := output
		if tempDir != "" {
			body = strings.ReplaceAll(output, tempDir, tempPlaceholder)
		}
		if moved, ok := q.at.template(body); ok && q.at.fill(moved, tempDir) == output {
			c.put(q.moved, moved)
			if q.shape != "" {
				if shaped, ok := q.sh.template(moved); ok && q.at.fill(q.sh.fill(shaped), tempDir) == output {
					c.put(q.shape, shaped)
				}
			}
			return
		}
	}
	c.store(q.exact, tempDir, output)
}

// get returns the stored text of a sound entry, and marks the entry used.
func (c *planCache) get(key string) (string, bool) {
	sum, err := cache.ParseSum(key)
	if err != nil {
		return "", false
	}
	e, err := c.c.Store.Get(sum)
	if err != nil || e.Kind != cache.KindPlan || len(e.Record) == 0 {
		return "", false
	}
	return string(e.Record), true
}

// put stores a plan's text; failures to write are ignored (the cache only
// saves time).
func (c *planCache) put(key, body string) {
	if body == "" || !c.c.Writable() {
		return
	}
	sum, err := cache.ParseSum(key)
	if err != nil {
		return
	}
	c.c.Store.Put(sum, &cache.Entry{Kind: cache.KindPlan, Record: []byte(body)})
}

// load returns the stored output with tempDir put in, if there is a sound
// entry, and marks the entry used.
func (c *planCache) load(key, tempDir string) (string, bool) {
	body, ok := c.get(key)
	if !ok {
		return "", false
	}
	return strings.ReplaceAll(body, tempPlaceholder, tempDir), true
}

// store saves a successful -### output with the temporary directory as a
// placeholder.
func (c *planCache) store(key, tempDir, output string) {
	body := output
	if tempDir != "" {
		body = strings.ReplaceAll(output, tempDir, tempPlaceholder)
	}
	c.put(key, body)
}

// planPlaces are the values of one invocation that its plan is keyed and
// stored without, as placeholders:
//
//   - the working directory and OFFCC_BASE_DIR (with the meaning of
//     ccache's base_dir): absolute paths at or under them, in the
//     arguments and in clang's jobs, the longer one first. Relative paths
//     stay as they are. Clang copies such paths into its jobs as they are,
//     and records the working directory (-fdebug-compilation-dir=). A
//     command whose jobs may depend on what lies under them is keyed where
//     it runs: one with a relative or moved library, program or root
//     directory (-L, -B, --sysroot, ...) or file the driver reads
//     (-include, ...).
//   - the -o file's stem: for "-o DIR/STEM.EXT", DIR and EXT are keyed
//     and STEM is a placeholder, in the arguments and in clang's jobs,
//     wherever the output name is a whole value ("-o", "-MT", "-MF
//     OUT.d") and where clang derives a name from it: the dependency file
//     (STEM.d), the split DWARF file (STEM.dwo), -dumpdir and the
//     assembler's -object-file-name.
//
// template refuses (and the plan is stored under its exact key) when a job
// names the values any other way: a name derived from the stem that offcc
// does not know (--coverage's .gcno), a path under the working directory
// or the base that no argument names (a tool installed there), a header
// or warning line that names them.
type planPlaces struct {
	// tables are the option tables of the clang's release.
	tables *options.Tables
	// cwd and base are the working directory and the base directory,
	// absolute and clean, or "" when not templated; realCwd is the
	// working directory as keyed when it is not.
	cwd, base, realCwd string
	// outWord is the index in args of the -o value, or -1 when the
	// output is not templated. out is that value with its paths
	// templated (see templateLoc), outDir its directory (up to its last
	// '/'), outStem its file name less outExt, its extension; moved is
	// outDir+stemPlaceholder+outExt.
	outWord                             int
	out, outDir, outStem, outExt, moved string
	// relOut is -o's value when it is relative and clean, without "..":
	// the assembler records it joined to the working directory.
	relOut string
	// keyArgs are the arguments as keyed: paths templated and the output
	// stem a placeholder.
	keyArgs []string
	// argPaths are the templated paths the arguments name (see
	// placePaths); named holds the arguments and their values, with
	// paths templated, and the base names of the inputs.
	argPaths map[string]bool
	named    map[string]bool
	// parent is the working directory's parent when it must not appear
	// in a job (no argument names it), else "".
	parent string
	// toolRoot is the LLVM installation's directory, with a trailing
	// slash: paths in it may name the parent.
	toolRoot string
	// parsed are the arguments as clang's driver reads them, or nil when
	// they cannot be read.
	parsed []*options.Arg
}

// withoutToolPaths returns s with the LLVM installation's paths removed.
func (p *planPlaces) withoutToolPaths(s string) string {
	if p.toolRoot == "" || p.toolRoot == "/" || !strings.Contains(s, p.toolRoot) {
		return s
	}
	return strings.ReplaceAll(s, p.toolRoot, "")
}

// newPlanPlaces finds the places of a command line run in cwd with base.
func newPlanPlaces(tables *options.Tables, args []string, cwd, base string) *planPlaces {
	p := &planPlaces{outWord: -1, keyArgs: args, realCwd: cwd, tables: tables}
	parsed, err := tables.ClangDriver().Parse(args)
	if err != nil {
		return p
	}
	p.parsed = parsed
	if cwd = filepath.Clean(cwd); filepath.IsAbs(cwd) && cwd != "/" && plainPath(cwd) {
		p.cwd = cwd
	}
	if base != "" {
		if abs, err := filepath.Abs(base); err == nil && abs != "/" && plainPath(abs) {
			p.base = filepath.Clean(abs)
		}
	}
	if p.cwd == "" || p.driverSearches(parsed) {
		p.cwd, p.base = "", ""
	}
	words := make([]string, len(args))
	for i, w := range args {
		words[i] = p.templateLoc(w)
	}
	p.findOutput(args, words, parsed)
	if !p.active() {
		return p
	}
	p.keyArgs = make([]string, len(args))
	p.argPaths, p.named = map[string]bool{}, map[string]bool{}
	for i, w := range words {
		p.named[w] = true
		p.placePaths(w, func(path string) { p.argPaths[path] = true })
		p.keyArgs[i] = w
		if p.outWord >= 0 {
			prev := ""
			if i > 0 {
				prev = words[i-1]
			}
			p.keyArgs[i] = p.templateOut(prev, w, true)
		}
	}
	for _, a := range parsed {
		for _, v := range a.Values {
			p.named[p.templateLoc(v)] = true
		}
		if a.IsInput() {
			p.named[filepath.Base(a.Value())] = true
		}
	}
	if p.cwd != "" {
		if parent := filepath.Dir(p.cwd); strings.Count(parent, "/") >= 2 && parent != p.base && !argsContain(args, parent) {
			p.parent = parent
		}
	}
	return p
}

// active reports whether anything is templated.
func (p *planPlaces) active() bool { return p.cwd != "" || p.base != "" || p.outWord >= 0 }

// keyCwd is the working directory as keyed.
func (p *planPlaces) keyCwd() string {
	if p.cwd != "" {
		return cwdPlaceholder
	}
	return p.realCwd
}

// keyEnv is the environment as keyed: OFFCC_BASE_DIR, which names the
// base directory for offcc alone, is a placeholder when the base is
// templated.
func (p *planPlaces) keyEnv(env []string) []string {
	if p.base == "" {
		return env
	}
	out := make([]string, len(env))
	for i, kv := range env {
		if strings.HasPrefix(kv, "OFFCC_BASE_DIR=") {
			kv = "OFFCC_BASE_DIR=" + basePlaceholder
		}
		out[i] = kv
	}
	return out
}

// plainPath reports whether a path can be templated: it holds no byte
// that clang's -### quoting escapes and none that ends a path in the
// matching below.
func plainPath(s string) bool {
	return !strings.ContainsAny(s, "\"\\$\n\x00") && !strings.ContainsAny(s, pathDelims)
}

// pathDelims end a path inside an argument: "-Wl,-rpath,/x", "A=/x:/y".
const pathDelims = "=,:; '\t"

// headerSearch are the options whose directories only the compiler
// searches: clang's driver passes them on without looking at them.
var headerSearch = map[string]bool{
	"I": true, "isystem": true, "iquote": true, "idirafter": true, "iprefix": true,
	"iwithprefix": true, "iwithprefixbefore": true, "c_isystem": true, "cxx_isystem": true,
	"objc_isystem": true, "objcxx_isystem": true, "isystem_after": true, "iframework": true,
	"F": true, "embed_dir_EQ": true,
}

// driverSearches reports whether clang's driver may look, for this
// command line, at files whose names would be templated: a file it reads,
// a directory it searches (device libraries under -L, programs under -B,
// a root), a program or a plugin, named relatively or under the working
// or base directory. Its jobs could then differ between two directories
// that the templated key does not tell apart.
func (p *planPlaces) driverSearches(parsed []*options.Arg) bool {
	for _, a := range parsed {
		if p.argSearches(a, 0) {
			return true
		}
	}
	return false
}

func (p *planPlaces) argSearches(a *options.Arg, depth int) bool {
	o := a.Option
	switch o.Value {
	case options.ReadFile, options.SearchDir, options.Program, options.Plugin:
	case options.Forward:
		// -Xarch_*, -Xopenmp-target pass a driver option on to a
		// target's tool chain.
		if !a.Is("Xarch__") && !a.Is("Xarch_device") && !a.Is("Xarch_host") && !a.Is("Xopenmp_target") && !a.Is("Xopenmp_target_EQ") {
			return false
		}
		if depth > 0 || len(a.Values) == 0 {
			return true
		}
		inner, err := p.tables.ClangDriver().Parse(a.Values[len(a.Values)-1:])
		if err != nil {
			return true
		}
		for _, ia := range inner {
			if p.argSearches(ia, depth+1) {
				return true
			}
		}
		return false
	default:
		return false
	}
	if headerSearch[o.ID] {
		return false
	}
	for _, v := range a.Values {
		if v == "" {
			continue
		}
		if (o.Value == options.Program || a.Is("config")) && !strings.Contains(v, "/") {
			continue // a name looked up in PATH or clang's directories
		}
		if !filepath.IsAbs(v) || p.under(filepath.Clean(v)) {
			return true
		}
	}
	return false
}

// under reports whether the clean absolute path is at or under the
// working or base directory.
func (p *planPlaces) under(path string) bool {
	for _, d := range []string{p.cwd, p.base} {
		if d != "" && (path == d || strings.HasPrefix(path, d+"/")) {
			return true
		}
	}
	return false
}

// findOutput sets the output fields when -o's file can be templated: one
// "-o FILE" whose name is plain and has a stem; no -save-temps (whose
// files are named after the inputs beside the output) and no -dumpdir
// or -dumpbase of the user's; and no other argument that names the output
// (or its .d or .dwo file) other than as a whole value, which templateOut
// templates alike wherever clang copies it. words are args with their
// paths templated.
func (p *planPlaces) findOutput(args, words []string, parsed []*options.Arg) {
	var o *options.Arg
	for _, a := range parsed {
		switch {
		case a.Is("o"):
			if o != nil {
				return
			}
			o = a
		case a.Is("save_temps_EQ"), strings.HasPrefix(a.Spelling, "-dump"):
			return
		}
	}
	if o == nil || o.Count != 2 || args[o.Index] != "-o" {
		return
	}
	raw := args[o.Index+1]
	if strings.HasPrefix(raw, "-") || !plainName(raw) {
		return
	}
	out := words[o.Index+1]
	dir, name := "", out
	if i := strings.LastIndex(out, "/"); i >= 0 {
		dir, name = out[:i+1], out[i+1:]
	}
	if name == "" || name == "." || name == ".." || strings.Contains(name, "\x00") {
		return
	}
	ext := ""
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		ext = name[i:] // llvm::sys::path::extension
	}
	stem := name[:len(name)-len(ext)]
	if stem == "" {
		return
	}
	p.outWord, p.out, p.outDir, p.outStem, p.outExt = o.Index+1, out, dir, stem, ext
	p.moved = dir + stemPlaceholder + ext
	if !filepath.IsAbs(raw) && filepath.Clean(raw) == raw && raw != ".." && !strings.HasPrefix(raw, "../") {
		p.relOut = raw // what remove_dots leaves as it is
	}
	for i, w := range words {
		prev := ""
		if i > 0 {
			prev = words[i-1]
		}
		k := p.templateOut(prev, w, true)
		if strings.Contains(k, out) || strings.Contains(k, dir+stem+".d") {
			p.outWord = -1
			return
		}
	}
}

// plainName reports whether an output name is made of bytes that every
// tool prints as they are: letters, digits and "._+-/~@".
func plainName(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isAlnum(c) && !strings.ContainsRune("._+-/~@", rune(c)) {
			return false
		}
	}
	return s != ""
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// templateLoc replaces, in one argument, the working and base directories
// where they begin an absolute path: at the start of the argument, after
// an option's spelling ("-I/x") or after a delimiter ("-Wl,-rpath,/x",
// "-fdebug-prefix-map=/x=."), and followed by '/', a delimiter or the end.
// The longer of the two goes first, so that a working directory under the
// base is the working directory.
func (p *planPlaces) templateLoc(s string) string {
	type place struct{ dir, ph string }
	places := []place{{p.cwd, cwdPlaceholder}, {p.base, basePlaceholder}}
	if len(p.base) > len(p.cwd) {
		places[0], places[1] = places[1], places[0]
	}
	for _, pl := range places {
		if pl.dir != "" && strings.Contains(s, pl.dir) {
			s = replacePath(s, pl.dir, pl.ph)
		}
	}
	return s
}

// replacePath replaces dir by ph where it is a whole path or a path's
// leading directories (see templateLoc).
func replacePath(s, dir, ph string) string {
	var b strings.Builder
	last := 0
	for off := 0; ; {
		i := pathIndex(s, dir, off)
		if i < 0 {
			break
		}
		b.WriteString(s[last:i])
		b.WriteString(ph)
		last = i + len(dir)
		off = last
	}
	b.WriteString(s[last:])
	return b.String()
}

// pathIndex returns the index, from off, of the first occurrence of dir in
// s that begins a path and ends at a path boundary, or -1.
func pathIndex(s, dir string, off int) int {
	for {
		i := strings.Index(s[off:], dir)
		if i < 0 {
			return -1
		}
		i += off
		end := i + len(dir)
		if pathStart(s, i) && (end == len(s) || s[end] == '/' || strings.IndexByte(pathDelims, s[end]) >= 0) {
			return i
		}
		off = i + 1
	}
}

// pathStart reports whether an absolute path may begin at s[i]: at the
// start, after a delimiter, or after an option's spelling ("-I", "-L")
// that begins s or follows a delimiter. After a directory name ("/c/x"
// holds no path "/x"), a '/' or a placeholder it may not.
func pathStart(s string, i int) bool {
	j := i
	for j > 0 && !endsName(s[j-1]) && strings.IndexByte(pathDelims, s[j-1]) < 0 {
		j--
	}
	switch {
	case j > 0 && endsName(s[j-1]):
		return false
	case j == i:
		return true // at the start or after a delimiter
	}
	return s[j] == '-' // an option's spelling
}

// endsName reports whether c ends a directory name: '/', or the NUL that
// ends a placeholder.
func endsName(c byte) bool { return c == '/' || c == 0 }

// placePaths calls f with each templated path in s: a working or base
// directory placeholder and what follows it up to a delimiter.
func (p *planPlaces) placePaths(s string, f func(path string)) {
	for _, ph := range []string{cwdPlaceholder, basePlaceholder} {
		for off := 0; ; {
			i := strings.Index(s[off:], ph)
			if i < 0 {
				break
			}
			i += off
			end := i + len(ph)
			for end < len(s) && strings.IndexByte(pathDelims, s[end]) < 0 {
				end++
			}
			f(s[i:end])
			off = i + len(ph)
		}
	}
}

// argsContain reports whether an argument contains s.
func argsContain(args []string, s string) bool {
	for _, w := range args {
		if strings.Contains(w, s) {
			return true
		}
	}
	return false
}

// template returns clang's -### output (with the temporary directory
// already a placeholder) with the places as placeholders, or false where
// it names them in a way that other values would not simply replace.
func (p *planPlaces) template(body string) (string, bool) {
	var b strings.Builder
	for _, line := range strings.SplitAfter(body, "\n") {
		text, nl := strings.CutSuffix(line, "\n")
		if !strings.HasPrefix(text, ` "`) {
			// The version header, -v's lines, warnings: kept as they are,
			// so they may not name the places.
			if p.mentions(text) {
				return "", false
			}
			b.WriteString(line)
			continue
		}
		argv, err := actions.SplitHash(text)
		if err != nil || renderHash(argv) != text {
			return "", false
		}
		out := make([]string, len(argv))
		prev := ""
		for i, t := range argv {
			u := p.templateLoc(t)
			v, ok := p.templateToken(prev, u)
			if !ok {
				return "", false
			}
			out[i], prev = v, u
		}
		b.WriteString(renderHash(out))
		if nl {
			b.WriteByte('\n')
		}
	}
	return b.String(), true
}

// renderHash writes a job line as clang's -### does.
func renderHash(argv []string) string {
	var b strings.Builder
	for _, a := range argv {
		b.WriteByte(' ')
		b.WriteString(actions.QuoteHash(a))
	}
	return b.String()
}

// mentions reports whether a line that is not a job names a place.
func (p *planPlaces) mentions(text string) bool {
	for _, v := range []string{p.cwd, p.base, p.parent} {
		if v != "" && strings.Contains(p.withoutToolPaths(text), v) {
			return true
		}
	}
	return p.outWord >= 0 && stemIndex(text, p.outStem, 0) >= 0
}

// templateToken templates the output in one job argument u, whose paths
// are templated already (prev is the argument before it, likewise), and
// checks that what is left names no place where other values would not
// simply replace it: every templated path is one the arguments name, the
// working directory where clang records it, or the output's; and the
// output's stem is left only in a copy of an argument or in a temporary
// file named after an input.
func (p *planPlaces) templateToken(prev, u string) (string, bool) {
	named := p.named[u]
	if p.cwd != "" || p.base != "" {
		if p.parent != "" && strings.Contains(p.withoutToolPaths(u), p.parent) {
			return "", false
		}
		if !named && !p.knownPaths(u) {
			return "", false
		}
	}
	if p.outWord < 0 {
		return u, true
	}
	v := p.templateOut(prev, u, named)
	if named || isOptionName(p.tables, u) {
		return v, true
	}
	for off := 0; ; {
		i := stemIndex(v, p.outStem, off)
		if i < 0 {
			return v, true
		}
		if !strings.HasSuffix(v[:i], tempPlaceholder+"/") {
			return "", false
		}
		off = i + 1
	}
}

// cwdRecords are the job options whose value clang sets to the working
// directory.
var cwdRecords = []string{"-fdebug-compilation-dir=", "-fcoverage-compilation-dir="}

// knownPaths reports whether every templated path in a job argument u
// that is no argument's copy is one the arguments name, the working
// directory where clang records it, or a name clang derives from the
// output. Where clang records the working directory, it must be the one
// templated: clang and offcc could see it by different names (symbolic
// links).
func (p *planPlaces) knownPaths(u string) bool {
	for _, opt := range cwdRecords {
		if v, ok := strings.CutPrefix(u, opt); ok {
			return p.cwd == "" || v == cwdPlaceholder
		}
	}
	ok := true
	p.placePaths(u, func(path string) {
		if p.argPaths[path] {
			return
		}
		if p.outWord >= 0 {
			d := p.outDir + p.outStem
			switch path {
			case p.out, d + ".d", d + ".dwo", cwdPlaceholder + "/" + p.relOut:
				return
			}
		}
		ok = false
	})
	return ok
}

// templateOut replaces the output's stem in u, an argument or a job's
// argument with its paths templated (prev is the one before it): where u
// is a name clang derives from the output (OUT.d, OUT.dwo, the -dumpdir
// prefix and the split DWARF files named after it, -object-file-name=),
// and where the output is a whole value: the whole argument, or after '=',
// ',' or ' ' up to ',', ' ' or the end ("-output=a.o", "--image=file=a.o,..."),
// or, in an argument or a copy of one (lenient), up to '.' as well
// ("-MF OUT.d").
func (p *planPlaces) templateOut(prev, u string, lenient bool) string {
	d := p.outDir + p.outStem
	switch {
	case u == d+".d":
		return p.outDir + stemPlaceholder + ".d"
	case u == d+".dwo":
		return p.outDir + stemPlaceholder + ".dwo"
	case prev == "-dumpdir" && u == p.out+"-":
		return p.moved + "-"
	case (prev == "-split-dwarf-file" || prev == "-split-dwarf-output") && strings.HasPrefix(u, p.out+"-") && strings.HasSuffix(u, ".dwo"):
		return p.moved + u[len(p.out):] // -dumpdir's prefix, the input's stem
	}
	if v, ok := strings.CutPrefix(u, "-object-file-name="); ok {
		switch cwd := p.keyCwd(); {
		case p.relOut != "" && v == cwd+"/"+p.relOut:
			return "-object-file-name=" + cwd + "/" + p.moved
		case p.relOut == "" && v == p.out:
			return "-object-file-name=" + p.moved
		}
	}
	ends := ", "
	if lenient {
		ends = ", ."
	}
	var b strings.Builder
	for off := 0; ; {
		i := strings.Index(u[off:], p.out)
		if i < 0 {
			break
		}
		i += off
		end := i + len(p.out)
		if (i == 0 || strings.IndexByte("=, ", u[i-1]) >= 0) && (end == len(u) || strings.IndexByte(ends, u[end]) >= 0) {
			b.WriteString(u[:i])
			b.WriteString(p.moved)
			u, off = u[end:], 0
			continue
		}
		off = i + 1
	}
	b.WriteString(u)
	return b.String()
}

// stemIndex returns the index from off of the first occurrence of stem in
// s with no letter or digit on either side, or -1.
func stemIndex(s, stem string, off int) int {
	for {
		i := strings.Index(s[off:], stem)
		if i < 0 {
			return -1
		}
		i += off
		end := i + len(stem)
		if (i == 0 || !isAlnum(s[i-1])) && (end == len(s) || !isAlnum(s[end])) {
			return i
		}
		off = i + 1
	}
}

// fill puts the temporary directory and the places into a stored plan.
func (p *planPlaces) fill(body, tempDir string) string {
	pairs := []string{tempPlaceholder, tempDir}
	if p.cwd != "" {
		pairs = append(pairs, cwdPlaceholder, p.cwd)
	}
	if p.base != "" {
		pairs = append(pairs, basePlaceholder, p.base)
	}
	if p.outWord >= 0 {
		pairs = append(pairs, stemPlaceholder, p.outStem)
	}
	return strings.NewReplacer(pairs...).Replace(body)
}

// isOptionName reports whether u is a clang -cc1 option's whole spelling
// that takes no value in the same word ("-main-file-name", whose value
// follows): an output stem in it is part of the name, not a path.
func isOptionName(tables *options.Tables, u string) bool {
	if !strings.HasPrefix(u, "-") {
		return false
	}
	a, err := tables.ClangCC1().ParseOne([]string{u, ""}, 0)
	if err != nil || a.IsInput() || a.IsUnknown() || a.Spelling != u {
		return false
	}
	switch a.Option.Kind {
	case options.Flag, options.Separate:
		return true
	}
	return false
}
