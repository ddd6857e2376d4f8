package options_test

// Verification of LLVM 19's clang tables (clang19_records.go) against the
// installed clang 19, as clang_test.go verifies 22's: they are skipped
// where clang-19 is not installed, and fail there under
// OFFCC_REQUIRE_LLVM19=1.

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/offcc/offcc/options"
)

// release19 returns LLVM 19's tables.
func release19(t *testing.T) *options.Tables {
	t.Helper()
	r, err := options.ForRelease(19)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestClang19HelpMatchesTable checks clang 19's --help-hidden and -cc1
// --help against LLVM 19's tables, as TestClangHelpMatchesTable checks
// 22's.
func TestClang19HelpMatchesTable(t *testing.T) {
	r := release19(t)
	checkHelp(t, options.LLVM19Tool(t, "clang"), r.ClangDriver(), r.ClangCC1())
}

// TestClang19ProbeKinds asks clang 19 what its help cannot tell of the
// Separate options of LLVM 19's driver table, as TestClangProbeKinds asks
// clang 22.
func TestClang19ProbeKinds(t *testing.T) {
	probeKinds(t, options.LLVM19Tool(t, "clang"), release19(t).ClangDriver())
}

// hashHashHash returns the commands of clang's -### output: each line
// that starts with a space and a quoted word, split into its words.
func hashHashHash(t *testing.T, out string) [][]string {
	t.Helper()
	var jobs [][]string
	for _, line := range strings.Split(out, "\n") {
		if !strings.HasPrefix(line, " \"") {
			continue
		}
		var words []string
		for s := strings.TrimSpace(line); s != ""; s = strings.TrimLeft(s, " ") {
			if s[0] != '"' {
				t.Fatalf("-### line: %q is not a quoted word", s)
			}
			var w strings.Builder
			i := 1
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) {
					i++
				}
				w.WriteByte(s[i])
			}
			if i >= len(s) {
				t.Fatalf("-### line: unterminated word in %q", line)
			}
			words = append(words, w.String())
			s = s[i+1:]
		}
		jobs = append(jobs, words)
	}
	return jobs
}

// TestClang19CommandLines parses offload command lines (OpenMP for AMDGPU
// and for the host, HIP, CUDA) with LLVM 19's driver table, and each
// -cc1 and lld job clang 19 makes of them (-###) with its -cc1 and lld
// tables: no argument is unknown, and the options offcc's driver reads are
// found with the semantics offcc gives them.
func TestClang19CommandLines(t *testing.T) {
	path := options.LLVM19Tool(t, "clang")
	r := release19(t)
	for _, c := range []struct {
		name   string
		src    string
		argv   []string
		driver []string // IDs the driver's command line has
		cc1    []string // IDs some -cc1 job has
	}{
		{"openmp-amdgpu", "a.c", []string{"-fopenmp", "--offload-arch=gfx90a,gfx1030", "-nogpulib", "-O2", "-c"},
			[]string{"fopenmp", "offload_arch_EQ", "nogpulib", "O", "c"},
			[]string{"fopenmp_is_target_device", "fopenmp_host_ir_file_path", "fembed_offload_object_EQ", "fopenmp_targets_EQ"}},
		{"openmp-host", "a.c", []string{"-fopenmp", "-fopenmp-targets=x86_64-pc-linux-gnu", "-c"},
			[]string{"fopenmp", "fopenmp_targets_EQ", "c"},
			[]string{"fopenmp_is_target_device", "fembed_offload_object_EQ"}},
		{"hip", "a.hip", []string{"-x", "hip", "--offload-arch=gfx90a", "--offload-arch=gfx1030", "-nogpulib", "-fgpu-rdc", "-c"},
			[]string{"x", "offload_arch_EQ", "nogpulib", "fgpu_rdc", "c"},
			[]string{"fcuda_is_device", "fgpu_rdc", "cuid_EQ"}},
		{"hip-link", "a.hip", []string{"-x", "hip", "--offload-arch=gfx90a", "-nogpulib", "--no-gpu-bundle-output", "-c"},
			[]string{"x", "offload_arch_EQ", "no_gpu_bundle_output", "c"},
			[]string{"fcuda_is_device"}},
		{"cuda", "a.cu", []string{"--cuda-gpu-arch=sm_70", "--offload-arch=sm_80", "-nocudainc", "-nocudalib", "-c"},
			[]string{"offload_arch_EQ", "nogpuinc", "nogpulib", "c"},
			[]string{"fcuda_is_device", "fcuda_include_gpubinary"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			argv := append(append([]string(nil), c.argv...), c.src)
			has := func(tab *options.Table, argv []string) map[string]*options.Arg {
				t.Helper()
				args, err := tab.Parse(argv)
				if err != nil {
					t.Fatalf("%s %q: %v", tab.Tool, argv, err)
				}
				ids := map[string]*options.Arg{}
				for _, a := range args {
					if a.IsUnknown() {
						t.Errorf("%s (LLVM 19) does not know %q in %q", tab.Tool, a.Spelling, argv)
					}
					ids[a.Option.ID] = a
				}
				return ids
			}
			ids := has(r.ClangDriver(), argv)
			for _, id := range c.driver {
				if ids[id] == nil {
					t.Errorf("%q has no %s in LLVM 19's driver table", argv, id)
				}
			}
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, c.src), []byte("int main(void) { return 0; }\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			stdout, stderr, err := runClang(path, dir, append([]string{"--no-default-config", "-###"}, argv...)...)
			if err != nil || strings.Contains(stderr, "error:") {
				t.Fatalf("clang 19 -### %q: %v\n%s", argv, err, stderr)
			}
			seen := map[string]*options.Arg{}
			var tools []string
			for _, job := range hashHashHash(t, stderr+stdout) {
				tool := job[0][strings.LastIndexByte(job[0], '/')+1:]
				switch {
				case strings.HasPrefix(tool, "clang") && len(job) > 1 && job[1] == "-cc1":
					tools = append(tools, "cc1")
					for id, a := range has(r.ClangCC1(), job[2:]) {
						seen[id] = a
					}
				case strings.HasPrefix(tool, "clang") && len(job) > 1 && job[1] == "-cc1as":
					tools = append(tools, "cc1as")
					has(r.ClangCC1As(), job[2:])
				case tool == "lld" || tool == "ld.lld":
					tools = append(tools, "lld")
					has(r.LLD(), job[1:])
				default:
					tools = append(tools, tool)
				}
			}
			for _, id := range c.cc1 {
				if seen[id] == nil {
					t.Errorf("no -cc1 job of clang 19 has %s (jobs: %v)", id, tools)
				}
			}
			// The semantics are 22's, laid over 19's options (where 22
			// has the ID: 19's -nogpulib is 22's -no-offloadlib).
			for id, a := range seen {
				want, in22 := release22CC1Semantics(id)
				if got := fmt.Sprint(a.Option.Value, a.Option.Uncacheable, a.Option.NoRemote); in22 && got != want {
					t.Errorf("-cc1 %s: LLVM 19's table has %s, 22's %s", id, got, want)
				}
			}
			t.Logf("%s: jobs %v", c.name, tools)
		})
	}
}

// release22CC1Semantics returns the semantics LLVM 22's -cc1 table gives
// the option id, written as TestClang19CommandLines compares them.
func release22CC1Semantics(id string) (string, bool) {
	o := options.ClangCC1().Lookup(id)
	if o == nil {
		return "", false
	}
	o = o.Unaliased()
	return fmt.Sprint(o.Value, o.Uncacheable, o.NoRemote), true
}
