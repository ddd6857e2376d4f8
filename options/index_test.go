package options

import (
	"reflect"
	"sort"
	"strings"
	"testing"
)

// TestClangIndexIsBuilt checks that the generated index of clang's records
// is what buildIndex makes of them at run time.
func TestClangIndexIsBuilt(t *testing.T) {
	if got, want := &clangIndex, buildIndex(clangRecords); !reflect.DeepEqual(got, want) {
		t.Errorf("clang_index.go is not buildIndex(clangRecords): run go generate ./options")
	}
	if got, want := &clang19Index, buildIndex(clang19Records); !reflect.DeepEqual(got, want) {
		t.Errorf("clang19_index.go is not buildIndex(clang19Records): run go generate ./options")
	}
}

// TestNamePrefixes checks namePrefixes against trying every prefix of an
// argument, on clang's and lld's records (LLVM 22's and 19's).
func TestNamePrefixes(t *testing.T) {
	for _, set := range []*optionSet{clangOptions(), LLD().optionSet, clang19Options(), lld19Table().optionSet} {
		byName := map[string]int32{}
		for i := len(set.recs) - 1; i >= 0; i-- {
			if named(set.recs[i].Kind) {
				byName[set.recs[i].Name] = int32(i)
			}
		}
		args := []string{"", "f", "fopenmp", "fopenmp-targets=x86_64-pc-linux-gnu", "offload-arch=gfx906,gfx908", "usr/include/x", "Wl,-rpath,/x",
			"internal-isystem", "O2", "std=c++17", "x", "zzz", "plugin-opt=mcpu=x", "o", "Xclang"}
		for i := range set.recs {
			args = append(args, set.recs[i].Name, set.recs[i].Name+"x", set.recs[i].Name+"=1")
			if n := set.recs[i].Name; len(n) > 1 {
				args = append(args, n[:len(n)-1])
			}
		}
		for _, s := range args {
			var want []int32
			for n := len(s); n >= 0; n-- {
				if i, ok := byName[s[:n]]; ok {
					want = append(want, i)
				}
			}
			var got []int32
			set.idx.namePrefixes(set.recs, s, func(first int32, size int) {
				if !strings.HasPrefix(s, set.recs[first].Name) || len(set.recs[first].Name) != size {
					t.Errorf("%q: visited %q with size %d", s, set.recs[first].Name, size)
				}
				got = append(got, first)
			})
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%q: namePrefixes gives %v, want %v", s, got, want)
			}
		}
		// next chains every record of a name in table order.
		for i := range set.recs {
			if j := set.idx.next[i]; j >= 0 && (j <= int32(i) || set.recs[j].Name != set.recs[i].Name) {
				t.Errorf("next of %d is %d", i, j)
			}
		}
		if !sort.SliceIsSorted(set.idx.prefixes, func(i, j int) bool { return len(set.idx.prefixes[i]) > len(set.idx.prefixes[j]) }) {
			t.Errorf("prefixes not longest first: %q", set.idx.prefixes)
		}
	}
}

// TestSemanticsOf checks semanticsOf against buildSemantics for every ID
// of clang's table and every ID the groups list.
func TestSemanticsOf(t *testing.T) {
	sem := clangSemantics()
	ids := map[string]bool{"no_such_option": true}
	for i := range clangRecords {
		ids[clangRecords[i].ID] = true
	}
	for id := range sem {
		ids[id] = true
	}
	for id := range ids {
		got, listed := semanticsOf(clangGroups, id)
		want, ok := sem[id]
		if listed != ok || got != want {
			t.Errorf("semanticsOf(%s) = %+v, %v; buildSemantics has %+v, %v", id, got, listed, want, ok)
		}
	}
}
