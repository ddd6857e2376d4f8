package membudget

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
)

// noLimit is the least value taken for "no limit": cgroup v1 writes
// 9223372036854771712 (the largest page count in bytes) where none is set.
const noLimit = 1 << 62

// Budget is the memory offcc may use, found by Discover.
type Budget struct {
	// Bytes is the budget in bytes.
	Bytes int64
	// Source says where Bytes comes from, for -v: "cgroup /x
	// memory.limit_in_bytes 600 MiB", "MemAvailable", "--offload-mem".
	Source string

	env Env
	cg  *Cgroup
}

// Discover returns the memory this process may use: the smallest of its
// cgroup's limit (the smallest over its ancestors) less what the cgroup
// already uses that is not this process's (inactive file pages not
// counted as used), MemAvailable, and explicit when it is above 0.
func Discover(explicit int64, env Env) (Budget, error) {
	b := Budget{env: env, Bytes: -1}
	take := func(n int64, src string) {
		if b.Bytes < 0 || n < b.Bytes {
			b.Bytes, b.Source = n, src
		}
	}
	if cg, err := Locate(env); err == nil {
		b.cg = &cg
		if lv, ok := tightest(cg); ok {
			// What the cgroup uses that is not this process's.
			others := max(lv.used-selfRSS(env), 0)
			take(max(lv.limit-others, 0), fmt.Sprintf("cgroup %s %s %s", lv.path, lv.file, FormatSize(lv.limit)))
		}
	}
	if n, ok := memAvailable(env); ok {
		take(n, "MemAvailable")
	}
	if explicit > 0 {
		take(explicit, "--offload-mem")
	}
	if b.Bytes < 0 {
		return Budget{}, errors.New("cannot tell the memory available: no cgroup limit, no /proc/meminfo; set --offload-mem")
	}
	return b, nil
}

// Headroom returns the memory free now: the smallest of the cgroup's
// limit less its use (over the cgroup and its ancestors) and
// MemAvailable; -1 when neither can be read. It reads a few small files.
func (b Budget) Headroom() int64 {
	h := int64(-1)
	if b.cg != nil {
		if lv, ok := tightest(*b.cg); ok {
			h = max(lv.limit-lv.used, 0)
		}
	}
	if n, ok := memAvailable(b.env); ok && (h < 0 || n < h) {
		h = n
	}
	return h
}

// Cgroup returns the memory cgroup the budget was found in, if any.
func (b Budget) Cgroup() (Cgroup, bool) {
	if b.cg == nil {
		return Cgroup{}, false
	}
	return *b.cg, true
}

// OOMKills returns how many processes the OOM killer has killed in this
// process's memory cgroup (v1 memory.oom_control, v2 memory.events), so
// that a SIGKILL can be told to be the OOM killer's when the count rose
// across a run; false when it cannot be read.
func (b Budget) OOMKills() (int, bool) {
	if b.cg == nil {
		return 0, false
	}
	file := "memory.oom_control"
	if b.cg.Version == 2 {
		file = "memory.events"
	}
	n, ok := readKey(filepath.Join(b.cg.Dir, file), "oom_kill")
	return int(n), ok
}

// level is the limit and use of one cgroup on the walk to the root.
type level struct {
	path, file  string
	limit, used int64 // used: less inactive file pages
}

// tightest returns the level of cg and its ancestors with the least free
// memory (limit less use) among those with a limit.
func tightest(cg Cgroup) (level, bool) {
	var best level
	found := false
	consider := func(lv level) {
		if !found || lv.limit-lv.used < best.limit-best.used {
			best, found = lv, true
		}
	}
	dir, p := cg.Dir, cg.Path
	for {
		if lv, ok := readLevel(cg.Version, dir, p); ok {
			consider(lv)
		}
		if cg.Version == 1 && dir == cg.Dir {
			// The limit of ancestors above the mount, as the kernel
			// computes it for this cgroup.
			if n, ok := readKey(filepath.Join(dir, "memory.stat"), "hierarchical_memory_limit"); ok && n < noLimit {
				used, _ := usage(1, dir)
				consider(level{path: p, file: "hierarchical_memory_limit", limit: n, used: used})
			}
		}
		if dir == cg.Mount || len(dir) <= len(cg.Mount) {
			break
		}
		dir, p = filepath.Dir(dir), path.Dir(p)
	}
	return best, found
}

