package membudget

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Env is where Discover and Locate look: Root is the file system root
// that /proc and /sys are read under ("" or "/" for the real ones; a test
// points it at a fake tree), Getenv reads the environment (nil: none).
type Env struct {
	Root   string
	Getenv func(string) string
}

// System is the real machine's Env.
func System() Env { return Env{Root: "/", Getenv: os.Getenv} }

func (e Env) path(p string) string {
	if e.Root == "" {
		return p
	}
	return filepath.Join(e.Root, p)
}

func (e Env) getenv(k string) string {
	if e.Getenv == nil {
		return ""
	}
	return e.Getenv(k)
}

// Cgroup is the memory cgroup a process runs in.
type Cgroup struct {
	// Version is 1 (the v1 memory controller) or 2 (the unified hierarchy).
	Version int
	// Path is the cgroup's name as /proc/self/cgroup gives it ("/x/y").
	Path string
	// Dir is its directory (under Env.Root).
	Dir string
	// Mount is the directory of the hierarchy's mount that holds Dir, the
	// top of the walk over ancestors.
	Mount string
}

// ErrNoCgroup is returned by Locate when the process's memory cgroup
// cannot be found (no /proc, no cgroup file system mounted).
var ErrNoCgroup = errors.New("no memory cgroup found")

// Locate finds the memory cgroup of this process: the v1 memory
// controller's where it is mounted, else the unified (v2) hierarchy's.
func Locate(env Env) (Cgroup, error) {
	data, err := os.ReadFile(env.path("/proc/self/cgroup"))
	if err != nil {
		return Cgroup{}, fmt.Errorf("%w: %v", ErrNoCgroup, err)
	}
	var v1, v2 string
	have1, have2 := false, false
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 {
			continue
		}
		if f[0] == "0" && f[1] == "" {
			v2, have2 = f[2], true
			continue
		}
		for _, c := range strings.Split(f[1], ",") {
			if c == "memory" {
				v1, have1 = f[2], true
			}
		}
	}
	mounts, err := readMounts(env)
	if err != nil {
		return Cgroup{}, fmt.Errorf("%w: %v", ErrNoCgroup, err)
	}
	if have1 {
		for _, m := range mounts {
			if m.fstype == "cgroup" && hasOpt(m.super, "memory") {
				if dir, ok := m.dirOf(env, v1); ok {
					return Cgroup{Version: 1, Path: v1, Dir: dir, Mount: env.path(m.point)}, nil
				}
			}
		}
	}
	if have2 {
		for _, m := range mounts {
			if m.fstype == "cgroup2" {
				if dir, ok := m.dirOf(env, v2); ok {
					return Cgroup{Version: 2, Path: v2, Dir: dir, Mount: env.path(m.point)}, nil
				}
			}
		}
	}
	return Cgroup{}, ErrNoCgroup
}

type mount struct {
	root, point, fstype, super string
}

// dirOf returns the directory of cgroup path p under m, if m holds it.
func (m mount) dirOf(env Env, p string) (string, bool) {
	rel := p
	if m.root != "/" {
		if p != m.root && !strings.HasPrefix(p, m.root+"/") {
			return "", false
		}
		rel = strings.TrimPrefix(p, m.root)
	}
	dir := env.path(filepath.Join(m.point, rel))
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return "", false
	}
	return dir, true
}

func hasOpt(opts, o string) bool {
	for _, x := range strings.Split(opts, ",") {
		if x == o {
			return true
		}
	}
	return false
}

// readMounts reads the cgroup mounts of /proc/self/mountinfo, the ones at
// /sys/fs/cgroup first.
func readMounts(env Env) ([]mount, error) {
	f, err := os.Open(env.path("/proc/self/mountinfo"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var first, rest []mount
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		// id parent maj:min root point opts [optional...] - fstype source super
		fields := strings.Fields(sc.Text())
		sep := -1
		for i, x := range fields {
			if x == "-" && i >= 6 {
				sep = i
				break
			}
		}
		if sep < 0 || sep+1 >= len(fields) {
			continue
		}
		m := mount{root: unescape(fields[3]), point: unescape(fields[4]), fstype: fields[sep+1]}
		if sep+3 < len(fields) {
			m.super = fields[sep+3]
		}
		if m.fstype != "cgroup" && m.fstype != "cgroup2" {
			continue
		}
		if strings.HasPrefix(m.point, "/sys/fs/cgroup") {
			first = append(first, m)
		} else {
			rest = append(rest, m)
		}
	}
	return append(first, rest...), sc.Err()
}

// unescape undoes mountinfo's octal escapes (\040 for a space).
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			o := s[i+1 : i+4]
			if o[0] >= '0' && o[0] <= '3' && o[1] >= '0' && o[1] <= '7' && o[2] >= '0' && o[2] <= '7' {
				b.WriteByte((o[0]-'0')<<6 | (o[1]-'0')<<3 | (o[2] - '0'))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
