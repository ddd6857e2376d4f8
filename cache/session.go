package cache

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/offcc/offcc/actions"
	"github.com/offcc/offcc/internal/atomicfile"
	"github.com/offcc/offcc/internal/ompinfo"
	"github.com/offcc/offcc/options"
)

// SessionOptions describe one build for its Session.
type SessionOptions struct {
	// TempDir is the build's private temporary directory: files in it
	// are named in keys by role, not by path.
	TempDir string
	// PrepareTempDir, when non-nil, makes TempDir if it is not made yet:
	// the session calls it before it writes a file there (Flush, a
	// restored output it does not keep in memory).
	PrepareTempDir func() error
	// Self is the offcc executable, whose bytes key in-process steps.
	Self string
	// Env is the build's environment.
	Env []string
	// Label names the build among others of the same directory (its
	// inputs and output), for explanations of misses.
	Label string
	// Explain, when non-nil, receives one paragraph per action: hit or
	// miss, and for a miss what changed (OFFCC_CACHE_DEBUG, offcc cache
	// explain).
	Explain io.Writer
	// Warn, when non-nil, is told once if the cache cannot be written
	// (a line such as "build cache: cannot write DIR: REASON"); the
	// build goes on without storing.
	Warn func(message string)
	// Options are the option tables of the LLVM release whose commands
	// the build runs, which the session reads them with (nil: the newest
	// release's, options.ClangDriver's).
	Options *options.Tables
}

// Session is the cache as one build sees it: it implements actions.Cache,
// and counts what happened for the statistics. Its methods are safe for
// concurrent use.
type Session struct {
	c *Cache
	// tables read the build's commands (nil: the newest release's).
	tables  *options.Tables
	store   Store
	layered *Layered // store, when a shared cache is behind the local one
	tempDir string
	prepare func() error // SessionOptions.PrepareTempDir
	self    string
	env     map[string]string // the build's environment, last value of a name
	label   string
	explain io.Writer
	warn    func(string)
	warned  sync.Once

	files  *fileDigests
	tools  *toolDigests
	probes pathProbes   // shadowing checks of lookups
	absent absentPaths  // shadowing paths of stored header sets
	cmd    commandFacts // what the build read, for its command entry

	pending sync.WaitGroup // entries being written

	// deferred are restored outputs in the temporary directory that no
	// action has needed yet (see restore); deferMu is held while they
	// are written.
	deferMu     sync.Mutex
	deferred    []deferredFile
	deferredLen int64

	mu      sync.Mutex
	libs    map[string][][2]string
	reals   map[string]string // executables' paths after links
	derived map[Sum]*derivedDigest
	stats   Stats
	wrote   bool
}

// NewSession starts a build's use of the cache.
func (c *Cache) NewSession(opt SessionOptions) *Session {
	tempDir := filepath.Clean(opt.TempDir)
	if opt.TempDir == "" {
		tempDir = "\x00no temporary directory"
	}
	s := &Session{
		c: c, store: c.Store, tempDir: tempDir, prepare: opt.PrepareTempDir, self: opt.Self, env: envMap(opt.Env),
		label: opt.Label, explain: opt.Explain, warn: opt.Warn, tables: opt.Options,
		files: newFileDigests(tempDir, newDigestMemo(c.Store, c.Writable())), tools: newToolDigests(c.Store, c.Writable()),
		libs: map[string][][2]string{}, reals: map[string]string{}, derived: map[Sum]*derivedDigest{}, stats: Stats{Kinds: map[string]*KindStats{}},
	}
	if c.Remote != nil {
		s.layered = &Layered{Local: c.Store, Remote: c.Remote, ReadOnly: c.RemoteReadOnly || !c.Writable(),
			Sign: c.signingKey(), Trusted: c.trustedKeys(), Insecure: c.RemoteInsecure,
			Name: c.RemoteName, Warn: opt.Warn}
		if opt.Explain != nil {
			s.layered.Debug = func(msg string) { s.explainf("%s\n", msg) }
		}
		s.store = s.layered
	}
	return s
}

// envMap maps KEY=VALUE pairs by name; a later pair wins, as for exec.
func envMap(env []string) map[string]string {
	m := make(map[string]string, len(env))
	for _, kv := range env {
		name, value, _ := strings.Cut(kv, "=")
		m[name] = value
	}
	return m
}

func (s *Session) hasEnv(name string) bool {
	_, ok := s.env[name]
	return ok
}

// resultRecord is the record of a KindResult entry.
type resultRecord struct {
	Kind   string `json:"kind"`
	Stdout string `json:"stdout,omitempty"`
	Stderr string `json:"stderr,omitempty"`
	// Millis is how long the action ran: the time a hit saves.
	Millis int64 `json:"ms"`
}

