package driver

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/offcc/offcc/internal/atomicfile"
)

// planCache remembers clang's job list (its -### output) per command line,
// so that rebuilding the same translation unit with the same flags skips the
// clang driver start on the critical path. The private temporary directory
// is stored as a placeholder and replaced by the new one on reuse.
//
// The key (see planKeyText in plancache_key.go) covers everything clang's job
// list depends on that can change between runs of one command: the clang
// executable and its driver libraries, the configuration files clang reads,
// the GCC installations it picks its C++ library and crt files from, the
// ROCm and CUDA installations it takes device libraries from, the working
// directory, the driver name, every argument and the environment (less
// variables that differ per run: make's jobserver, TMPDIR, ...). A hit is
// used only if every source file the plan reads still exists.
//
// The cache trims itself as Go's build cache does: a hit refreshes the
// entry's modification time, and at most once per planTrimInterval a trim
// removes entries unused for planMaxAge, then the least recently used ones
// beyond planMaxEntries. Nothing the cache does can fail a build: an
// unreadable, corrupt or vanished entry is a miss, and write or trim errors
// are ignored. Concurrent offcc processes (make -j) may load, store and trim
// at once: entries are written atomically (write and rename), and an entry
// removed under a reader is a miss.
type planCache struct {
	dir string
}

const (
	// planCacheVersion salts every key and heads every entry: changing
	// what a key covers or how an entry is stored changes it, and entries
	// of another version are misses (and are trimmed like any other).
	planCacheVersion = "offcc plan v2"

	// planRefreshAge: a hit refreshes the entry's modification time (its
	// last use) only when it is older than this, so that a hit costs a
	// write at most once an hour per entry. It must be much smaller than
	// planMaxAge.
	planRefreshAge = time.Hour

	// planTrimInterval: trims run at most this often; trim.txt in the
	// cache directory holds the time of the last one.
	planTrimInterval = time.Hour

	// planMaxAge: a trim removes entries unused for longer than this.
	planMaxAge = 7 * 24 * time.Hour

	// planMaxEntries: after removing old entries, a trim keeps at most
	// this many, the most recently used. Between trims (an hour) the
	// directory may hold more. An entry is about 4.5 KB, so the cap is
	// about 4.5 MB; it is large enough for one entry per translation unit
	// of a big project (fewer would make every rebuild of it miss), and
	// planMaxAge keeps a machine's cache to what it built in the last week.
	planMaxEntries = 1024

	// planStaleTemp: a trim removes temporary files (of an interrupted
	// store) older than this.
	planStaleTemp = time.Hour

	// planTrimMarker names the file that records the last trim.
	planTrimMarker = "trim.txt"
)

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
	return &planCache{dir: filepath.Join(root, "plans")}
}

// key names the entry for one clang invocation: the SHA-256 of planKeyText. It
// reports false when the invocation cannot be keyed (clang or the working
// directory cannot be found); the caller then runs clang uncached.
func (c *planCache) key(clang, argv0 string, args, env []string) (string, bool) {
	text, ok := planKeyText(clang, argv0, args, env)
	if !ok {
		return "", false
	}
	sum := sha256.Sum256([]byte(text))
	return hex.EncodeToString(sum[:]), true
}

// An entry is a header line, planCacheVersion and the SHA-256 of the body,
// then the body: clang's output with tempPlaceholder for the temporary
// directory. The checksum makes a damaged entry (a disk error, a file
// truncated or edited by hand) a miss instead of a wrong plan.

func planEntryHeader(body []byte) string {
	sum := sha256.Sum256(body)
	return planCacheVersion + " " + hex.EncodeToString(sum[:]) + "\n"
}

