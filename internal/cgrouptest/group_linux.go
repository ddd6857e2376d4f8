//go:build linux

package cgrouptest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/offcc/offcc/internal/membudget"
)

func create(limit int64) (*Group, error) {
	cg, err := membudget.Locate(membudget.System())
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(cg.Dir, "offcc-test-")
	if err != nil {
		return nil, fmt.Errorf("cannot make a memory cgroup under %s: %v", cg.Dir, err)
	}
	g := &Group{version: cg.Version, dir: dir}
	v := strconv.FormatInt(limit, 10)
	if cg.Version == 1 {
		err = g.write("memory.limit_in_bytes", v)
		if err == nil {
			// Absent where swap accounting is off; then swap is not counted anyway.
			if werr := g.write("memory.memsw.limit_in_bytes", v); werr != nil && !errors.Is(werr, os.ErrNotExist) {
				err = werr
			}
		}
	} else {
		// The memory controller must be enabled for the new group by its
		// parent; in v2 that fails while the parent holds processes.
		if _, serr := os.Stat(filepath.Join(dir, "memory.max")); serr != nil {
			_ = os.WriteFile(filepath.Join(cg.Dir, "cgroup.subtree_control"), []byte("+memory"), 0)
			if _, serr := os.Stat(filepath.Join(dir, "memory.max")); serr != nil {
				err = fmt.Errorf("memory controller not enabled for %s (its parent holds processes?)", dir)
			}
		}
		if err == nil {
			err = g.write("memory.max", v)
		}
		if err == nil {
			if werr := g.write("memory.swap.max", "0"); werr != nil && !errors.Is(werr, os.ErrNotExist) {
				err = werr
			}
		}
	}
	if err != nil {
		os.Remove(dir)
		return nil, fmt.Errorf("cannot limit memory cgroup %s: %v", dir, err)
	}
	return g, nil
}

// remove kills the group's processes and removes it once they are gone.
func (g *Group) remove() error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		pids := g.Pids()
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		err := os.Remove(g.dir)
		if err == nil || errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("cannot remove memory cgroup %s (processes %v): %v", g.dir, pids, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
