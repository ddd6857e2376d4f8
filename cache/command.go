package cache

import (
	"bufio"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/offcc/offcc/actions"
	"github.com/offcc/offcc/toolchain"
)

// Command entries. A compile whose every job the cache served is also
// stored whole (a build that ran jobs stores none: a cold build costs no
// more than its jobs' entries): its user-visible outputs under one entry, found
// from the plan cache's key of its command line (CommandKey) and the
// files all of its jobs read. A later run of the same command looks that
// up before anything else (no plan parsed, no job keyed) and restores its
// outputs in one step, as ccache answers a command from one manifest.
//
// Why a hit is the result the jobs would give: a job's key is a function
// of its command line (the plan's, which the plan key fixes), the tools'
// identities, a few environment variables (which the plan key covers),
// and the files it reads: the user's files and headers, the tools' files,
// and the outputs of the jobs before it (temporaries, themselves results
// of such keys). A command entry lists every file outside the temporary
// directory that any job read or ran, with the stat it had when it was
// stored, each settled then (trustStatAge before the build began): a file
// with the same stat has the same bytes (ccache's racy rule), so every job
// would find the entry it found then. Paths a header set lists as absent
// must still be absent. A file whose stat changed is a miss here, not a
// rehash: the build then goes through its jobs' own entries, which rehash,
// and stores a new command entry.
//
// Where the plan key is without the working directory and the output's
// stem (the plan cache's "moved" key), the entry is stored under it only
// if no job's key text names either (the job entries were shared across
// build directories too) and the command wrote one file, its -o: the
// restored file then goes to the new command's -o. Otherwise the entry is
// stored under the exact plan key and restores the paths it recorded.
// Command entries live in the local store only.

// The kinds of command entries, both machine-local (their stats name this
// machine's files): never exported, imported or shared.
const (
	// KindCommand is a whole command's result: its outputs (blobs) and
	// the paths they go to.
	KindCommand Kind = "command"
	// KindCommandManifest lists, for a command line, the sets of files
	// (by stat) its builds read and the command entry each gave.
	KindCommandManifest Kind = "command-manifest"
)

// commandKeyVersion changes when command entries change meaning.
const commandKeyVersion = "offcc command v1"

// CommandKey says where a command's entry is looked up: the plan cache's
// keys of its command line.
type CommandKey struct {
	// Exact is the plan key of the command as it is (hex).
	Exact string
	// Moved is the plan key without the working directory, base
	// directory and output stem, or "" when the plan cache has none.
	Moved string
	// Output is the command's -o file, the one output a moved entry
	// restores; "" where the command names none.
	Output string
	// Places are the strings a job's key must not name for the entry to
	// be stored under Moved: the working directory and the output's stem
	// and path.
	Places []string
	// Start is when the build began: the files the entry lists must have
	// been left alone for trustStatAge before it.
	Start time.Time
	// Args are the command line's words: an exact entry restores only
	// files they name (see mayWrite).
	Args []string
	// Options are offcc's own options that change what its jobs write
	// (the plan key has clang's line only), as text.
	Options string
}

// mayWrite reports whether a command with key k may write path: its -o
// file, its -MF file (-MF FILE, -MFFILE), or the dependency file -MD
// names after the -o file. A command entry naming any other path is not
// restored (and a command writing one stores none): whoever could write
// the cache must not direct offcc's writes elsewhere, the sources above
// all.
func (k CommandKey) mayWrite(path string) bool {
	if path == "" {
		return false
	}
	same := func(a, b string) bool { return a != "" && absName(a) == absName(b) }
	if same(k.Output, path) || k.Output != "" && same(strings.TrimSuffix(k.Output, filepath.Ext(k.Output))+".d", path) {
		return true
	}
	for i, w := range k.Args {
		if (w == "-MF" || w == "-o") && i+1 < len(k.Args) && same(k.Args[i+1], path) {
			return true
		}
		if len(w) > 3 && strings.HasPrefix(w, "-MF") && same(w[3:], path) {
			return true
		}
	}
	return false
}

// absName is p made absolute (against the working directory), or p.
func absName(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return p
}

