package driver

import (
	"encoding/hex"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/offcc/offcc/internal/atomicfile"
)

// planCache remembers clang's job list (its -### output) per command line,
// so that rebuilding the same translation unit with the same flags skips the
// clang driver start on the critical path. The private temporary directory
// is stored as a placeholder and replaced by the new one on reuse.
//
// The key covers everything clang's job list depends on that can change
// between runs of one command: the clang executable (path, size, mtime), the
// directories clang searches for configuration files and GCC installations
// (their mtimes), the working directory, the driver name, every argument and
// the environment (less variables that differ per run: make's jobserver,
// TMPDIR, ...). A hit is used only if every source file the plan reads
// still exists.
type planCache struct {
	dir string
	// maxEntries bounds the cache; the oldest entries go first.
	maxEntries int
}

// tempPlaceholder stands for the private temporary directory in stored plans.
const tempPlaceholder = "\x00OFFCC_TMP\x00"

// volatileEnv lists variables that change from run to run without changing
// clang's jobs.
var volatileEnv = map[string]bool{
	"MAKEFLAGS": true, "MFLAGS": true, "MAKELEVEL": true, "MAKE_TERMOUT": true,
	"MAKE_TERMERR": true, "TMPDIR": true, "_": true, "SHLVL": true, "OLDPWD": true, "PWD": true,
	"OFFCC_TRACE": true,
}

// newPlanCache returns the cache selected by the environment: OFFCC_PLAN_CACHE=0
// disables it; OFFCC_CACHE_DIR (else the user cache directory) holds it.
func newPlanCache(getenv func(string) string) *planCache {
	switch getenv("OFFCC_PLAN_CACHE") {
	case "0", "off", "no", "false":
		return nil
	}
	root := getenv("OFFCC_CACHE_DIR")
	if root == "" {
		d, err := os.UserCacheDir()
		if err != nil {
			return nil
		}
		root = filepath.Join(d, "offcc")
	}
	return &planCache{dir: filepath.Join(root, "plans"), maxEntries: 2000}
}

// key names the entry for one clang invocation.
func (c *planCache) key(clang, argv0 string, args, env []string) (string, bool) {
	fi, err := os.Stat(clang)
	if err != nil {
		return "", false
	}
	cwd, err := os.Getwd()
	if err != nil {
		return "", false
	}
	h := fnv.New128a()
	fmt.Fprintf(h, "offcc plan v1\x00%s\x00%d\x00%d\x00%s\x00%s\x00", clang, fi.Size(), fi.ModTime().UnixNano(), cwd, argv0)
	// clang's job list also depends on what it finds on disk: configuration
	// files beside it or in /etc/clang, and the GCC installations it picks
	// its C++ library and crt files from. Adding or removing any of those
	// changes the directory's modification time.
	for _, d := range []string{filepath.Dir(clang), "/etc/clang", "/usr/lib/gcc", "/usr/lib/gcc/x86_64-linux-gnu", "/usr/lib/gcc-cross"} {
		if di, err := os.Stat(d); err == nil {
			fmt.Fprintf(h, "%s\x00%d\x00", d, di.ModTime().UnixNano())
		}
	}
	for _, a := range args {
		io.WriteString(h, a)
		h.Write([]byte{0})
	}
	h.Write([]byte{1})
	sorted := append([]string{}, env...)
	sort.Strings(sorted)
	for _, kv := range sorted {
		name, _, _ := strings.Cut(kv, "=")
		if volatileEnv[name] {
			continue
		}
		io.WriteString(h, kv)
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)), true
}

// load returns the stored output with tempDir put in, if there is one.
func (c *planCache) load(key, tempDir string) (string, bool) {
	data, err := os.ReadFile(filepath.Join(c.dir, key))
	if err != nil || len(data) == 0 {
		return "", false
	}
	return strings.ReplaceAll(string(data), tempPlaceholder, tempDir), true
}

// store saves a successful -### output; failures to write are ignored (the
// cache only saves time).
func (c *planCache) store(key, tempDir, output string) {
	if err := os.MkdirAll(c.dir, 0o755); err != nil {
		return
	}
	data := strings.ReplaceAll(output, tempDir, tempPlaceholder)
	if atomicfile.Write(filepath.Join(c.dir, key), []byte(data), 0o644) != nil {
		return
	}
	c.prune()
}

// prune removes the oldest half of the entries when there are too many.
func (c *planCache) prune() {
	entries, err := os.ReadDir(c.dir)
	if err != nil || len(entries) <= c.maxEntries {
		return
	}
	type aged struct {
		name string
		t    time.Time
	}
	var all []aged
	for _, e := range entries {
		if info, err := e.Info(); err == nil {
			all = append(all, aged{e.Name(), info.ModTime()})
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].t.Before(all[j].t) })
	for _, a := range all[:len(all)/2] {
		os.Remove(filepath.Join(c.dir, a.name))
	}
}
