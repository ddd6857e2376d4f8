// Package includescan lists, without running clang, a superset of the files
// a clang -cc1 compile reads through its preprocessor, by reading only the
// directives of its sources and headers (as distcc-pump's include server
// does). The build farm's client uses it to know which files to send.
//
// The package is split by concern: scanner.go holds the Scanner, its
// memo of headers and directory listings, and Scan; args.go reads the cc1
// command line; search.go is one scan's walk, which resolves each
// reference against the search path; directives.go parses a header's
// directives; lexer.go is the small lexer under it.
package includescan

import (
	"errors"
	"io/fs"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/offcc/offcc/cache"
	"github.com/offcc/offcc/options"
)

// Scanner finds, without running clang, a superset of the files a
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
// A Scanner is safe for concurrent use; it memoises each header's
// directives by path (and its size, mtime, ctime and inode) for its
// lifetime, and the listings of the directories it searches, so that a
// scan whose headers it has seen costs little more than a stat of each.
type Scanner struct {
	// racy is how long a file or directory must have been left alone
	// before what the scanner read of it is trusted (defaultRacy; tests
	// shorten it).
	racy time.Duration
	// tables are the option tables of the LLVM release whose cc1 lines
	// the scanner reads.
	tables *options.Tables
	mu     sync.Mutex
	memo   map[string]*memoHeader // by clean path
	dirs   map[string]*memoDir    // by path as searched
}

// memoHeader is what the scanner remembers of a file: what it refers to
// and the stat it was read under.
type memoHeader struct {
	stamp cache.FileStat
	// stable is set when the file had not changed for Scanner.racy before it
	// was read, so that a later change must show in its stamp: a file
	// changed just before (or while) it was read is read again next time,
	// as a coarse timestamp might not show a change made in the same tick.
	stable bool
	parsed *directives
}

// defaultRacy is how long a file (or directory) must have been left alone
// before what the scanner read of it is trusted while its stamp stays the
// same (ccache's inode cache and cache.FileStat use 2 s too).
const defaultRacy = 2 * time.Second

// New returns a Scanner with an empty memo that reads cc1 lines of the
// newest LLVM release offcc has option tables of (options.ClangCC1's).
func New() *Scanner { return NewFor(options.Newest()) }

// NewFor returns a Scanner with an empty memo that reads cc1 lines with
// tables, the option tables of the LLVM release whose clang writes them:
// an option that release's cc1 does not have is not modelled.
func NewFor(tables *options.Tables) *Scanner {
	return &Scanner{racy: defaultRacy, tables: tables, memo: map[string]*memoHeader{}, dirs: map[string]*memoDir{}}
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
func (s *Scanner) Scan(args []string, cwd string) (files []string, ok bool, why string) {
	a, why := parseCC1(s.tables.ClangCC1(), args, cwd)
	if why != "" {
		return nil, false, why
	}
	w := newWalk(s, a)
	if why := w.run(); why != "" {
		return nil, false, why
	}
	return w.files, true, ""
}

// memoDir is a directory listing the scanner remembers, with the stamp
// it was read under (see memoHeader for stable).
type memoDir struct {
	stamp  cache.FileStat
	stable bool
	names  map[string]bool
}

// listing returns directory d's names, from the memo when d's stamp says
// it has not changed since (and it was stable then), else by reading it:
// adding, removing or renaming an entry moves a directory's mtime and
// ctime.
func (s *Scanner) listing(d string, stat func(string) (os.FileInfo, error)) dirListing {
	fi, err := stat(d)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			return dirListing{ok: true}
		}
		return dirListing{}
	}
	if !fi.IsDir() {
		return dirListing{ok: true}
	}
	s.mu.Lock()
	c := s.dirs[d]
	s.mu.Unlock()
	stamp := cache.StatOf(fi)
	if c != nil && c.stable && c.stamp == stamp {
		return dirListing{names: c.names, ok: true}
	}
	now := time.Now()
	f, err := os.Open(d)
	if err != nil {
		return dirListing{}
	}
	list, err := f.Readdirnames(-1)
	f.Close()
	if err != nil {
		return dirListing{}
	}
	names := make(map[string]bool, len(list))
	for _, n := range list {
		names[n] = true
	}
	s.mu.Lock()
	s.dirs[d] = &memoDir{stamp: stamp, stable: stamp.Settled(now, s.racy), names: names}
	s.mu.Unlock()
	return dirListing{names: names, ok: true}
}

// header returns what the file at path, whose stat is fi, refers to,
// from the memo or by reading it.
func (s *Scanner) header(path string, fi os.FileInfo) (*directives, error) {
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
	h = &memoHeader{stamp: stamp, parsed: parseDirectives(data), stable: int64(len(data)) == fi.Size() && stamp.Settled(now, s.racy)}
	s.mu.Lock()
	s.memo[path] = h
	s.mu.Unlock()
	return h.parsed, nil
}
