package options

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
)

// clang22Only are the IDs clangGroups list whose options clang 19 does
// not have (LLVM 20 to 22 added them). Each is fine to miss: clang 19
// reports such an option as an unknown argument, so no command line
// offcc hands to it has one, and LLVM 19's table reads it as unknown too.
var clang22Only = map[string]string{
	"Xclangas":                                    "-Xclangas: arguments for -cc1as",
	"Xthinlto_distributor_EQ":                     "-Xthinlto-distributor=: arguments for a distributed ThinLTO program",
	"fthinlto_distributor_EQ":                     "-fthinlto-distributor=: distributed ThinLTO",
	"dump_minimization_hints":                     "-dump-minimization-hints=: a file clang writes",
	"fcodegen_data_generate_EQ":                   "-fcodegen-data-generate=: codegen data written",
	"fcodegen_data_use_EQ":                        "-fcodegen-data-use=: codegen data read",
	"fms_secure_hotpatch_functions_file":          "-fms-secure-hotpatch-functions-file=: a list read",
	"fprofile_generate_cold_function_coverage_EQ": "-fprofile-generate-cold-function-coverage=: profile output",
	"fuse_lipo_EQ":                                "-fuse-lipo=: a Darwin tool",
	"internal_iframework":                         "-internal-iframework: a Darwin search path",
	"libclc_lib_EQ":                               "--libclc-lib=: OpenCL's libclc",
	"libomptarget_spirv_bc_path_EQ":               "--libomptarget-spirv-bc-path=: OpenMP for SPIR-V",
	"multi_lib_config":                            "-multi-lib-config=: a multilib YAML read",
	"offload_arch_tool_EQ":                        "--offload-arch-tool=: 19 has --amdgpu-arch-tool= and --nvptx-arch-tool= as options of their own",
	"warning_suppression_mappings_EQ":             "--warning-suppression-mappings=: a file read",
}

