package options

import (
	"slices"
	"testing"
)

func lld19(t *testing.T) *Table {
	t.Helper()
	r, err := ForRelease(19)
	if err != nil {
		t.Fatal(err)
	}
	return r.LLD()
}

// TestLLD19TableMatchesInstalled checks LLVM 19's lld table against
// ld.lld 19's --help, as TestLLDTableMatchesInstalled checks 22's.
func TestLLD19TableMatchesInstalled(t *testing.T) {
	checkLLDHelp(t, lld19(t), llvm19Tool(t, "ld.lld"))
}

// TestLLD19SpellingsKnownToInstalled runs every spelling of LLVM 19's lld
// table through ld.lld 19, as TestLLDSpellingsKnownToInstalled does 22's.
func TestLLD19SpellingsKnownToInstalled(t *testing.T) {
	checkLLDSpellings(t, lld19(t), llvm19Tool(t, "ld.lld"))
}

// TestLLD19Absent checks the records ld.lld 19 is said to lack
// (lld19Absent) against it: LLVM 19's table reads each of their
// spellings as ld.lld 19 does, as an unknown argument where it reports
// one, and otherwise as an option of its own (--plugin-opt=time-trace=
// is --plugin-opt= to ld.lld 19). The list thus holds no option 19 has.
func TestLLD19Absent(t *testing.T) {
	lld, table := llvm19Tool(t, "ld.lld"), lld19(t)
	absent := map[string]bool{}
	for _, id := range lld19Absent {
		absent[id] = true
	}
	// ld.lld 19 stops after 20 errors, whatever --error-limit says:
	// probe a few spellings at a time.
	var args, want []string
	probe := func() {
		unknown, stderr := lldUnknown(t, lld, t.TempDir(), append([]string{"--help"}, args...)...)
		for _, w := range want {
			a, err := table.ParseOne([]string{w, "0"}, 0)
			if err != nil {
				t.Fatalf("%s: %v", w, err)
			}
			if slices.Contains(unknown, w) != a.IsUnknown() {
				t.Errorf("ld.lld 19 says unknown %v for %s, which LLVM 19's table reads as %s:\n%s",
					slices.Contains(unknown, w), w, a.Option.ID, stderr)
			}
		}
		args, want = args[:0], want[:0]
	}
	for i := range lldRecords {
		r := &lldRecords[i]
		if !absent[r.ID] {
			continue
		}
		delete(absent, r.ID)
		o := &Option{Record: r}
		for _, p := range r.Prefixes {
			words := lldProbeArgs(o, p)
			args = append(args, words...)
			want = append(want, words[0])
			if len(want) == 10 {
				probe()
			}
		}
	}
	probe()
	for id := range absent {
		t.Errorf("lld19Absent names %s, which is no record of lldRecords", id)
	}
}
