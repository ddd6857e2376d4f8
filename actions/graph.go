package actions

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
)

// Job is one step of a build: an external command or an in-process function.
type Job struct {
	// Tool is the tool name as clang's -ccc-print-bindings prints it:
	// "clang", "Offload::Packager", "Offload::Linker", ...
	Tool string
	// Triple is the toolchain triple for -ccc-print-bindings.
	Triple string
	// Args is the argv; Args[0] is the executable. For in-process jobs it is
	// the equivalent runnable command line (e.g. "offcc" "embed" ...), printed
	// by -### and -v.
	Args []string
	// Inputs lists every file the job reads (explicit, no hidden inputs).
	Inputs []string
	// Outputs lists every file the job writes.
	Outputs []string
	// Deps are the jobs that must succeed before this one starts.
	Deps []*Job
	// Run, when non-nil, runs the job in-process instead of executing Args.
	Run func(ctx context.Context, stdout, stderr io.Writer) error
	// Env is extra environment (KEY=VALUE) for an external command, appended
	// to os.Environ().
	Env []string
	// Cost is the estimated relative cost (e.g. seconds); 0 means 1. It is
	// used for longest-path-first priority.
	Cost float64
	// Publish lists renames done in order after the job succeeds (atomic
	// outputs: jobs write to a temporary name next to the final path).
	Publish []Rename
}

// Rename is one os.Rename(From, To) performed when a job succeeds.
type Rename struct{ From, To string }

// Graph is a set of jobs in planning order (deps before users).
type Graph struct{ Jobs []*Job }

// Add appends j to the graph and returns it.
func (g *Graph) Add(j *Job) *Job {
	g.Jobs = append(g.Jobs, j)
	return j
}

// label names a job for error messages: its tool and its first output (or
// its executable).
func (j *Job) label() string {
	name := j.name()
	switch {
	case len(j.Outputs) > 0:
		return fmt.Sprintf("%s (%s)", name, j.Outputs[0])
	case len(j.Args) > 0 && j.Tool != "":
		return fmt.Sprintf("%s (%s)", name, j.Args[0])
	}
	return name
}

// name is the tool name, or the executable's base name when Tool is empty.
func (j *Job) name() string {
	if j.Tool != "" {
		return j.Tool
	}
	if len(j.Args) > 0 {
		return filepath.Base(j.Args[0])
	}
	return "job"
}

// Validate checks that every job is non-nil and listed once, has a command
// (Args or Run), that every dependency is in the graph, and that there are no
// cycles. A cycle is reported as "a -> b -> a".
func (g *Graph) Validate() error {
	index := make(map[*Job]int, len(g.Jobs))
	for i, j := range g.Jobs {
		if j == nil {
			return fmt.Errorf("actions: job %d is nil", i)
		}
		if _, dup := index[j]; dup {
			return fmt.Errorf("actions: job %s is in the graph twice", j.label())
		}
		index[j] = i
		if j.Run == nil && len(j.Args) == 0 {
			return fmt.Errorf("actions: job %s has neither Args nor Run", j.label())
		}
	}
	for _, j := range g.Jobs {
		for _, d := range j.Deps {
			if d == nil {
				return fmt.Errorf("actions: job %s has a nil dependency", j.label())
			}
			if _, ok := index[d]; !ok {
				return fmt.Errorf("actions: job %s depends on %s, which is not in the graph", j.label(), d.label())
			}
		}
	}
	// Iterative DFS with colours; the stack is the current path.
	const (
		white = iota
		grey
		black
	)
	colour := make([]uint8, len(g.Jobs))
	type frame struct {
		j    *Job
		next int
	}
	for root := range g.Jobs {
		if colour[root] != white {
			continue
		}
		stack := []frame{{g.Jobs[root], 0}}
		colour[root] = grey
		for len(stack) > 0 {
			top := &stack[len(stack)-1]
			if top.next == len(top.j.Deps) {
				colour[index[top.j]] = black
				stack = stack[:len(stack)-1]
				continue
			}
			d := top.j.Deps[top.next]
			top.next++
			switch colour[index[d]] {
			case white:
				colour[index[d]] = grey
				stack = append(stack, frame{d, 0})
			case grey:
				// Cycle: from d's frame up to the top, then back to d.
				var path []string
				for k := len(stack) - 1; k >= 0; k-- {
					path = append(path, stack[k].j.label())
					if stack[k].j == d {
						break
					}
				}
				// path runs user -> dep order reversed; print as "x depends on y".
				var b strings.Builder
				b.WriteString("actions: dependency cycle: ")
				for k := len(path) - 1; k >= 0; k-- {
					b.WriteString(path[k])
					b.WriteString(" -> ")
				}
				b.WriteString(path[len(path)-1])
				return fmt.Errorf("%s (each job depends on the next)", b.String())
			}
		}
	}
	return nil
}
