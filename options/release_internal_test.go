package options

import (
	"fmt"
	"slices"
	"testing"

	"github.com/offcc/offcc/internal/llvmtest"
)

// LLVM 19's tools, as package llvmtest finds them.
const llvm19Bin = llvmtest.Bin19

var (
	llvm19Missing = llvmtest.Missing19
	llvm19Tool    = llvmtest.Tool19
)

func TestReleases(t *testing.T) {
	if got := Releases(); !slices.Equal(got, []int{19, 22}) {
		t.Errorf("Releases() = %v, want [19 22]", got)
	}
	r22, err := ForRelease(22)
	if err != nil {
		t.Fatal(err)
	}
	if r22.ClangDriver() != ClangDriver() || r22.ClangCC1() != ClangCC1() || r22.ClangCC1As() != ClangCC1As() || r22.LLD() != LLD() {
		t.Errorf("ForRelease(22)'s tables are not ClangDriver(), ClangCC1(), ClangCC1As() and LLD()")
	}
	if Newest() != r22 {
		t.Errorf("Newest() is LLVM %d's tables, want 22's", Newest().Major)
	}
	r19, err := ForRelease(19)
	if err != nil {
		t.Fatal(err)
	}
	if r19.Major != 19 || r19.ClangDriver() == ClangDriver() || r19.LLD() == LLD() || r19.ClangDriver() != r19.ClangDriver() {
		t.Errorf("ForRelease(19) is not a release of its own, made once")
	}
	for _, c := range []struct {
		tab  *Table
		tool string
	}{{r19.ClangDriver(), "clang"}, {r19.ClangCC1(), "clang -cc1"}, {r19.ClangCC1As(), "clang -cc1as"}, {r19.LLD(), "ld.lld"}} {
		if c.tab.Tool != c.tool {
			t.Errorf("LLVM 19's %s table says it is %s's", c.tool, c.tab.Tool)
		}
	}
	// Where the releases differ for offcc's driver: -fopenmp-targets= is
	// an alias of --offload-targets= in 22, an option of its own in 19,
	// which has no --offload-targets=; --offload-arch=a,b has two values
	// in 22 (CommaJoined), one in 19 (Joined: clang 19 splits it itself).
	parse := func(tab *Table, argv ...string) *Arg {
		a, err := tab.ParseOne(argv, 0)
		if err != nil {
			t.Fatalf("%s %q: %v", tab.Tool, argv, err)
		}
		return a
	}
	if a := parse(ClangDriver(), "-fopenmp-targets=x86_64-pc-linux-gnu"); !a.Is("offload_targets_EQ") || a.Alias == nil {
		t.Errorf("LLVM 22 reads -fopenmp-targets= as %s, want an alias of offload_targets_EQ", a.Option.ID)
	}
	if a := parse(r19.ClangDriver(), "-fopenmp-targets=x86_64-pc-linux-gnu"); !a.Is("fopenmp_targets_EQ") || a.Alias != nil {
		t.Errorf("LLVM 19 reads -fopenmp-targets= as %s, want fopenmp_targets_EQ", a.Option.ID)
	}
	if a := parse(r19.ClangDriver(), "--offload-targets=x86_64-pc-linux-gnu"); !a.IsUnknown() {
		t.Errorf("LLVM 19 reads --offload-targets= as %s, want an unknown argument", a.Option.ID)
	}
	if a := parse(ClangDriver(), "--offload-arch=gfx90a,gfx1030"); !slices.Equal(a.Values, []string{"gfx90a", "gfx1030"}) {
		t.Errorf("LLVM 22 reads --offload-arch=gfx90a,gfx1030 as %q", a.Values)
	}
	if a := parse(r19.ClangDriver(), "--offload-arch=gfx90a,gfx1030"); !a.Is("offload_arch_EQ") || !slices.Equal(a.Values, []string{"gfx90a,gfx1030"}) {
		t.Errorf("LLVM 19 reads --offload-arch=gfx90a,gfx1030 as %s %q", a.Option.ID, a.Values)
	}
	for _, major := range []int{18, 20, 0} {
		_, err := ForRelease(major)
		if want := fmt.Sprintf("no option tables for LLVM %d: offcc knows LLVM 19 and 22", major); err == nil || err.Error() != want {
			t.Errorf("ForRelease(%d): %v, want %q", major, err, want)
		}
	}
}
