package driver

import (
	"bytes"
	"slices"
	"testing"

	"github.com/offcc/offcc/actions"
	"github.com/offcc/offcc/options"
	"github.com/offcc/offcc/toolchain"
)

// TestParseRelease: a command line is read as the clang of the release it
// is parsed for reads it: LLVM 19's -nogpulib and -fopenmp-targets= are
// options of their own (22's are aliases of --no-offloadlib and
// --offload-targets=), and its --offload= names offload targets.
func TestParseRelease(t *testing.T) {
	t19, err := options.ForRelease(19)
	if err != nil {
		t.Fatal(err)
	}
	line := []string{"-fopenmp", "-fopenmp-targets=x86_64-pc-linux-gnu", "-nogpulib", "-c", "x.c"}
	o22, err := Parse(line)
	if err != nil {
		t.Fatal(err)
	}
	o19, err := ParseRelease(line, t19)
	if err != nil {
		t.Fatal(err)
	}
	ids := func(o *Options) []string {
		var out []string
		for _, a := range o.Args {
			out = append(out, a.Option.ID)
		}
		return out
	}
	if o22.Tables.Major != 22 || o19.Tables.Major != 19 {
		t.Errorf("tables: %d, %d", o22.Tables.Major, o19.Tables.Major)
	}
	if got := ids(o19); !slices.Contains(got, "nogpulib") || !slices.Contains(got, "fopenmp_targets_EQ") {
		t.Errorf("LLVM 19's IDs %v", got)
	}
	if got := ids(o22); slices.Contains(got, "nogpulib") {
		t.Errorf("LLVM 22's IDs %v", got)
	}
	for _, o := range []*Options{o19, o22} {
		if o.OffloadKind() != actions.OpenMP || !slices.Equal(o.ClangArgs, line) {
			t.Errorf("LLVM %d: kind %v, clang args %q", o.Tables.Major, o.OffloadKind(), o.ClangArgs)
		}
	}
	hip, err := ParseRelease([]string{"--offload=spirv64", "-x", "hip", "-c", "x.hip"}, t19)
	if err != nil || !hip.OffloadTargets {
		t.Errorf("LLVM 19's --offload=: %+v, %v", hip, err)
	}
}

// TestForRelease: Main parses again, with the found release's tables, a
// command line it parsed with the newest release's, and keeps it when
// they are the same tables.
func TestForRelease(t *testing.T) {
	line := []string{"-nogpulib", "-fopenmp", "--offload-arch=gfx90a", "-c", "x.c"}
	inv := &Invocation{Args: line, Stderr: &bytes.Buffer{}}
	opts, err := Parse(line)
	if err != nil {
		t.Fatal(err)
	}
	same, err := inv.forRelease(opts, toolchain.ProfileOf(22))
	if err != nil || same != opts {
		t.Errorf("LLVM 22: %p, %v; want the same options %p", same, err, opts)
	}
	again, err := inv.forRelease(opts, toolchain.ProfileOf(19))
	if err != nil || again == opts || again.Tables.Major != 19 || again.Args[0].Option.ID != "nogpulib" {
		t.Fatalf("LLVM 19: %+v, %v", again, err)
	}
	if !slices.Equal(again.ClangArgs, opts.ClangArgs) || again.OffloadKind() != opts.OffloadKind() {
		t.Errorf("LLVM 19 reads %q (%v), 22 %q (%v)", again.ClangArgs, again.OffloadKind(), opts.ClangArgs, opts.OffloadKind())
	}
}
