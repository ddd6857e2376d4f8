package driver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/offcc/offcc/cache"
	"github.com/offcc/offcc/internal/atomicfile"
	"github.com/offcc/offcc/options"
	"github.com/offcc/offcc/target"
)

// compileCommand is one entry of a JSON compilation database
// (compile_commands.json), as clangd and clang-tidy read it.
type compileCommand struct {
	Directory string   `json:"directory"`
	File      string   `json:"file"`
	Arguments []string `json:"arguments"`
	Output    string   `json:"output,omitempty"`
}

// compileTarget is one device a source is compiled for.
type compileTarget struct {
	triple, id string
}

// compileCommands returns the database entries of one command line: for
// every source clang compiles (read from its jobs), the command line
// reduced to that source, then one entry per device compile of it. Tools
// parse a command as its first job, and for an offload compile with
// -fsyntax-only clang 22 puts the first device's job first, so the command
// alone shows them one device and never the host. So when the source has
// device compiles, its first entry gets --offload-host-only (what clangd,
// which reads a file's first entry, shows), and each device entry
// --offload-device-only with, when there are several devices, only that
// one selected (libTooling tools such as clang-tidy run every entry).
func compileCommands(dir, argv0 string, opts *Options, jobs []*clangJob) []compileCommand {
	var sources []string
	devices := map[string][]compileTarget{}
	for _, j := range jobs {
		if !j.isCC1() {
			continue
		}
		c, err := parseCC1(opts.tables(), j.argv)
		if err != nil || c.input == "-" || !slices.Contains(opts.Inputs, c.input) || c.mode == "-E" {
			continue
		}
		if !slices.Contains(sources, c.input) {
			sources = append(sources, c.input)
		}
		if c.device() {
			t := compileTarget{triple: c.triple, id: c.targetID()}
			if !slices.Contains(devices[c.input], t) {
				devices[c.input] = append(devices[c.input], t)
			}
		}
	}
	var out []compileCommand
	for _, src := range sources {
		args := argsForSource(opts, src)
		output := outputOf(opts, src, len(sources))
		targets := devices[src]
		host := args
		if len(targets) > 0 {
			host = hostArgs(opts.tables(), args)
		}
		out = append(out, compileCommand{Directory: dir, File: src, Output: output,
			Arguments: append([]string{argv0}, host...)})
		for _, t := range targets {
			out = append(out, compileCommand{Directory: dir, File: src, Output: output,
				Arguments: append([]string{argv0}, deviceArgs(opts.tables(), args, t, len(targets) > 1)...)})
		}
	}
	return out
}

// argsForSource returns the clang arguments without the inputs other than
// src (its first occurrence stays).
func argsForSource(opts *Options, src string) []string {
	drop := map[int]bool{}
	kept := false
	for _, i := range opts.InputArgs {
		if opts.ClangArgs[i] == src && !kept {
			kept = true
			continue
		}
		drop[i] = true
	}
	var args []string
	for i, a := range opts.ClangArgs {
		if !drop[i] {
			args = append(args, a)
		}
	}
	return args
}

// outputOf returns the file the command writes for src: -o's value, or
// clang's default name.
func outputOf(opts *Options, src string, nsources int) string {
	o, compileOnly := "", false
	for _, a := range opts.Args {
		switch a.Option.ID {
		case "o":
			o = a.Value()
		case "c", "S", "fsyntax_only":
			compileOnly = true
		}
	}
	if o != "" && (nsources == 1 || !compileOnly) {
		return o
	}
	if !compileOnly {
		return "a.out"
	}
	base := filepath.Base(src)
	return strings.TrimSuffix(base, filepath.Ext(base)) + ".o"
}

// The options, by ID (aliases resolved), that a device entry drops: those
// that name the output or the dependency file (the host compile writes
// them), those that pick the side, and, when one device is selected, those
// that select devices. A host entry drops the side options.
var (
	outputOptionIDs   = map[string]bool{"MD": true, "MMD": true, "MP": true, "MG": true, "o": true, "MF": true, "MT": true, "MQ": true, "MJ": true}
	selectorOptionIDs = map[string]bool{"fopenmp_targets_EQ": true, "offload_targets_EQ": true, "offload_arch_EQ": true, "no_offload_arch_EQ": true}
	sideOptionIDs     = map[string]bool{"offload_device_only": true, "offload_host_only": true, "offload_host_device": true}
)

// keepArgs returns the words of args (a driver command line) without the
// arguments drop says to drop.
func keepArgs(tables *options.Tables, args []string, drop func(id string) bool) []string {
	parsed, _ := tables.ClangDriver().Parse(args)
	var out []string
	n := 0
	for _, a := range parsed {
		if !drop(a.Option.ID) {
			out = append(out, a.Words(args)...)
		}
		n = a.Index + a.Count
	}
	return append(out, args[n:]...) // an option missing its value, as it was
}

// hostArgs returns the arguments of the host entry of an offload compile.
func hostArgs(tables *options.Tables, args []string) []string {
	return append(keepArgs(tables, args, func(id string) bool { return sideOptionIDs[id] }), "--offload-host-only")
}

