package options

import (
	"sort"
	"strings"
)

// Arg is one argument of a parsed command line, as llvm::opt::Arg.
type Arg struct {
	// Option is the option the argument is, aliases resolved; the table's
	// input or unknown option for positional and unknown arguments.
	Option *Option
	// Alias is the argument as typed when it spelled an alias of Option
	// (clang renders it as typed), else nil.
	Alias *Arg
	// Spelling is the option's prefix and name as typed ("--cuda-gpu-arch=").
	Spelling string
	// Values are the argument's values: the joined part and the following
	// arguments it takes, split at commas for CommaJoined options.
	Values []string
	// Index is the argument's position on the command line, and Count the
	// number of command-line words it took.
	Index, Count int
}

// Typed returns the argument as typed: its Alias when it spelled an alias,
// else the argument itself.
func (a *Arg) Typed() *Arg {
	if a.Alias != nil {
		return a.Alias
	}
	return a
}

// IsInput reports whether the argument is positional (an input file).
func (a *Arg) IsInput() bool { return a.Option.Kind == Input }

// IsUnknown reports whether the argument matched no option of the table.
func (a *Arg) IsUnknown() bool { return a.Option.Kind == Unknown }

// Is reports whether the argument is the option id.
func (a *Arg) Is(id string) bool { return a.Option.Is(id) }

// Value returns the first value, or "".
func (a *Arg) Value() string {
	if len(a.Values) == 0 {
		return ""
	}
	return a.Values[0]
}

// Words returns the command-line words the argument took from argv.
func (a *Arg) Words(argv []string) []string { return argv[a.Index : a.Index+a.Count] }

// Render returns the argument as clang writes it into a command line
// (llvm::opt::Arg::render).
func (a *Arg) Render() []string {
	switch a.Option.RenderStyle() {
	case RenderValuesStyle:
		return append([]string(nil), a.Values...)
	case RenderCommaJoinedStyle:
		return []string{a.Spelling + strings.Join(a.Values, ",")}
	case RenderJoinedStyle:
		out := []string{a.Spelling + a.Value()}
		if len(a.Values) > 1 {
			out = append(out, a.Values[1:]...)
		}
		return out
	}
	return append([]string{a.Spelling}, a.Values...)
}

// String returns the argument as llvm::opt::Arg::getAsString renders it:
// an alias as typed, others by their render style, words joined by one
// space. clang's CUID hashes these strings.
func (a *Arg) String() string {
	if a.Alias != nil {
		return a.Alias.String()
	}
	return strings.Join(a.Render(), " ")
}

// Parse parses a command line (without argv[0]) as the tool's option
// parser does (llvm::opt::OptTable::ParseArgs). Positional arguments and
// arguments that match no option come back as input and unknown Args. An
// option at the end that lacks its values is a *MissingValueError; the
// arguments before it are returned with it.
func (t *Table) Parse(argv []string) ([]*Arg, error) {
	var args []*Arg
	for i := 0; i < len(argv); {
		a, err := t.ParseOne(argv, i)
		if err != nil {
			return args, err
		}
		args = append(args, a)
		i += a.Count
	}
	return args, nil
}

// ParseOne parses the argument at argv[i] and the values it takes.
func (t *Table) ParseOne(argv []string, i int) (*Arg, error) {
	s := argv[i]
	if s == "-" || !t.hasPrefixIn(s) {
		return &Arg{Option: t.input, Spelling: s, Values: []string{s}, Index: i, Count: 1}, nil
	}
	for _, c := range t.candidates(s) {
		o := t.option(c.index)
		a, missing := accept(o, argv, i, c.size)
		if a != nil {
			return unalias(o, a), nil
		}
		if missing > 0 {
			return nil, &MissingValueError{Spelling: s[:c.size], Index: i, Count: missing}
		}
	}
	if strings.HasPrefix(s, "/") {
		return &Arg{Option: t.input, Spelling: s, Values: []string{s}, Index: i, Count: 1}, nil
	}
	return &Arg{Option: t.unknown, Spelling: s, Values: []string{s}, Index: i, Count: 1}, nil
}

// candidate is an option whose spelling (with one of its prefixes) starts
// an argument; size is that spelling's length.
type candidate struct {
	index int32
	size  int
}