// load returns the stored output with tempDir put in, if there is a sound
// entry, and marks the entry used.
func (c *planCache) load(key, tempDir string) (string, bool) {
	name := filepath.Join(c.dir, key)
	data, err := os.ReadFile(name)
	if err != nil {
		return "", false
	}
	nl := bytes.IndexByte(data, '\n')
	if nl < 0 {
		return "", false
	}
	body := data[nl+1:]
	if len(body) == 0 || string(data[:nl+1]) != planEntryHeader(body) {
		return "", false
	}
	now := time.Now()
	if info, err := os.Stat(name); err == nil && now.Sub(info.ModTime()) > planRefreshAge {
		os.Chtimes(name, now, now) // best effort: a failure only ages the entry
	}
	c.maybeTrim(now)
	return strings.ReplaceAll(string(body), tempPlaceholder, tempDir), true
}

// store saves a successful -### output; failures to write are ignored (the
// cache only saves time).
func (c *planCache) store(key, tempDir, output string) {
	if output == "" || os.MkdirAll(c.dir, 0o755) != nil {
		return
	}
	body := []byte(output)
	if tempDir != "" {
		body = []byte(strings.ReplaceAll(output, tempDir, tempPlaceholder))
	}
	data := append([]byte(planEntryHeader(body)), body...)
	if atomicfile.Write(filepath.Join(c.dir, key), data, 0o644) != nil {
		return
	}
	c.maybeTrim(time.Now())
}

// maybeTrim trims the cache if the last trim recorded in the marker file is
// planTrimInterval ago or more (or unknown, or in the future by more than
// that: a clock set back).
func (c *planCache) maybeTrim(now time.Time) {
	marker := filepath.Join(c.dir, planTrimMarker)
	if data, err := os.ReadFile(marker); err == nil {
		if sec, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64); err == nil {
			if d := now.Sub(time.Unix(sec, 0)); d < planTrimInterval && d > -planTrimInterval {
				return
			}
		}
	}
	// Record the trim before doing it, so that the processes of a parallel
	// build that get here meanwhile skip theirs.
	if atomicfile.Write(marker, []byte(fmt.Sprintf("%d\n", now.Unix())), 0o644) != nil {
		return
	}
	c.trim(now)
}

// trim removes entries unused for more than planMaxAge, then the least
// recently used ones beyond planMaxEntries, and leftover temporary files.
// Files it does not recognise are left alone; errors (an entry another
// process removed first, ...) are ignored.
func (c *planCache) trim(now time.Time) {
	dirents, err := os.ReadDir(c.dir)
	if err != nil {
		return
	}
	type entry struct {
		name string
		used time.Time
	}
	var kept []entry
	for _, de := range dirents {
		name := de.Name()
		isEntry := isPlanEntryName(name)
		if !isEntry && !isPlanTempName(name) {
			continue
		}
		info, err := de.Info()
		if err != nil || !info.Mode().IsRegular() {
			continue
		}
		age := now.Sub(info.ModTime())
		switch {
		case !isEntry:
			if age > planStaleTemp {
				os.Remove(filepath.Join(c.dir, name))
			}
		case age > planMaxAge:
			os.Remove(filepath.Join(c.dir, name))
		default:
			kept = append(kept, entry{name, info.ModTime()})
		}
	}
	if len(kept) <= planMaxEntries {
		return
	}
	sort.Slice(kept, func(i, j int) bool {
		if !kept[i].used.Equal(kept[j].used) {
			return kept[i].used.After(kept[j].used)
		}
		return kept[i].name < kept[j].name
	})
	for _, e := range kept[planMaxEntries:] {
		os.Remove(filepath.Join(c.dir, e.name))
	}
}

// isPlanEntryName reports whether name is a cache entry: a hex key, 64
// digits now, 32 in version 1 (those are misses now and age out).
func isPlanEntryName(name string) bool {
	if len(name) != 64 && len(name) != 32 {
		return false
	}
	for _, r := range name {
		if !('0' <= r && r <= '9' || 'a' <= r && r <= 'f') {
			return false
		}
	}
	return true
}

// isPlanTempName reports whether name is an atomicfile temporary of an
// entry or of the trim marker (".NAME.offcc-RANDOM").
func isPlanTempName(name string) bool {
	base, _, ok := strings.Cut(strings.TrimPrefix(name, "."), ".offcc-")
	return ok && strings.HasPrefix(name, ".") && (isPlanEntryName(base) || base == planTrimMarker)
}