// deviceArgs returns the arguments of the device entry for t.
func deviceArgs(tables *options.Tables, args []string, t compileTarget, selectOne bool) []string {
	out := keepArgs(tables, args, func(id string) bool {
		return outputOptionIDs[id] || sideOptionIDs[id] || selectOne && selectorOptionIDs[id]
	})
	out = append(out, "--offload-device-only")
	if selectOne {
		if target.IsGPU(t.triple) && t.id != "" {
			out = append(out, "--offload-arch="+t.id)
		} else {
			out = append(out, "-fopenmp-targets="+t.triple)
		}
	}
	return out
}

// updateCompileCommands merges entries into the compilation database at
// path: entries for the same directory, file and output are replaced, and
// entries whose file no longer exists are dropped; all others, in the
// form they were written (CMake's "command" strings too), are kept. The
// file is replaced atomically under an exclusive lock on its directory, so
// the compiles of a parallel build can share it.
func updateCompileCommands(path string, entries []compileCommand) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	unlock, err := lockDir(filepath.Dir(abs))
	if err != nil {
		return err
	}
	defer unlock()
	var old []json.RawMessage
	data, err := os.ReadFile(abs)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return err
	case len(bytes.TrimSpace(data)) > 0:
		if err := json.Unmarshal(data, &old); err != nil {
			return fmt.Errorf("%s is not a JSON compilation database: %v", path, err)
		}
	}
	key := func(c compileCommand) string { return c.Directory + "\x00" + c.File + "\x00" + c.Output }
	replaced := map[string]bool{}
	for _, e := range entries {
		replaced[key(e)] = true
	}
	var kept [][]byte
	for _, raw := range old {
		var c compileCommand
		if json.Unmarshal(raw, &c) == nil {
			if replaced[key(c)] {
				continue
			}
			f := c.File
			if !filepath.IsAbs(f) {
				f = filepath.Join(c.Directory, f)
			}
			if _, err := os.Stat(f); errors.Is(err, os.ErrNotExist) {
				continue
			}
		}
		kept = append(kept, raw)
	}
	for _, e := range entries {
		b, err := json.MarshalIndent(e, "  ", "  ")
		if err != nil {
			return err
		}
		kept = append(kept, b)
	}
	return atomicfile.WriteFunc(abs, 0o666, func(w io.Writer) error {
		var b bytes.Buffer
		b.WriteString("[\n")
		for i, e := range kept {
			b.WriteString("  ")
			b.Write(e)
			if i < len(kept)-1 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		b.WriteString("]\n")
		_, err := w.Write(b.Bytes())
		return err
	})
}

// lockDir takes an exclusive flock on dir and returns its release. Where
// the file system has no locks it goes on unlocked.
func lockDir(dir string) (func(), error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil && err != syscall.ENOLCK && err != syscall.EOPNOTSUPP {
		f.Close()
		return nil, fmt.Errorf("cannot lock %s: %v", dir, err)
	}
	return func() { f.Close() }, nil
}

// recordCompileCommands adds the command's entries to the database named
// by --print-compile-commands or $OFFCC_COMPILE_COMMANDS. A database that
// cannot be updated is a warning: the build itself goes on.
func (inv *Invocation) recordCompileCommands(opts *Options, jobs []*clangJob) {
	path := inv.compileCommandsFile(opts)
	if path == "" {
		return
	}
	dir, err := os.Getwd()
	if err == nil {
		argv0 := inv.Argv0
		if inv.Self != "" {
			argv0 = filepath.Join(filepath.Dir(inv.Self), inv.prog())
		}
		err = updateCompileCommands(path, compileCommands(dir, argv0, opts, jobs))
	}
	if err != nil {
		fmt.Fprintf(inv.Stderr, "%s: warning: cannot update the compile commands in '%s': %v\n", inv.prog(), path, err)
	}
}

// compileCommandsFile is the database to update, or "" when none is asked
// for or the command compiles nothing (it only prints, or preprocesses).
func (inv *Invocation) compileCommandsFile(opts *Options) string {
	path := opts.CompileCommands
	if path == "" {
		path = inv.getenv("OFFCC_COMPILE_COMMANDS")
	}
	if path == "" || opts.Help || opts.HashHashHash || opts.PrintPhases || opts.PrintBindings ||
		opts.PrintJobGraph != "" || opts.PreprocessOnly {
		return ""
	}
	return path
}

// recordWithoutPlan records the compile commands of a command line offcc
// hands to clang: clang's job list (from the plan cache when it can) says
// which sources it compiles and for which devices.
func (inv *Invocation) recordWithoutPlan(ctx context.Context, clang string, opts *Options, c *cache.Cache) {
	tempDir, err := os.MkdirTemp(inv.tempRoot(), "offcc-")
	if err != nil {
		return
	}
	defer os.RemoveAll(tempDir)
	plans := newPlanCache(c, inv.getenv)
	if plans != nil {
		plans.tables = opts.tables()
	}
	_, jobs, err := clangJobs(ctx, inv, clang, opts.ClangArgs, tempDir, plans, nil)
	if err != nil {
		return // clang reports the command line's errors when it runs it
	}
	inv.recordCompileCommands(opts, jobs)
}