// lastRecord is what explain compares a miss with: the first-level key
// text last stored for the same action of the same build.
type lastRecord struct {
	Text     string `json:"text"`
	Manifest string `json:"manifest,omitempty"`
}

// cachedRun is one action's dealings with the cache.
type cachedRun struct {
	s      *Session
	a      *actions.Action
	status string
	ak     *actionKey
	start  time.Time
	stdout []byte
	stderr []byte
	hit    bool
}

// Status is "hit", "miss" or "uncacheable: REASON".
func (r *cachedRun) Status() string { return r.status }

// Hit returns the restored run's output on a hit.
func (r *cachedRun) Hit() ([]byte, []byte, bool) { return r.stdout, r.stderr, r.hit }

// Begin looks a up: on a hit its outputs are restored.
func (s *Session) Begin(ctx context.Context, a *actions.Action) actions.CachedRun {
	r := &cachedRun{s: s, a: a, start: time.Now()}
	ak, why := s.key(a)
	if why != "" {
		r.status = "uncacheable: " + why
		s.count(a, func(k *KindStats) { k.uncacheable(why) })
		s.breakCommand()
		return r
	}
	r.ak = ak
	r.status = "miss"
	rk, cand, found := s.lookupKey(a, ak)
	if found {
		if rec, ok := s.restore(a, rk); ok {
			r.hit, r.status = true, "hit"
			r.stdout, r.stderr = []byte(rec.Stdout), []byte(rec.Stderr)
			if cand != nil {
				a.Discovered = a.Discovered[:0]
				for _, h := range cand.Headers {
					a.Discovered = append(a.Discovered, h.Path)
				}
			}
			if quiet(r.stdout, r.stderr) {
				s.noteCommand(a, ak, cand)
			} else {
				s.breakCommand()
			}
			s.count(a, func(k *KindStats) {
				k.Hits++
				k.SavedMillis += rec.Millis
			})
			s.explainf("%s: hit (%s)\n", a.Label(), rk.String()[:16])
			return r
		}
	}
	s.count(a, func(k *KindStats) { k.Misses++ })
	if s.explain != nil {
		s.explainMiss(a, ak)
	}
	return r
}

// lookupKey finds the result key for a: the only one for an action that
// reads no undeclared files, else the first candidate of its manifest that
// fits the files on disk.
func (s *Session) lookupKey(a *actions.Action, ak *actionKey) (Sum, *candidate, bool) {
	if a.DepFile == "" {
		rk, _ := resultKey(ak, nil, nil, false)
		return rk, nil, true
	}
	e, err := s.store.Get(ak.sum)
	if err != nil || e.Kind != KindManifest {
		return Sum{}, nil, false
	}
	m, err := decodeManifest(e.Record)
	if err != nil {
		return Sum{}, nil, false
	}
	return s.match(m, ak)
}

// restore writes a's outputs from the result entry rk. A damaged entry is
// removed (the run that follows stores a sound one) and is a miss.
func (s *Session) restore(a *actions.Action, rk Sum) (*resultRecord, bool) {
	e, err := s.store.Get(rk)
	if err != nil || e.Kind != KindResult || len(e.Blobs) != len(a.Outputs) {
		return nil, false
	}
	var rec resultRecord
	if fast, ok := fastResult(e.Record); ok {
		rec = *fast
	} else if json.Unmarshal(e.Record, &rec) != nil {
		s.store.Remove(rk)
		return nil, false
	}
	for i, b := range e.Blobs {
		if b.Name != fmt.Sprintf("out%d", i) {
			s.store.Remove(rk)
			return nil, false
		}
	}
	var bytes int64
	var later []deferredFile
	for i, out := range a.Outputs {
		b := e.Blobs[i]
		var err error
		deferred := s.deferrable(out.Path, b.Size, bytesOf(later))
		if deferred {
			var data []byte
			if data, err = s.readBlob(b); err == nil {
				later = append(later, deferredFile{path: out.Path, data: data, mode: b.Mode})
			}
		} else {
			err = s.prepareTemp(out.Path)
			if err == nil {
				err = s.writeBlob(out.Path, b)
			}
		}
		if err != nil {
			var be *blobError
			if errors.As(err, &be) {
				// The entry is damaged or vanished: the run that
				// follows replaces it. (An output that cannot be
				// written is the run's to report.)
				s.store.Remove(rk)
			}
			return nil, false
		}
		fi := &fileInfo{sum: b.Sum}
		if !deferred {
			if st, err := statPath(out.Path); err == nil {
				fi.stat = st
			}
		}
		s.files.set(out.Path, fi)
		bytes += b.Size
	}
	if len(later) > 0 {
		s.deferMu.Lock()
		s.deferred = append(s.deferred, later...)
		s.deferredLen += bytesOf(later)
		s.deferMu.Unlock()
	}
	s.count(a, func(k *KindStats) { k.RestoredBytes += bytes })
	return &rec, true
}

