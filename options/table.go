package options

import (
	"fmt"
	"sync"
	"sync/atomic"
)

// ValueKind says what an option's value names, for the parts of offcc that
// must know which files a command reads and writes.
type ValueKind uint8

// The kinds of option values.
const (
	// NoValue is a flag's, or a value offcc has not classified: a
	// setting that names nothing on disk as far as offcc knows.
	NoValue ValueKind = iota
	// Name is a setting, number, name or spelling: it names no file.
	Name
	// ReadFile is a file the tool reads.
	ReadFile
	// WriteFile is a file the tool writes.
	WriteFile
	// SearchDir is a directory the tool searches (headers, libraries).
	SearchDir
	// WriteDir is a directory the tool writes into.
	WriteDir
	// Plugin is code the tool loads into itself.
	Plugin
	// Program is a program the tool runs.
	Program
	// Macro is a preprocessor macro definition or name (-D, -U).
	Macro
	// Forward is an argument for another tool or layer (-Xclang,
	// -mllvm, -Wl,): what it does is read from its own table.
	Forward
)

var valueKindNames = [...]string{NoValue: "none", Name: "name", ReadFile: "file read", WriteFile: "file written",
	SearchDir: "directory searched", WriteDir: "directory written", Plugin: "plugin", Program: "program run",
	Macro: "macro", Forward: "forwarded arguments"}

// String describes the value kind.
func (v ValueKind) String() string {
	if int(v) < len(valueKindNames) {
		return valueKindNames[v]
	}
	return "ValueKind(?)"
}

// IsPath reports whether values of this kind name files or directories.
func (v ValueKind) IsPath() bool {
	switch v {
	case ReadFile, WriteFile, SearchDir, WriteDir, Plugin, Program:
		return true
	}
	return false
}

// Option is one option of a Table: its record (in the table's records,
// which must not change), what offcc knows of its value, and what offcc
// may do with a command line that has it.
type Option struct {
	*Record
	// Value is what the option's value names.
	Value ValueKind
	// Uncacheable, when not "", is why a job with this option cannot be
	// cached: its outputs are not a function of its inputs, or it writes
	// files the plan does not know. It is what offcc counts.
	Uncacheable string
	// NoRemote, when not "", is why a job with this option never runs on
	// a farm worker.
	NoRemote string

	alias *Option
	group *Option
}

// Alias returns the option this one is an alias of, or nil.
func (o *Option) Alias() *Option { return o.alias }

// Unaliased returns the option an alias stands for, or o itself.
func (o *Option) Unaliased() *Option {
	for o.alias != nil {
		o = o.alias
	}
	return o
}

// Is reports whether o is the option id (after resolving aliases), as
// llvm::opt::Option::matches.
func (o *Option) Is(id string) bool {
	return o != nil && o.Unaliased().ID == id
}

// InGroup reports whether o, or the option it aliases, belongs to the
// group id, directly or through the groups above its own.
func (o *Option) InGroup(id string) bool {
	if o == nil {
		return false
	}
	for g := o.Unaliased().group; g != nil; g = g.group {
		if g.ID == id {
			return true
		}
	}
	return false
}

// RenderStyle is how clang writes an argument back out
// (llvm::opt::Option::getRenderStyle).
type RenderStyle uint8

// The render styles.
const (
	RenderValuesStyle RenderStyle = iota
	RenderCommaJoinedStyle
	RenderJoinedStyle
	RenderSeparateStyle
)

// RenderStyle returns how arguments of o are rendered.
func (o *Option) RenderStyle() RenderStyle {
	switch {
	case o.Flags&RenderJoined != 0:
		return RenderJoinedStyle
	case o.Flags&RenderSeparate != 0:
		return RenderSeparateStyle
	}
	switch o.Kind {
	case Group, Input, Unknown:
		return RenderValuesStyle
	case Joined, JoinedAndSeparate:
		return RenderJoinedStyle
	case CommaJoined:
		return RenderCommaJoinedStyle
	}
	return RenderSeparateStyle
}

// Table is one tool's options as its option parser sees them: the options
// of one visibility, searched in the tool's order.
type Table struct {
	// Tool names the command lines the table reads ("clang", "clang -cc1",
	// "ld.lld"), for messages.
	Tool string
	// Visibility selects the options the tool accepts.
	Visibility Visibility

	*optionSet

	// seen memoises candidates by argument, for up to maxSeen arguments:
	// a build parses the same -cc1 command lines several times, and its
	// jobs share most of their arguments.
	seen     sync.Map // string -> []candidate
	seenSize atomic.Int32
}

// maxSeen bounds the arguments a table remembers the candidates of.
const maxSeen = 1 << 14

// optionSet is a tool's options, shared by the tables of its
// visibilities (clang's driver, -cc1 and -cc1as). An Option is made the
// first time it is asked for (option): a process that parses a command
// line or two meets a few dozen of clang's 3,600 options.
type optionSet struct {
	recs []Record
	idx  *recordIndex
	// sem returns the semantics of a record, and whether it has its own.
	sem func(r *Record) (Semantics, bool)
	// opts[i] is recs[i]'s option, once made.
	opts []atomic.Pointer[Option]
	// input and unknown are the table's Input and Unknown options (the
	// last record of each kind), or options of their own.
	input   *Option
	unknown *Option
}