func (k CommandKey) manifestKey(moved bool) Sum {
	plan := k.Exact
	how := "exact"
	if moved {
		plan, how = k.Moved, "moved"
	}
	return sha256.Sum256([]byte(commandKeyVersion + "\x00" + how + "\x00" + plan + "\x00" + k.Options))
}

// commandRecord is the record of a KindCommand entry.
type commandRecord struct {
	// Outputs are the paths the blobs go to (an exact entry), in blob
	// order; a moved entry has one output and no paths.
	Outputs []string `json:"outputs,omitempty"`
	// Millis is what running the command's jobs took (the time a hit
	// saves), as their results recorded it.
	Millis int64 `json:"ms,omitempty"`
}

// commandFacts is what a session learns, action by action, of the files
// its build read, for the command entry stored after it.
type commandFacts struct {
	mu sync.Mutex
	// broken: some action was not cacheable, failed, printed something,
	// or ran a clang driver; no command entry is stored.
	// (A job that runs breaks it too: a build that runs jobs stores no
	// command entry, so that a cold build costs no more than its jobs'
	// entries.)
	broken bool
	noted  map[*actions.Action]bool
	reads  map[string]FileStat
	// tools are the executables and libraries the jobs ran, stated once
	// when the entry is stored.
	tools  map[string]bool
	absent map[string]bool
	texts  []string
}

// quiet reports whether a run printed nothing: only such runs make a
// command entry, whose hit prints nothing.
func quiet(stdout, stderr []byte) bool { return len(stdout) == 0 && len(stderr) == 0 }

// breakCommand records that this build stores no command entry.
func (s *Session) breakCommand() {
	s.cmd.mu.Lock()
	s.cmd.broken = true
	s.cmd.mu.Unlock()
}

// noteCommand records what action a, keyed ak, read: its inputs outside
// the temporary directory, its tools, and the header set cand (nil for
// an action without one).
func (s *Session) noteCommand(a *actions.Action, ak *actionKey, cand *candidate) {
	temp := s.tempDir + string(filepath.Separator)
	reads := map[string]FileStat{}
	broken := false
	add := func(p string) {
		if strings.HasPrefix(p, temp) || p == "" {
			return
		}
		if fi := s.files.peek(p); fi != nil && fi.err == nil && fi.stat != (FileStat{}) {
			reads[p] = fi.stat
			return
		}
		st, err := statPath(p)
		if err != nil {
			broken = true
			return
		}
		reads[p] = st
	}
	for _, f := range a.AllInputs() {
		add(f.Path)
	}
	var tools []string
	if len(a.Command) > 0 && a.Run == nil {
		exe := a.Command[0]
		if len(a.Command) < 2 || a.Command[1] != "-cc1" && a.Command[1] != "-cc1as" {
			// A clang driver also reads what it finds installed,
			// which the key has and this list would not.
			if toolchain.ToolName(exe) == "clang" {
				broken = true
			}
		}
		tools = append(tools, exe, s.realPath(exe))
		for _, lib := range s.libraries(s.realPath(exe)) {
			tools = append(tools, lib[1])
		}
	}
	var absent []string
	if cand != nil {
		for _, h := range cand.Headers {
			// (As this build found it: a header hashed again may have
			// another stat than the set recorded.)
			if fi := s.files.peek(h.Path); fi != nil && fi.err == nil && fi.stat != (FileStat{}) {
				reads[h.Path] = fi.stat
			} else {
				reads[h.Path] = h.Stat
			}
		}
		absent = cand.Absent
	}
	s.cmd.mu.Lock()
	defer s.cmd.mu.Unlock()
	if broken {
		s.cmd.broken = true
	}
	if s.cmd.noted == nil {
		s.cmd.noted, s.cmd.reads, s.cmd.tools, s.cmd.absent = map[*actions.Action]bool{}, map[string]FileStat{}, map[string]bool{}, map[string]bool{}
	}
	for _, t := range tools {
		s.cmd.tools[t] = true
	}
	s.cmd.noted[a] = true
	for p, st := range reads {
		if old, ok := s.cmd.reads[p]; ok && old != st {
			s.cmd.broken = true // changed during the build
		}
		s.cmd.reads[p] = st
	}
	for _, p := range absent {
		s.cmd.absent[p] = true
	}
	s.cmd.texts = append(s.cmd.texts, ak.text)
}

