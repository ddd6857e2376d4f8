package cache

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Direct mode. An action that reads headers planning does not know (a
// compile with a dependency file) has a manifest under its first-level
// key: the header sets seen so far, each with the result it gave. A lookup
// checks each set against the files now there (a header whose size,
// times, device and inode are those recorded is taken as unchanged, else
// it is hashed again) and takes the first that matches. Beyond ccache, each
// set also lists the paths where a header of the same name would have been
// found first had it existed (earlier include directories, the including
// files' directories): a file created at one of them since is a miss.

// maxCandidates bounds a manifest; the oldest sets are dropped.
const maxCandidates = 16

// manifest is the record of a KindManifest entry.
type manifest struct {
	Candidates []candidate `json:"candidates"`
}

// candidate is one header set and the result it gave.
type candidate struct {
	Headers []header `json:"headers"`
	// Absent lists paths that did not exist when the set was recorded
	// and would shadow one of its headers if they did.
	Absent []string `json:"absent,omitempty"`
	Result string   `json:"result"`
	// Inodes: the result of an OpenMP front end with stable names still
	// holds kernel names made from files' device and inode numbers, so
	// the headers must be the same files, not only the same bytes.
	Inodes bool `json:"inodes,omitempty"`
}

// header is one file the action read.
type header struct {
	Path string   `json:"path"`
	Sum  string   `json:"sha256"`
	Stat FileStat `json:"stat"`
	// Trust: the stat may stand for the digest (the file was old enough
	// when hashed).
	Trust bool `json:"trust,omitempty"`
}

func decodeManifest(data []byte) (*manifest, error) {
	if m, ok := fastManifest(data); ok {
		return m, nil
	}
	var m manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, err
	}
	return &m, nil
}

// match returns the result key of the first candidate that fits the files
// now on disk, and the candidate.
func (s *Session) match(m *manifest, ak *actionKey) (Sum, *candidate, bool) {
	for i := range m.Candidates {
		c := &m.Candidates[i]
		if s.candidateFits(c, ak) {
			sum, err := ParseSum(c.Result)
			if err != nil {
				continue
			}
			return sum, c, true
		}
	}
	return Sum{}, nil, false
}

func (s *Session) candidateFits(c *candidate, ak *actionKey) bool {
	return s.candidateMismatch(c, ak) == ""
}

// candidateMismatch says what on disk differs from a header set: the
// first header that changed or is another file, or a shadowing file that
// appeared; "" when the set fits.
func (s *Session) candidateMismatch(c *candidate, ak *actionKey) string {
	for _, h := range c.Headers {
		want, err := ParseSum(h.Sum)
		if err != nil {
			return fmt.Sprintf("header %s: a damaged digest", h.Path)
		}
		fi := s.files.peek(h.Path)
		if fi == nil {
			st, err := statPath(h.Path)
			if err != nil {
				return fmt.Sprintf("header %s: %v", h.Path, err)
			}
			if h.Trust && st == h.Stat {
				fi = &fileInfo{stat: st, sum: want, settled: true}
				s.files.set(h.Path, fi)
			} else {
				fi = s.files.get(h.Path)
			}
		}
		switch {
		case fi.err != nil:
			return fmt.Sprintf("header %s: %v", h.Path, fi.err)
		case fi.sum != want:
			return fmt.Sprintf("header %s changed (sha256 %s..., was %s...)", h.Path, fi.sum.String()[:12], h.Sum[:12])
		case ak.frontEndOpenMP && (!ak.stableNames || c.Inodes) && (fi.stat.Dev != h.Stat.Dev || fi.stat.Ino != h.Stat.Ino):
			return fmt.Sprintf("header %s is another file (inode), which OpenMP kernel names depend on", h.Path)
		}
	}
	for _, p := range c.Absent {
		if s.probes.present(p) {
			return fmt.Sprintf("new file %s shadows a header it read", p)
		}
	}
	return ""
}