// prepareTemp makes the temporary directory, if path is in it.
func (s *Session) prepareTemp(path string) error {
	if s.prepare == nil || !strings.HasPrefix(path, s.tempDir+string(filepath.Separator)) {
		return nil
	}
	return s.prepare()
}

// deferredFile is a restored output not written yet: its bytes, checked
// against the entry's digest as they were read.
type deferredFile struct {
	path string
	data []byte
	mode uint32
}

func bytesOf(files []deferredFile) int64 {
	var n int64
	for _, f := range files {
		n += int64(len(f.data))
	}
	return n
}

// The most bytes of one restored output, and of all of a build's, that
// wait in memory to be written (see deferrable).
const (
	maxDeferredFile  = 16 << 20
	maxDeferredBytes = 64 << 20
)

// deferrable reports whether a restored output of size bytes may wait in
// memory until an action needs it (Flush): a file in the build's
// temporary directory, which only the build's own actions read, of at
// most maxDeferredFile bytes, while those waiting (and pending more, of
// the same entry) stay under maxDeferredBytes. A build whose every action
// hits writes none of them: only the outputs the user asked for. Their
// bytes are verified as they are read, as an output written at once is;
// a damaged entry is a miss either way.
func (s *Session) deferrable(path string, size, pending int64) bool {
	if !strings.HasPrefix(path, s.tempDir+string(filepath.Separator)) || size > maxDeferredFile {
		return false
	}
	s.deferMu.Lock()
	defer s.deferMu.Unlock()
	return s.deferredLen+pending+size <= maxDeferredBytes
}

// readBlob reads a blob's bytes, verifying them; a fault of the blob is a
// *blobError.
func (s *Session) readBlob(b Blob) ([]byte, error) {
	src, err := s.store.OpenBlob(b)
	if err != nil {
		return nil, &blobError{err}
	}
	defer src.Close()
	data := make([]byte, b.Size)
	if _, err := io.ReadFull(src, data); err != nil {
		return nil, &blobError{err}
	}
	// The verifier checks the digest at the end, and that there is no
	// more.
	if n, err := src.Read(make([]byte, 1)); n != 0 || err != io.EOF {
		if err == nil || err == io.EOF {
			err = ErrCorrupt
		}
		return nil, &blobError{err}
	}
	return data, nil
}

// Flush makes the temporary directory (SessionOptions.PrepareTempDir)
// and writes the restored outputs that wait in memory (see deferrable).
// The executor calls it before an action that the cache did not serve
// runs (actions.Flusher): that action, or an expansion, may read them and
// write into the directory. It returns the first failure.
func (s *Session) Flush() error {
	if s.prepare != nil {
		// (The action about to run writes its outputs there.)
		if err := s.prepare(); err != nil {
			return err
		}
	}
	s.deferMu.Lock()
	defer s.deferMu.Unlock()
	for len(s.deferred) > 0 {
		f := s.deferred[0]
		mode := os.FileMode(f.mode)
		if mode == 0 {
			mode = 0o666
		}
		if err := atomicfile.Write(f.path, f.data, mode); err != nil {
			return fmt.Errorf("cannot write %s restored from the build cache: %v", f.path, err)
		}
		if st, err := statPath(f.path); err == nil {
			if fi := s.files.peek(f.path); fi != nil {
				written := *fi
				written.stat = st
				s.files.set(f.path, &written)
			}
		}
		s.deferred[0] = deferredFile{}
		s.deferred = s.deferred[1:]
		s.deferredLen -= int64(len(f.data))
	}
	return nil
}

// blobError is a stored blob that cannot be read or is not its bytes.
type blobError struct{ err error }

func (e *blobError) Error() string { return e.err.Error() }

// writeBlob writes a blob's bytes to path atomically, verifying them. A
// fault of the blob is a *blobError.
func (s *Session) writeBlob(path string, b Blob) error { return s.writeBlobFrom(s.store, path, b) }