// commandResultKey is the key of a command entry's result: its manifest's
// key and what its candidate c lists (the files read, by path and stat,
// and the absent paths).
//
// The text is hashed as it is written: with a compile's absent include
// probes it runs to about 100 KB, which a warm hit would otherwise build
// in memory (and fault in) for every candidate it checks.
func commandResultKey(mk Sum, c *candidate) Sum {
	h := sha256.New()
	w := bufio.NewWriterSize(h, 4096)
	writeKeyLine(w, "command-result", mk.String())
	for _, hd := range c.Headers {
		writeKeyLine(w, "read", hd.Path, fmt.Sprintf("size=%d mtime=%d ctime=%d dev=%d ino=%d", hd.Stat.Size, hd.Stat.Mtime, hd.Stat.Ctime, hd.Stat.Dev, hd.Stat.Ino))
	}
	for _, p := range c.Absent {
		writeKeyLine(w, "absent", p)
	}
	w.Flush() // (a hash's Write never fails)
	var sum Sum
	h.Sum(sum[:0])
	return sum
}

// StoreCommand stores the command entry of a build that succeeded, after
// its jobs: g is its graph, whose outputs outside the temporary directory
// are the command's. It stores nothing where an action was not served or
// stored by the cache, printed anything, or read a file that had not
// settled; errors are ignored (the entry only saves time).
func (s *Session) StoreCommand(key CommandKey, g *actions.Graph) {
	if !s.c.Writable() || key.Exact == "" {
		return
	}
	s.pending.Wait() // the jobs' own entries first
	if why := s.storeCommand(key, g); why != "" {
		s.explainf("command: not stored: %s\n", why)
	}
}

func (s *Session) storeCommand(key CommandKey, g *actions.Graph) string {
	s.cmd.mu.Lock()
	defer s.cmd.mu.Unlock()
	if s.cmd.broken {
		return "a job ran, was not cacheable, printed something or read what a command entry cannot list"
	}
	if len(s.cmd.noted) != len(g.Actions) {
		return fmt.Sprintf("%d of its %d jobs went through the cache", len(s.cmd.noted), len(g.Actions))
	}
	temp := s.tempDir + string(filepath.Separator)
	var outs []string
	for _, a := range g.Actions {
		if !s.cmd.noted[a] {
			return "a job did not go through the cache"
		}
		for _, o := range a.Outputs {
			if !strings.HasPrefix(o.Path, temp) {
				outs = append(outs, o.Path)
			}
		}
	}
	if len(outs) == 0 {
		return "it writes no file"
	}
	// The tools, and offcc itself: how it turns the plan into jobs is
	// part of the result, which its job keys hold and a command entry's
	// key does not.
	if s.self != "" {
		s.cmd.tools[s.self] = true
	}
	for p := range s.cmd.tools {
		if strings.HasPrefix(p, temp) {
			continue
		}
		st, err := statPath(p)
		if err != nil {
			return fmt.Sprintf("cannot stat %s: %v", p, err)
		}
		s.cmd.reads[p] = st
	}
	c := &candidate{}
	for p, st := range s.cmd.reads {
		if !st.trusted(key.Start) {
			return fmt.Sprintf("%s changed less than %v before the build", p, trustStatAge)
		}
		// (The tools were stated just now.)
		if !s.cmd.tools[p] {
			if now, err := statPath(p); err != nil || now != st {
				return fmt.Sprintf("%s changed during the build", p)
			}
		}
		c.Headers = append(c.Headers, header{Path: p, Stat: st, Trust: true})
	}
	sort.Slice(c.Headers, func(i, j int) bool { return c.Headers[i].Path < c.Headers[j].Path })
	for p := range s.cmd.absent {
		c.Absent = append(c.Absent, p)
	}
	sort.Strings(c.Absent)
	for _, o := range outs {
		if !key.mayWrite(o) {
			return fmt.Sprintf("it writes %s, which its command line does not name", o)
		}
	}
	moved := key.Moved != "" && key.Output != "" && len(outs) == 1 && absName(outs[0]) == absName(key.Output)
	for _, text := range s.cmd.texts {
		for _, p := range key.Places {
			if p != "" && strings.Contains(text, p) {
				moved = false
			}
		}
	}
	mk := key.manifestKey(moved)
	rk := commandResultKey(mk, c)
	c.Result = rk.String()
	rec := commandRecord{}
	if !moved {
		rec.Outputs = outs
	}
	s.mu.Lock()
	for _, k := range s.stats.Kinds {
		rec.Millis += k.SavedMillis // every job was a hit
	}
	s.mu.Unlock()
	data, _ := json.Marshal(rec)
	e := &Entry{Kind: KindCommand, Record: data}
	for i, o := range outs {
		s.files.forget(o)
		fi := s.files.get(o)
		if fi.err != nil {
			return fmt.Sprintf("cannot read %s: %v", o, fi.err)
		}
		mode := uint32(0o666)
		if fi.exec {
			mode = 0o777
		}
		e.Blobs = append(e.Blobs, Blob{Name: fmt.Sprintf("out%d", i), Size: fi.stat.Size, Sum: fi.sum, Mode: mode, Path: o})
	}
	if err := s.c.Store.Put(rk, e); err != nil {
		return err.Error()
	}
	addCandidateTo(s.c.Store, KindCommandManifest, mk, c)
	how := "exact"
	if moved {
		how = "moved"
	}
	s.explainf("command: stored (%s, %s key)\n", rk.String()[:16], how)
	return ""
}

