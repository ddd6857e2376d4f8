package gen

import (
	"reflect"
	"strings"
	"testing"

	"github.com/offcc/offcc/options"
)

// inc19 is an Options.inc as LLVM 19's TableGen writes it: PREFIX arrays
// ending in an empty string, and prefixed names as string literals.
const inc19 = `/*===- TableGen'erated file -------------------------------------*- C++ -*-===*\
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

/////////
// Prefixes

#ifdef PREFIX
#define COMMA ,
PREFIX(prefix_0, {llvm::StringLiteral("")})
PREFIX(prefix_1, {llvm::StringLiteral("-") COMMA llvm::StringLiteral("")})
PREFIX(prefix_4, {llvm::StringLiteral("-") COMMA llvm::StringLiteral("--") COMMA llvm::StringLiteral("")})
#undef COMMA
#endif // PREFIX

#ifdef OPTION
OPTION(llvm::ArrayRef<llvm::StringLiteral>(), "<action group>", Action_Group, Group, INVALID, INVALID, nullptr, 0, 0, 0, nullptr, (std::array<std::pair<std::array<unsigned, 2>, const char*>, 1>{{ std::make_pair(std::array<unsigned, 2>{{0, 0}}, nullptr) }}), nullptr, nullptr)
OPTION(prefix_0, "<input>", INPUT, Input, INVALID, INVALID, nullptr, 0, DefaultVis, 0, nullptr, (std::array<std::pair<std::array<unsigned, 2>, const char*>, 1>{{ std::make_pair(std::array<unsigned, 2>{{0, 0}}, nullptr) }}), nullptr, nullptr)
OPTION(prefix_4, "-ansi", ansi, Flag, Action_Group, INVALID, nullptr, 0, DefaultVis, 0, nullptr, (std::array<std::pair<std::array<unsigned, 2>, const char*>, 1>{{ std::make_pair(std::array<unsigned, 2>{{0, 0}}, nullptr) }}), nullptr, nullptr)
OPTION(prefix_1, "-fopenmp-targets=", fopenmp_targets_EQ, CommaJoined, INVALID, INVALID, nullptr, NoXarchOption | HelpHidden, DefaultVis | CC1Option | FlangOption | FC1Option, 0,
       "Specify comma-separated list of triples (\"x, y\") OpenMP offloading targets to be supported", (std::array<std::pair<std::array<unsigned, 2>, const char*>, 1>{{ std::make_pair(std::array<unsigned, 2>{{0, 0}}, nullptr) }}), "<tr" "iples>", nullptr)
OPTION(prefix_1, "-objcmt-whitelist-dir-path=", anonymous_26, Joined, INVALID, ansi, "a\0b\0", 0, DefaultVis | CC1Option, 0, nullptr, (std::array<std::pair<std::array<unsigned, 2>, const char*>, 1>{{ std::make_pair(std::array<unsigned, 2>{{0, 0}}, nullptr) }}), nullptr, nullptr)
#endif // OPTION
`

func TestParseLLVM19(t *testing.T) {
	recs, err := Parse([]byte(inc19))
	if err != nil {
		t.Fatal(err)
	}
	want := []options.Record{
		{Name: "<action group>", ID: "Action_Group", Kind: options.Group},
		{Name: "<input>", ID: "INPUT", Kind: options.Input, Visibility: options.DefaultVis},
		{Prefixes: []string{"-", "--"}, Name: "ansi", ID: "ansi", Kind: options.Flag, Group: "Action_Group", Visibility: options.DefaultVis},
		{Prefixes: []string{"-"}, Name: "fopenmp-targets=", ID: "fopenmp_targets_EQ", Kind: options.CommaJoined,
			Flags: options.HelpHidden | options.NoXarchOption, Visibility: options.DefaultVis | options.CC1Option | options.FlangOption | options.FC1Option,
			MetaVar: "<triples>"},
		{Prefixes: []string{"-"}, Name: "objcmt-whitelist-dir-path=", ID: "anonymous_26", Kind: options.Joined, Alias: "ansi",
			AliasArgs: []string{"a", "b"}, Visibility: options.DefaultVis | options.CC1Option},
	}
	if !reflect.DeepEqual(recs, want) {
		t.Errorf("Parse of an LLVM 19 Options.inc:\n got %+v\nwant %+v", recs, want)
	}
}

// TestParseLLVM19Errors checks that what Parse cannot read is an error
// naming it: a prefix array without its sentinel, an unknown prefix set,
// a spelling without its first prefix, a visibility offcc does not know.
func TestParseLLVM19Errors(t *testing.T) {
	for _, c := range []struct{ old, new, want string }{
		{`PREFIX(prefix_1, {llvm::StringLiteral("-") COMMA llvm::StringLiteral("")})`,
			`PREFIX(prefix_1, {llvm::StringLiteral("-")})`, "prefix set prefix_1 does not end"},
		{`OPTION(prefix_4, "-ansi"`, `OPTION(prefix_9, "-ansi"`, "no prefix set prefix_9"},
		{`"-fopenmp-targets=", fopenmp_targets_EQ`, `"fopenmp-targets=", fopenmp_targets_EQ`,
			`spelling "fopenmp-targets=" lacks its prefix "-"`},
		{`DefaultVis | CC1Option, 0, nullptr`, `DefaultVis | SYCLOption, 0, nullptr`, "unknown visibility SYCLOption"},
		{`nullptr, nullptr)
#endif`, `nullptr)
#endif`, "13 fields, want 14 (LLVM 19) or 15"},
	} {
		broken := strings.Replace(inc19, c.old, c.new, 1)
		if broken == inc19 {
			t.Fatalf("%q is not in the test's Options.inc", c.old)
		}
		if _, err := Parse([]byte(broken)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("with %q: error %v, want %q", c.new, err, c.want)
		}
	}
}