// candidates returns the options whose spelling starts s, in the order the
// tool tries them: its table's order, which puts longer names first. The
// slice returned is shared: it must not be changed.
func (t *Table) candidates(s string) []candidate {
	if c, ok := t.seen.Load(s); ok {
		return c.([]candidate)
	}
	out := t.findCandidates(s)
	if t.seenSize.Add(1) <= maxSeen {
		t.seen.Store(strings.Clone(s), out)
	}
	return out
}

func (t *Table) findCandidates(s string) []candidate {
	var out []candidate
	for pi, p := range t.idx.prefixes {
		if t.idx.prefixVis[pi]&t.Visibility == 0 {
			continue // no option of this table has the prefix
		}
		rest, ok := strings.CutPrefix(s, p)
		if !ok {
			continue
		}
		t.idx.namePrefixes(t.recs, rest, func(first int32, n int) {
			for idx := first; idx >= 0; idx = t.idx.next[idx] {
				r := &t.recs[idx]
				if r.Visibility&t.Visibility == 0 {
					continue
				}
				for _, op := range r.Prefixes {
					if op == p {
						out = append(out, candidate{idx, len(p) + n})
						break
					}
				}
			}
		})
	}
	if len(out) > 1 {
		sort.SliceStable(out, func(i, j int) bool { return out[i].index < out[j].index })
	}
	return out
}

// accept matches argv[i] as the option o spelled by its first size bytes
// (llvm::opt::Option::acceptInternal). It returns nil and the number of
// values missing when the option needs more words than argv has, and nil
// and 0 when the option does not match after all.
func accept(o *Option, argv []string, i, size int) (*Arg, int) {
	s := argv[i]
	spelling := s[:size]
	exact := size == len(s)
	a := &Arg{Option: o, Spelling: spelling, Index: i, Count: 1}
	switch o.Kind {
	case Flag:
		if !exact {
			return nil, 0
		}
	case Joined:
		a.Values = []string{s[size:]}
	case CommaJoined:
		for _, v := range strings.Split(s[size:], ",") {
			if v != "" {
				a.Values = append(a.Values, v)
			}
		}
	case Separate:
		if !exact {
			return nil, 0
		}
		if i+1 >= len(argv) {
			return nil, 1
		}
		a.Values, a.Count = []string{argv[i+1]}, 2
	case MultiArg:
		if !exact {
			return nil, 0
		}
		if i+o.NumArgs >= len(argv) {
			return nil, o.NumArgs
		}
		a.Values, a.Count = append([]string(nil), argv[i+1:i+1+o.NumArgs]...), 1+o.NumArgs
	case JoinedOrSeparate:
		if !exact {
			a.Values = []string{s[size:]}
			break
		}
		if i+1 >= len(argv) {
			return nil, 1
		}
		a.Values, a.Count = []string{argv[i+1]}, 2
	case JoinedAndSeparate:
		if i+1 >= len(argv) {
			return nil, 1
		}
		a.Values, a.Count = []string{s[size:], argv[i+1]}, 2
	case RemainingArgs:
		if !exact {
			return nil, 0
		}
		a.Values, a.Count = append([]string(nil), argv[i+1:]...), len(argv)-i
	case RemainingArgsJoined:
		if !exact {
			a.Values = []string{s[size:]}
		}
		a.Values = append(a.Values, argv[i+1:]...)
		a.Count = len(argv) - i
	default:
		return nil, 0
	}
	return a, 0
}

// unalias returns the argument for the option an alias stands for, with
// the typed argument as its Alias (llvm::opt::Option::accept).
func unalias(o *Option, a *Arg) *Arg {
	target := o.Unaliased()
	if target == o {
		return a
	}
	u := &Arg{Option: target, Alias: a, Spelling: target.Spelling(), Index: a.Index, Count: a.Count}
	if o.Kind != Flag {
		u.Values = append([]string(nil), a.Values...)
		return u
	}
	u.Values = append(u.Values, o.AliasArgs...)
	if target.Kind == Joined && len(o.AliasArgs) == 0 {
		u.Values = append(u.Values, "") // a Flag alias of a Joined option
	}
	return u
}