// newOptionSet makes the options of records in the tool's search order,
// found through idx (buildIndex(recs), or clang's generated index), with
// the semantics sem gives (by ID, see semanticsID) laid over them. An alias sem does not
// list has the semantics of the option it stands for (Table.Parse returns
// that option, Table.Lookup the alias).
func newOptionSet(recs []Record, idx *recordIndex, sem func(r *Record) (Semantics, bool)) *optionSet {
	set := &optionSet{recs: recs, idx: idx, sem: sem, opts: make([]atomic.Pointer[Option], len(recs))}
	if idx.input >= 0 {
		set.input = set.option(idx.input)
	} else {
		set.input = &Option{Record: &Record{Name: "<input>", ID: "INPUT", Kind: Input}}
	}
	if idx.unknown >= 0 {
		set.unknown = set.option(idx.unknown)
	} else {
		set.unknown = &Option{Record: &Record{Name: "<unknown>", ID: "UNKNOWN", Kind: Unknown}}
	}
	return set
}

// option returns the option of recs[i], made on first use: the options
// of its alias and group first (each option is made once: concurrent
// callers get the same).
func (set *optionSet) option(i int32) *Option {
	p := &set.opts[i]
	if o := p.Load(); o != nil {
		return o
	}
	r := &set.recs[i]
	o := &Option{Record: r}
	if a := set.idx.alias[i]; a >= 0 {
		o.alias = set.option(a)
	}
	if g := set.idx.group[i]; g >= 0 {
		o.group = set.option(g)
	}
	if s, own := set.sem(r); own {
		o.Value, o.Uncacheable, o.NoRemote = s.Value, s.Uncacheable, s.NoRemote
	} else if o.alias != nil {
		u := o.Unaliased()
		o.Value, o.Uncacheable, o.NoRemote = u.Value, u.Uncacheable, u.NoRemote
	}
	if p.CompareAndSwap(nil, o) {
		return o
	}
	return p.Load()
}

// newTable builds a table from records in the tool's search order, with
// the semantics sem (by ID) laid over them.
func newTable(tool string, vis Visibility, recs []Record, sem map[string]Semantics) *Table {
	return newOptionSet(recs, buildIndex(recs), func(r *Record) (Semantics, bool) {
		s, ok := sem[r.ID]
		return s, ok
	}).table(tool, vis)
}

// table returns the table of the options of set that vis selects.
func (set *optionSet) table(tool string, vis Visibility) *Table {
	return &Table{Tool: tool, Visibility: vis, optionSet: set}
}

// Lookup returns the option with the table's identifier id, or nil.
func (t *Table) Lookup(id string) *Option {
	if i := t.idx.lastOfID(t.recs, id); i >= 0 {
		return t.option(i)
	}
	return nil
}

// Options returns every option of the table the tool accepts, in the
// table's order.
func (t *Table) Options() []*Option {
	var out []*Option
	for i := range t.recs {
		if r := &t.recs[i]; named(r.Kind) && r.Visibility&t.Visibility != 0 {
			out = append(out, t.option(int32(i)))
		}
	}
	return out
}

// Semantics is what offcc knows of an option beyond its tool's table.
type Semantics struct {
	Value       ValueKind
	Uncacheable string
	NoRemote    string
}

// clangOptions returns LLVM 22's clang options with offcc's semantics,
// made once.
var clangOptions = sync.OnceValue(func() *optionSet {
	return newOptionSet(clangRecords, &clangIndex, func(r *Record) (Semantics, bool) {
		return semanticsOf(clangGroups, r.ID)
	})
})

// clangToolTables are clang's driver, -cc1 and -cc1as tables over one
// release's options.
type clangToolTables struct{ driver, cc1, as *Table }

// toolTables returns the driver, -cc1 and -cc1as tables over set.
func (set *optionSet) toolTables() clangToolTables {
	return clangToolTables{
		driver: set.table("clang", DefaultVis),
		cc1:    set.table("clang -cc1", CC1Option),
		as:     set.table("clang -cc1as", CC1AsOption),
	}
}

// clangTableSet is LLVM 22's clang driver, -cc1 and -cc1as tables.
var clangTableSet = sync.OnceValue(func() clangToolTables { return clangOptions().toolTables() })

// ClangDriver returns clang's driver options (gcc mode), LLVM 22's.
func ClangDriver() *Table { return clangTableSet().driver }

// ClangCC1 returns the options of clang -cc1, LLVM 22's.
func ClangCC1() *Table { return clangTableSet().cc1 }

// ClangCC1As returns the options of clang -cc1as, the integrated
// assembler, LLVM 22's.
func ClangCC1As() *Table { return clangTableSet().as }

// MissingValueError is an option at the end of a command line that lacks
// the values it takes, reported as clang reports it.
type MissingValueError struct {
	Spelling string
	Index    int
	Count    int
}

func (e *MissingValueError) Error() string {
	s := "s"
	if e.Count == 1 {
		s = ""
	}
	return fmt.Sprintf("argument to '%s' is missing (expected %d value%s)", e.Spelling, e.Count, s)
}

// hasPrefixIn reports whether s starts with one of the table's prefixes.
func (t *Table) hasPrefixIn(s string) bool { return t.idx.hasPrefixIn(s) }
