package options

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
)

// Tables are the option tables of one LLVM release: clang's driver, -cc1
// and -cc1as and lld's ELF driver, as that release's clang and ld.lld
// read command lines, with offcc's semantics (which name options by ID)
// laid over them. Each table is made the first time it is asked for, so a
// process that uses one release pays nothing for the others.
type Tables struct {
	// Major is the LLVM release's major version (19, 22).
	Major int

	clang func() clangToolTables
	lld   func() *Table
}

// ClangDriver returns the release's clang driver options (gcc mode).
func (r *Tables) ClangDriver() *Table { return r.clang().driver }

// ClangCC1 returns the options of the release's clang -cc1.
func (r *Tables) ClangCC1() *Table { return r.clang().cc1 }

// ClangCC1As returns the options of the release's clang -cc1as.
func (r *Tables) ClangCC1As() *Table { return r.clang().as }

// LLD returns the options of the release's ld.lld (see LLD).
func (r *Tables) LLD() *Table { return r.lld() }

// releases are the LLVM releases offcc has tables of, oldest first. The
// newest is the one ClangDriver, ClangCC1, ClangCC1As and LLD return.
var releases = []*Tables{
	{Major: 19, clang: clang19TableSet, lld: lld19Table},
	{Major: 22, clang: clangTableSet, lld: lldTable},
}

// Releases returns the major versions of the LLVM releases offcc has
// option tables of, oldest first.
func Releases() []int {
	out := make([]int, len(releases))
	for i, r := range releases {
		out[i] = r.Major
	}
	return out
}

// Newest returns the option tables of the newest LLVM release offcc
// knows (those ClangDriver, ClangCC1, ClangCC1As and LLD return).
func Newest() *Tables { return releases[len(releases)-1] }

// ForRelease returns the option tables of LLVM release major, or an error
// naming the releases offcc has tables of.
func ForRelease(major int) (*Tables, error) {
	for _, r := range releases {
		if r.Major == major {
			return r, nil
		}
	}
	known := make([]string, len(releases))
	for i, r := range releases {
		known[i] = strconv.Itoa(r.Major)
	}
	return nil, fmt.Errorf("no option tables for LLVM %d: offcc knows LLVM %s", major, strings.Join(known, " and "))
}

// clang19Options returns LLVM 19's clang options (clang19_records.go,
// generated from libclang-19-dev's Options.inc) with offcc's semantics,
// made once.
var clang19Options = sync.OnceValue(func() *optionSet {
	return newOptionSet(clang19Records, &clang19Index, func(r *Record) (Semantics, bool) {
		if id := semanticsID(r); id != "" {
			if s, own := semanticsOf(clangGroups, id); own {
				return s, own
			}
		}
		return semanticsOf(clang19OnlyGroups, r.ID)
	})
})

// clang19OnlyGroups are offcc's knowledge of the options of clang 19 that
// LLVM 22 no longer has, by 19's IDs (as clangGroups, see clangSemantics):
// the Objective-C migrators, which write reports and directories or
// rewrite the sources in place, and settings.
var clang19OnlyGroups = []semGroup{
	{value: WriteFile, uncacheable: "Objective-C migration", ids: []string{"arcmt_migrate_report_output"}},
	{value: WriteDir, uncacheable: "Objective-C migration", ids: []string{
		"ccc_arcmt_migrate", "ccc_objcmt_migrate", "mt_migrate_directory",
	}},
	{uncacheable: "Objective-C migration", noRemote: "rewrites its sources in place", ids: []string{"ccc_arcmt_modify"}},
	{value: SearchDir, ids: []string{"objcmt_allowlist_dir_path"}},
	{value: Name, ids: []string{"arcmt_action_EQ", "output_asm_variant", "fcoarray_EQ"}},
}

// semanticsID returns the LLVM 22 ID that clangGroups know a record of
// another release's clang table by. TableGen numbers the options it
// defines without a name in the order it meets them (anonymous_2106 is
// -coverage-notes-file= in 22, anonymous_1861 in 19): such a record is
// known by 22's record of its spelling and kind ("" where 22 has none),
// any other by its own ID, which names the same option in both (a test
// checks this of every ID clangGroups list).
func semanticsID(r *Record) string {
	if !strings.HasPrefix(r.ID, "anonymous_") {
		return r.ID
	}
	return clangAnonymousIDs()[anonymousKey(r)]
}

// anonymousKey is what tells an anonymous record from the others of its
// table: its spelling and kind.
func anonymousKey(r *Record) string { return r.Spelling() + " " + r.Kind.String() }

// clangAnonymousIDs maps anonymousKey of LLVM 22's anonymous clang
// records to their IDs, made once.
var clangAnonymousIDs = sync.OnceValue(func() map[string]string {
	m := map[string]string{}
	for i := range clangRecords {
		if r := &clangRecords[i]; strings.HasPrefix(r.ID, "anonymous_") {
			m[anonymousKey(r)] = r.ID
		}
	}
	return m
})

// clang19TableSet is LLVM 19's clang driver, -cc1 and -cc1as tables.
var clang19TableSet = sync.OnceValue(func() clangToolTables { return clang19Options().toolTables() })

// lld19Table is LLVM 19's ld.lld table, made once.
var lld19Table = sync.OnceValue(func() *Table { return newLLDTable(lld19Records()) })

// lld19Records returns ld.lld 19's ELF records: lldRecords (22's) less
// those lld19Absent names.
func lld19Records() []Record {
	drop := make(map[string]bool, len(lld19Absent))
	for _, id := range lld19Absent {
		drop[id] = true
	}
	out := make([]Record, 0, len(lldRecords))
	for _, r := range lldRecords {
		if !drop[r.ID] {
			out = append(out, r)
		}
	}
	return out
}