// writeBlobFrom is writeBlob with the blob in store.
func (s *Session) writeBlobFrom(store Store, path string, b Blob) error {
	src, err := store.OpenBlob(b)
	if err != nil {
		return &blobError{err}
	}
	defer src.Close()
	f, err := atomicfile.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, src); err != nil {
		f.Abort()
		if errors.Is(err, ErrCorrupt) {
			return &blobError{err}
		}
		var pe *os.PathError
		if errors.As(err, &pe) && pe.Path == b.Path {
			return &blobError{err}
		}
		return err
	}
	mode := os.FileMode(b.Mode)
	if mode == 0 {
		mode = 0o666
	}
	return f.Commit(mode)
}

// Done stores a's outputs after a successful run.
func (r *cachedRun) Done(stdout, stderr []byte, err error) {
	s, a := r.s, r.a
	if r.hit {
		return
	}
	// A build that runs a job stores no command entry.
	s.breakCommand()
	if err != nil || r.ak == nil || !s.c.Writable() {
		return
	}
	if why := s.store1(r, stdout, stderr); why != "" {
		s.count(a, func(k *KindStats) { k.notStored(why) })
		s.explainf("%s: not stored: %s\n", a.Label(), why)
	}
}

func (s *Session) store1(r *cachedRun, stdout, stderr []byte) string {
	a, ak := r.a, r.ak
	// A user file edited while the action read it: the outputs may be of
	// either version, so they are not stored under the digest taken.
	var sources []string
	temp := s.tempDir + string(filepath.Separator)
	for _, f := range a.AllInputs() {
		if strings.HasPrefix(f.Path, temp) {
			continue
		}
		sources = append(sources, f.Path)
		before := s.files.peek(f.Path)
		st, err := statPath(f.Path)
		if before == nil || err != nil || st != before.stat || st.changedSince(r.start.Add(-changeSlack)) {
			return "input modified during the compile"
		}
		if before.timeMacros && ak.frontEnd() && !s.hasEnv("SOURCE_DATE_EPOCH") {
			return "__DATE__ or __TIME__ in the sources"
		}
	}
	var headers []header
	var absent []string
	var cand *candidate
	if a.DepFile != "" {
		var why string
		cand, why = s.newCandidate(ak, sources, a.Discovered, r.start)
		if why != "" {
			return why
		}
		headers, absent = cand.Headers, cand.Absent
	}
	inodes := false
	if ak.frontEndOpenMP && ak.stableNames {
		for _, out := range a.Outputs {
			if data, err := os.ReadFile(out.Path); err != nil || ompinfo.InodeNamed(data) {
				inodes = true
			}
		}
		if cand != nil {
			cand.Inodes = inodes
		}
	}
	rk, _ := resultKey(ak, headers, absent, inodes)
	rec := resultRecord{Kind: a.Kind.String(), Stdout: string(stdout), Stderr: string(stderr), Millis: time.Since(r.start).Milliseconds()}
	recData, _ := json.Marshal(rec)
	e := &Entry{Kind: KindResult, Record: recData}
	var size int64
	for i, out := range a.Outputs {
		s.files.forget(out.Path)
		fi := s.files.get(out.Path)
		if fi.err != nil {
			return "an output file is missing"
		}
		mode := uint32(0o666)
		if fi.exec {
			mode = 0o777
		}
		e.Blobs = append(e.Blobs, Blob{Name: fmt.Sprintf("out%d", i), Size: fi.stat.Size, Sum: fi.sum, Mode: mode, Path: out.Path})
		size += fi.stat.Size
	}
	// The entry is written (compressed, renamed into place) while the
	// build goes on: the jobs after this one need only the outputs'
	// digests, known now. Close waits for the writes. The store takes
	// the digests as given: an output changed meanwhile is stored with
	// bytes that fail them, which every reader verifies (a miss, and the
	// entry removed), never a wrong hit.
	s.pending.Add(1)
	go func() {
		defer s.pending.Done()
		if err := s.store.Put(rk, e); err != nil {
			why := "cannot write the cache: " + err.Error()
			if s.warn != nil {
				s.warned.Do(func() {
					s.warn(fmt.Sprintf("build cache: cannot write %s: %v (jobs still run; OFFCC_CACHE=0 turns the cache off)", s.c.Dir, err))
				})
			}
			s.count(a, func(k *KindStats) { k.notStored(why) })
			s.explainf("%s: not stored: %s\n", a.Label(), why)
			return
		}
		if cand != nil {
			cand.Result = rk.String()
			s.addCandidate(ak.sum, cand)
		}
		s.putLast(a, lastRecord{Text: ak.text, Manifest: ak.sum.String()})
		s.mu.Lock()
		s.wrote = true
		s.mu.Unlock()
		s.count(a, func(k *KindStats) { k.StoredBytes += size })
	}()
	return ""
}