// TestClang19Semantics checks that the semantics offcc gives clang's
// options (clangGroups, by LLVM 22's IDs) hold for LLVM 19's table: every
// ID they list names the same option in 19 (an anonymous one the option
// of its spelling), or is one of clang22Only; and every option of 19's
// table that 22 has (by spelling) has 22's semantics, so that no option
// lost them to an ID 22 renamed.
func TestClang19Semantics(t *testing.T) {
	by19 := map[string]*Record{}
	for i := range clang19Records {
		r := &clang19Records[i]
		if strings.HasPrefix(r.ID, "anonymous_") {
			by19[anonymousKey(r)] = r
		} else {
			by19[r.ID] = r
		}
	}
	set22 := clangOptions()
	var missing []string
	for id := range clangSemantics() {
		r22 := &set22.recs[set22.idx.lastOfID(set22.recs, id)]
		key := id
		if strings.HasPrefix(id, "anonymous_") {
			key = anonymousKey(r22)
		}
		r19 := by19[key]
		switch _, only := clang22Only[id]; {
		case r19 == nil && !only:
			missing = append(missing, fmt.Sprintf("%s (%s)", id, r22.Spelling()))
		case r19 != nil && only:
			t.Errorf("clang22Only lists %s, which LLVM 19's table has (%s)", id, r19.Spelling())
		case r19 != nil && (r19.Spelling() != r22.Spelling() || r19.Kind != r22.Kind):
			t.Errorf("%s is %s (%s) in LLVM 22, %s (%s) in 19: clangGroups cannot name both by one ID",
				id, r22.Spelling(), r22.Kind, r19.Spelling(), r19.Kind)
		}
	}
	for id := range clang22Only {
		if _, ok := clangSemantics()[id]; !ok {
			t.Errorf("clang22Only lists %s, which clangGroups do not", id)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		t.Errorf("clangGroups list %d IDs that LLVM 19's clang table lacks; add each to clang22Only if "+
			"clang 19 does not have the option, or name it as 19 does:\n\t%s", len(missing), strings.Join(missing, "\n\t"))
	}

	// By spelling, whatever the kind (--offload-arch= is Joined in 19,
	// CommaJoined in 22), for the tools both have it for.
	by22 := map[string][]*Option{}
	for i := range set22.recs {
		if r := &set22.recs[i]; named(r.Kind) {
			by22[r.Spelling()] = append(by22[r.Spelling()], set22.option(int32(i)))
		}
	}
	set19 := clang19Options()
	compared := 0
	for i := range set19.recs {
		o := set19.option(int32(i))
		if !named(o.Kind) {
			continue
		}
		for _, o22 := range by22[o.Spelling()] {
			if o22.Visibility&o.Visibility == 0 {
				continue
			}
			compared++
			if o.Value != o22.Value || o.Uncacheable != o22.Uncacheable || o.NoRemote != o22.NoRemote {
				t.Errorf("%s (%s in 19, %s in 22): LLVM 19's table gives it %v %q %q, 22's %v %q %q",
					o.Spelling(), o.ID, o22.ID, o.Value, o.Uncacheable, o.NoRemote, o22.Value, o22.Uncacheable, o22.NoRemote)
			}
		}
	}
	t.Logf("%d options of LLVM 19's clang table compared with 22's", compared)
}

// TestLLD19Semantics checks that every ID lldSemantics lists is an option
// of LLVM 19's lld table or one lld19Absent names, and that 19's options
// have 22's semantics.
func TestLLD19Semantics(t *testing.T) {
	lld := lld19Table()
	for id, s := range lldSemantics {
		o := lld.Lookup(id)
		switch absent := slices.Contains(lld19Absent, id); {
		case o == nil && !absent:
			t.Errorf("lldSemantics lists %s, which LLVM 19's lld table lacks and lld19Absent does not name", id)
		case o != nil && (o.Value != s.Value || o.Uncacheable != s.Uncacheable || o.NoRemote != s.NoRemote):
			t.Errorf("LLVM 19's lld %s has other semantics than lldSemantics's", id)
		}
	}
	for _, o := range lld.Options() {
		o22 := LLD().Lookup(o.ID)
		if o22 == nil || o22.Spelling() != o.Spelling() || o22.Value != o.Value || o22.Uncacheable != o.Uncacheable || o22.NoRemote != o.NoRemote {
			t.Errorf("LLVM 19's lld %s (%s) is not 22's", o.ID, o.Spelling())
		}
	}
}

// TestClang19OnlySemantics checks clang19OnlyGroups: each ID is an
// option of LLVM 19's table that 22 does not have (by spelling and kind),
// the groups agree, and the options of 19's tables that 22 does not have
// follow the rules TestClangSemanticsRules checks of 22's.
func TestClang19OnlySemantics(t *testing.T) {
	in22 := map[string]bool{}
	for i := range clangRecords {
		in22[anonymousKey(&clangRecords[i])] = true
	}
	set19 := clang19Options()
	for _, g := range clang19OnlyGroups {
		for _, id := range g.ids {
			i := set19.idx.lastOfID(set19.recs, id)
			switch {
			case i < 0:
				t.Errorf("clang19OnlyGroups: no option %s in LLVM 19's table", id)
			case in22[anonymousKey(&set19.recs[i])]:
				t.Errorf("clang19OnlyGroups list %s, which LLVM 22 has: list it in clangGroups", id)
			}
		}
	}
	if _, conflicts := buildSemantics(clang19OnlyGroups); len(conflicts) > 0 {
		t.Errorf("clang19OnlyGroups disagree: %v", conflicts)
	}
	r, err := ForRelease(19)
	if err != nil {
		t.Fatal(err)
	}
	for _, tab := range []*Table{r.ClangDriver(), r.ClangCC1(), r.ClangCC1As()} {
		for _, o := range tab.Options() {
			if in22[anonymousKey(o.Record)] {
				continue // TestClang19Semantics compares it with 22's
			}
			switch o.Value {
			case WriteFile, WriteDir:
				if o.Uncacheable == "" {
					t.Errorf("%s (LLVM 19) %s writes a file the job does not name, but is not uncacheable", tab.Tool, o.Spelling())
				}
				fallthrough
			case Plugin, Program:
				if o.NoRemote == "" {
					t.Errorf("%s (LLVM 19) %s, a %s, runs on workers", tab.Tool, o.Spelling(), o.Value)
				}
			}
		}
	}
}