func readLevel(version int, dir, p string) (level, bool) {
	file := "memory.limit_in_bytes"
	if version == 2 {
		file = "memory.max"
	}
	s, err := os.ReadFile(filepath.Join(dir, file))
	if err != nil {
		return level{}, false
	}
	v := strings.TrimSpace(string(s))
	if v == "max" {
		return level{}, false
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n >= noLimit {
		return level{}, false
	}
	used, _ := usage(version, dir)
	return level{path: p, file: file, limit: n, used: used}, true
}

// usage returns what the cgroup in dir uses, less its inactive file pages
// (page cache the kernel drops before it kills).
func usage(version int, dir string) (int64, bool) {
	file, inactive := "memory.usage_in_bytes", "total_inactive_file"
	if version == 2 {
		file, inactive = "memory.current", "inactive_file"
	}
	s, err := os.ReadFile(filepath.Join(dir, file))
	if err != nil {
		return 0, false
	}
	u, err := strconv.ParseInt(strings.TrimSpace(string(s)), 10, 64)
	if err != nil {
		return 0, false
	}
	if n, ok := readKey(filepath.Join(dir, "memory.stat"), inactive); ok {
		u -= n
	}
	return max(u, 0), true
}

// readKey returns the number after key in a file of "key value" lines.
func readKey(file, key string) (int64, bool) {
	s, err := os.ReadFile(file)
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(s), "\n") {
		if v, ok := strings.CutPrefix(line, key+" "); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}

// readKB returns the "key: N kB" value of a /proc file, in bytes.
func readKB(file, key string) (int64, bool) {
	s, err := os.ReadFile(file)
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(s), "\n") {
		if v, ok := strings.CutPrefix(line, key+":"); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return n << 10, err == nil
		}
	}
	return 0, false
}

func memAvailable(env Env) (int64, bool) {
	return readKB(env.path("/proc/meminfo"), "MemAvailable")
}

func selfRSS(env Env) int64 {
	n, _ := readKB(env.path("/proc/self/status"), "VmRSS")
	return n
}

// PeakOf returns the peak resident memory of process pid (VmHWM) plus
// that of the children it has running, in bytes; false when pid is gone.
func PeakOf(pid int) (int64, bool) { return System().PeakOf(pid) }

// PeakOf is PeakOf for the /proc of e.
func (e Env) PeakOf(pid int) (int64, bool) { return e.sumTree(pid, "VmHWM", 0) }

// RSSOf returns the resident memory of process pid (VmRSS) plus that of
// its children, in bytes; false when pid is gone.
func RSSOf(pid int) (int64, bool) { return System().sumTree(pid, "VmRSS", 0) }

func (e Env) sumTree(pid int, key string, depth int) (int64, bool) {
	dir := e.path(filepath.Join("/proc", strconv.Itoa(pid)))
	n, ok := readKB(filepath.Join(dir, "status"), key)
	if !ok || depth > 8 {
		return n, ok
	}
	kids, _ := os.ReadFile(filepath.Join(dir, "task", strconv.Itoa(pid), "children"))
	for _, f := range strings.Fields(string(kids)) {
		if c, err := strconv.Atoi(f); err == nil {
			if m, ok := e.sumTree(c, key, depth+1); ok {
				n += m
			}
		}
	}
	return n, true
}

// FormatSize formats n bytes for a person, as -v shows budgets: "600 MiB",
// "1.5 GiB".
func FormatSize(n int64) string {
	const mi, gi = 1 << 20, 1 << 30
	switch {
	case n >= gi && n%gi == 0:
		return fmt.Sprintf("%d GiB", n/gi)
	case n >= 10*gi:
		return fmt.Sprintf("%.1f GiB", float64(n)/gi)
	case n%mi == 0:
		return fmt.Sprintf("%d MiB", n/mi)
	default:
		return fmt.Sprintf("%.1f MiB", float64(n)/mi)
	}
}