// frontEnd reports whether the key is of a compile from source.
func (ak *actionKey) frontEnd() bool { return len(ak.searchDirs) > 0 || ak.frontEndOpenMP }

// addCandidate puts cand first in the manifest under key (read, changed
// and replaced; a concurrent writer's candidate may be lost, which only
// costs a later miss).
func (s *Session) addCandidate(key Sum, cand *candidate) {
	addCandidateTo(s.store, KindManifest, key, cand)
}

// addCandidateTo is addCandidate for the manifest of kind (a job's or a
// command's) in store.
func addCandidateTo(store Store, kind Kind, key Sum, cand *candidate) {
	m := &manifest{}
	if e, err := store.Get(key); err == nil && e.Kind == kind {
		if old, err := decodeManifest(e.Record); err == nil {
			m = old
		}
	}
	list := []candidate{*cand}
	for _, c := range m.Candidates {
		if c.Result != cand.Result && len(list) < maxCandidates {
			list = append(list, c)
		}
	}
	m.Candidates = list
	data, _ := json.Marshal(m)
	store.Replace(key, &Entry{Kind: kind, Record: data})
}

// slotKey names an action of a build across runs: its kind, target and
// the user's files it reads and writes, in the build labelled s.label.
func (s *Session) slotKey(a *actions.Action) Sum {
	var k keyText
	k.add("last", keyVersion, s.label, a.Kind.String(), a.SideName(), a.Target.Triple, a.Target.Arch)
	temp := s.tempDir + string(filepath.Separator)
	for _, f := range append(a.AllInputs(), a.Outputs...) {
		if !strings.HasPrefix(f.Path, temp) {
			k.add("file", f.Path)
		}
	}
	return sha256.Sum256([]byte(k.String()))
}

func (s *Session) putLast(a *actions.Action, rec lastRecord) {
	data, _ := json.Marshal(rec)
	s.store.Replace(s.slotKey(a), &Entry{Kind: KindLast, Record: data})
}

func (s *Session) explainf(format string, args ...any) {
	if s.explain == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	fmt.Fprintf(s.explain, format, args...)
}

// count applies f to a's kind's counters.
func (s *Session) count(a *actions.Action, f func(*KindStats)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	name := a.Kind.String()
	k := s.stats.Kinds[name]
	if k == nil {
		k = &KindStats{}
		s.stats.Kinds[name] = k
	}
	f(k)
}

// CountUncacheable counts an action that runs without the session (as
// clang's driver does when offcc hands it a command line it could not
// plan) as uncacheable, with its reason.
func (s *Session) CountUncacheable(a *actions.Action) {
	why := s.uncacheable(a)
	if why == "" {
		why = "run without the cache"
	}
	s.count(a, func(k *KindStats) { k.uncacheable(why) })
}

// Stats returns what the session counted so far, once the entries it
// is writing are written.
func (s *Session) Stats() Stats {
	s.pending.Wait()
	s.mu.Lock()
	st := s.stats.clone()
	s.mu.Unlock()
	if s.layered != nil {
		st.Remote = s.layered.Stats()
	}
	return st
}

// Close adds the session's counts to the cache's statistics and trims the
// cache if it stored something and the last trim is TrimInterval ago.
func (s *Session) Close() {
	s.pending.Wait()
	s.files.memo.flush()
	s.mu.Lock()
	st, wrote := s.stats.clone(), s.wrote
	s.mu.Unlock()
	if s.layered != nil {
		st.Remote = s.layered.Stats()
		if c, ok := s.c.Remote.(io.Closer); ok {
			c.Close()
		}
	}
	s.c.addStats(st)
	if wrote {
		s.c.MaybeTrim(time.Now())
	}
}

// Probe says, without running or restoring anything, what the cache holds
// for a: its result key and "hit" when a sound-looking result is stored,
// its first-level key and "miss" when not, no key and "uncacheable:
// REASON", or no key when a reads files the build has yet to write (its
// key depends on their contents).
func (s *Session) Probe(a *actions.Action) (key, status string) {
	if why := s.uncacheable(a); why != "" {
		return "", "uncacheable: " + why
	}
	for _, f := range a.AllInputs() {
		if f.Producer() != nil {
			return "", "keyed once its inputs are built"
		}
	}
	ak, why := s.key(a)
	if why != "" {
		return "", "uncacheable: " + why
	}
	if rk, _, found := s.lookupKey(a, ak); found {
		if e, err := s.store.Get(rk); err == nil && e.Kind == KindResult && len(e.Blobs) == len(a.Outputs) {
			return rk.String(), "hit"
		}
	}
	return ak.sum.String(), "miss"
}
