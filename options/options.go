// Package options is offcc's one model of the command lines it reads:
// clang's driver, clang -cc1 and lld. Its tables hold every option of the
// tools with its kind, spellings and aliases, as the tools' own option
// tables have them (clang's is generated from Options.inc, see
// internal/genoptions), together with what offcc knows of each option's
// value and what offcc may do with it. ClangDriver, ClangCC1, ClangCC1As
// and LLD are LLVM 22's tables; ForRelease returns those of each LLVM
// release offcc knows (Releases: 19 and 22). A command line is parsed once, as
// llvm::opt::OptTable parses it, into Args that every part of offcc reads:
// the driver, the build cache's keys, the include scanner and the farm.
package options

import "strings"

// Kind is how an option takes its value, as llvm::opt::Option::OptionClass.
type Kind uint8

// The option kinds of LLVM's option library.
const (
	Group               Kind = iota // a group of options, never on a command line
	Input                           // a positional argument
	Unknown                         // an argument that matches no option
	Flag                            // -c: no value
	Joined                          // -std=c++17: the value follows in the same argument
	Separate                        // -Xclang X: the value is the next argument
	JoinedOrSeparate                // -DX or -D X
	CommaJoined                     // -Wl,a,b: comma-separated values in the same argument
	MultiArg                        // -sectcreate A B C: a fixed number of following arguments
	JoinedAndSeparate               // -Xarch_gfx90a X: a joined value and the next argument
	RemainingArgs                   // --: every following argument
	RemainingArgsJoined             // -_SLASH_link: a joined value and every following argument
)

var kindNames = [...]string{
	Group: "Group", Input: "Input", Unknown: "Unknown", Flag: "Flag", Joined: "Joined",
	Separate: "Separate", JoinedOrSeparate: "JoinedOrSeparate", CommaJoined: "CommaJoined",
	MultiArg: "MultiArg", JoinedAndSeparate: "JoinedAndSeparate",
	RemainingArgs: "RemainingArgs", RemainingArgsJoined: "RemainingArgsJoined",
}

// String returns the kind as LLVM's TableGen output spells it.
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "Kind(?)"
}

// KindByName returns the Kind TableGen spells name, and whether there is one.
func KindByName(name string) (Kind, bool) {
	for k, n := range kindNames {
		if n == name {
			return Kind(k), true
		}
	}
	return 0, false
}

// Visibility is the set of tools (clang's driver modes and front ends) an
// option belongs to.
type Visibility uint16

// The visibilities of clang's option table (clang/Options/Options.h).
const (
	DefaultVis  Visibility = 1 << iota // clang's driver (gcc mode)
	CC1Option                          // clang -cc1
	CC1AsOption                        // clang -cc1as
	CLOption                           // clang-cl
	FlangOption                        // flang's driver
	FC1Option                          // flang -fc1
	DXCOption                          // clang-dxc
	LLDOption                          // ld.lld (offcc's lld table)
)

var visibilityNames = []string{"DefaultVis", "CC1Option", "CC1AsOption", "CLOption", "FlangOption", "FC1Option", "DXCOption", "LLDOption"}

// Flags are an option's flags in its tool's table.
type Flags uint16

// The option flags of clang's table (llvm/Option/OptTable.h and
// clang/Options/Options.h).
const (
	HelpHidden       Flags = 1 << iota // not shown by --help
	RenderAsInput                      // rendered as its values alone
	RenderJoined                       // rendered joined whatever its kind
	RenderSeparate                     // rendered separate whatever its kind
	NoXarchOption                      // not accepted after -Xarch_
	LinkerInput                        // an input of the linker
	NoArgumentUnused                   // never reported as unused
	Unsupported                        // an error when used
	Ignored                            // accepted and ignored
	TargetSpecific                     // an error on targets it is not for
	LinkOption                         // passed on to the linker
)

var flagNames = []string{"HelpHidden", "RenderAsInput", "RenderJoined", "RenderSeparate", "NoXarchOption",
	"LinkerInput", "NoArgumentUnused", "Unsupported", "Ignored", "TargetSpecific", "LinkOption"}

// VisibilityByName returns the visibility bit TableGen spells name.
func VisibilityByName(name string) (Visibility, bool) {
	for i, n := range visibilityNames {
		if n == name {
			return Visibility(1) << i, true
		}
	}
	return 0, false
}

// FlagByName returns the flag bit TableGen spells name.
func FlagByName(name string) (Flags, bool) {
	for i, n := range flagNames {
		if n == name {
			return Flags(1) << i, true
		}
	}
	return 0, false
}

func bitNames(bits uint64, names []string) string {
	var out []string
	for i, n := range names {
		if bits&(1<<i) != 0 {
			out = append(out, n)
		}
	}
	if len(out) == 0 {
		return "0"
	}
	return strings.Join(out, "|")
}

// String lists the visibilities, joined by '|'.
func (v Visibility) String() string { return bitNames(uint64(v), visibilityNames) }

// String lists the flags, joined by '|'.
func (f Flags) String() string { return bitNames(uint64(f), flagNames) }

// Record is one option as its tool's table defines it: one OPTION record
// of clang's Options.inc, or one definition of lld's Options.td.
type Record struct {
	// Prefixes are the spellings' prefixes ("-", "--", "/"), in the
	// table's order: Prefixes[0]+Name is the option's canonical spelling.
	Prefixes []string
	// Name is the spelling after the prefix, "=" included ("std=").
	Name string
	// ID is the table's identifier of the option (std_EQ).
	ID string
	// Kind is how the option takes its value.
	Kind Kind
	// Group and Alias are IDs ("" for none); AliasArgs are the values an
	// alias adds to its target (AliasArgs<["cwd"]>).
	Group, Alias string
	AliasArgs    []string
	// Flags and Visibility are the option's flags and tools.
	Flags      Flags
	Visibility Visibility
	// NumArgs is a MultiArg option's number of values.
	NumArgs int
	// MetaVar is the value's name in --help ("<file>"), "" for none.
	MetaVar string
}

// Spelling returns the option's canonical spelling: its first prefix and
// its name.
func (r *Record) Spelling() string {
	if len(r.Prefixes) == 0 {
		return r.Name
	}
	return r.Prefixes[0] + r.Name
}

//go:generate go run ./internal/genoptions /usr/lib/llvm-22/include/clang/Options/Options.inc clang_records.go clang_index.go
//go:generate go run ./internal/genoptions -name clang19 /usr/lib/llvm-19/include/clang/Driver/Options.inc clang19_records.go clang19_index.go