// resultKey is the second-level key: the first-level key and the headers
// read (for an OpenMP front end, which files they are where the result's
// kernel names depend on it: inodes).
func resultKey(ak *actionKey, headers []header, absent []string, inodes bool) (Sum, string) {
	var k keyText
	k.WriteString(ak.text)
	// Never the first-level key itself, under which a manifest may be.
	k.add("result")
	for _, h := range headers {
		k.add("header", h.Path, "sha256="+h.Sum)
		if ak.frontEndOpenMP && (!ak.stableNames || inodes) {
			k.add("file-id", h.Path, fmt.Sprintf("dev=%d ino=%d", h.Stat.Dev, h.Stat.Ino))
		}
	}
	for _, p := range absent {
		k.add("absent", p)
	}
	text := k.String()
	return sha256.Sum256([]byte(text)), text
}

// shadowPaths returns, for the headers an action read, the paths that do
// not exist now and where the preprocessor would have found a header of
// the same name before the one it read: the same name under every include
// directory searched before the one the header was found in, and under
// the directories of the files that include headers by quoted name (the
// source's and the non-system headers'). The directory a header was found
// in is taken as each search directory its path starts with.
func shadowPaths(source []string, headers []string, dirs []string, exists func(string) bool) []string {
	var includers []string
	seenDir := map[string]bool{}
	isSystem := func(p string) bool {
		for _, d := range dirs {
			if strings.HasPrefix(p, d+"/") && (strings.HasPrefix(d, "/usr/") || strings.HasPrefix(d, "/opt/")) {
				return true
			}
		}
		return false
	}
	for _, f := range append(append([]string(nil), source...), headers...) {
		if isSystem(f) {
			continue
		}
		d := filepath.Dir(f)
		if !seenDir[d] {
			seenDir[d] = true
			includers = append(includers, d)
		}
	}
	var out []string
	seen := map[string]bool{}
	add := func(p string) {
		p = filepath.Clean(p)
		if seen[p] {
			return
		}
		seen[p] = true
		if !exists(p) {
			out = append(out, p)
		}
	}
	for _, h := range headers {
		for i, d := range dirs {
			rel, ok := strings.CutPrefix(h, d+"/")
			if !ok || rel == "" {
				continue
			}
			for _, inc := range includers {
				add(filepath.Join(inc, rel))
			}
			for _, earlier := range dirs[:i] {
				add(filepath.Join(earlier, rel))
			}
		}
	}
	return out
}

// absentPaths memoises, for one build, the paths its header sets found
// absent (shadowPaths probes the same few thousand for each of a HIP
// compile's front ends). Only absence is kept: a path found absent that
// appears later is still found by every lookup (candidateMismatch probes
// it), so a stale "absent" costs a miss at most, while a stale "present"
// would leave a path out of a set that a file created there later must
// invalidate.
type absentPaths struct {
	mu     sync.Mutex
	absent map[string]bool
}

// exists reports whether lstat finds p, or false when this build found
// it absent before.
func (a *absentPaths) exists(p string) bool {
	a.mu.Lock()
	gone := a.absent[p]
	a.mu.Unlock()
	if gone {
		return false
	}
	if exists(p) {
		return true
	}
	a.mu.Lock()
	if a.absent == nil {
		a.absent = map[string]bool{}
	}
	a.absent[p] = true
	a.mu.Unlock()
	return false
}

// newCandidate records the headers an action read after it ran, with the
// files' stats as they are now. It fails (a reason to not store) when a
// header cannot be read or changed during the action.
func (s *Session) newCandidate(ak *actionKey, sources, discovered []string, start time.Time) (*candidate, string) {
	c := &candidate{}
	now := time.Now()
	seen := map[string]bool{}
	for _, p := range discovered {
		if seen[p] {
			continue
		}
		seen[p] = true
		fi := s.files.current(p) // what is there now
		if fi.err != nil {
			return nil, "a header it read cannot be read"
		}
		if fi.stat.changedSince(start.Add(-changeSlack)) {
			return nil, "input modified during the compile"
		}
		if fi.timeMacros && !s.hasEnv("SOURCE_DATE_EPOCH") {
			return nil, "__DATE__ or __TIME__ in the sources"
		}
		c.Headers = append(c.Headers, header{Path: p, Sum: fi.sum.String(), Stat: fi.stat, Trust: fi.stat.trusted(now)})
	}
	c.Absent = shadowPaths(sources, discovered, ak.searchDirs, s.absent.exists)
	return c, ""
}

// changeSlack allows for the kernel's coarse file timestamps, which may
// lag the clock by a tick: a file changed within this much before an
// action started counts as changed during it.
const changeSlack = 10 * time.Millisecond