// RestoreCommand looks the command up (its moved entry, then its exact
// one) and, on a hit, writes its outputs and reports true: the build is
// done. A miss, or an output that cannot be restored, reports false and
// leaves the build to its jobs (an output already written is rewritten by
// them).
func (s *Session) RestoreCommand(key CommandKey) bool {
	if key.Exact == "" || s.c.Mode == Off {
		return false
	}
	for _, moved := range []bool{true, false} {
		if moved && (key.Moved == "" || key.Output == "") {
			continue
		}
		mk := key.manifestKey(moved)
		e, err := s.c.Store.Get(mk)
		if err != nil || e.Kind != KindCommandManifest {
			continue
		}
		m, err := decodeManifest(e.Record)
		if err != nil {
			continue
		}
		for i := range m.Candidates {
			c := &m.Candidates[i]
			if !s.commandFits(c) {
				continue
			}
			rk, err := ParseSum(c.Result)
			if err != nil || rk != commandResultKey(mk, c) {
				continue
			}
			if s.restoreCommand(rk, moved, key) {
				return true
			}
		}
	}
	return false
}

// commandFits reports whether every file a command entry lists has the
// stat it had, and every absent path is still absent.
func (s *Session) commandFits(c *candidate) bool {
	for _, h := range c.Headers {
		if !h.Trust {
			return false
		}
		st, err := statPath(h.Path)
		if err != nil || st != h.Stat {
			return false
		}
	}
	for _, p := range c.Absent {
		if s.probes.present(p) {
			return false
		}
	}
	return true
}

// restoreCommand writes the outputs of the command entry rk.
func (s *Session) restoreCommand(rk Sum, moved bool, key CommandKey) bool {
	e, err := s.c.Store.Get(rk)
	if err != nil || e.Kind != KindCommand {
		return false
	}
	var rec commandRecord
	if json.Unmarshal(e.Record, &rec) != nil {
		return false
	}
	paths := rec.Outputs
	if moved {
		paths = []string{key.Output}
	}
	if len(paths) != len(e.Blobs) || len(paths) == 0 {
		return false
	}
	for _, p := range paths {
		if !key.mayWrite(p) {
			s.explainf("command: entry %s names %q, which the command does not write: not used\n", rk.String()[:16], p)
			return false
		}
	}
	var bytes int64
	for i, b := range e.Blobs {
		if b.Name != fmt.Sprintf("out%d", i) {
			return false
		}
		bytes += b.Size
	}
	for i, b := range e.Blobs {
		if err := s.writeBlobFrom(s.c.Store, paths[i], b); err != nil {
			return false
		}
	}
	s.mu.Lock()
	k := s.stats.Kinds[string(KindCommand)]
	if k == nil {
		k = &KindStats{}
		s.stats.Kinds[string(KindCommand)] = k
	}
	k.Hits++
	k.RestoredBytes += bytes
	k.SavedMillis += max(rec.Millis, 0)
	s.mu.Unlock()
	s.explainf("command: hit (%s)\n", rk.String()[:16])
	return true
}
