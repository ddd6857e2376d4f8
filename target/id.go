package target

import (
	"fmt"
	"sort"
	"strings"
)

// Feature is one feature setting of a target ID: Name ("xnack", "sramecc")
// switched on ('+') or off ('-').
type Feature struct {
	Name string
	On   bool
}

// ID is a parsed target ID, <processor>(:<feature>(+|-))*, such as
// "gfx90a", "gfx90a:xnack+" or "gfx908:sramecc+:xnack-".
type ID struct {
	Processor string
	Features  []Feature // in the order given; no name twice
}

// ParseID parses a target ID as clang's parseTargetIDWithFormatCheckingOnly
// does: the processor is everything before the first ':' and is not
// checked; each later ':'-separated part is a non-empty feature name and a
// trailing '+' or '-'. It fails for an empty feature, a feature without a
// sign, or a feature given twice. "" parses as processor "" with no
// features.
func ParseID(s string) (ID, error) {
	parts := strings.Split(s, ":")
	id := ID{Processor: parts[0]}
	for _, f := range parts[1:] {
		if len(f) < 2 || (f[len(f)-1] != '+' && f[len(f)-1] != '-') {
			return ID{}, fmt.Errorf("invalid target ID %q: feature %q is not a name followed by '+' or '-'", s, f)
		}
		name := f[:len(f)-1]
		if _, dup := id.Lookup(name); dup {
			return ID{}, fmt.Errorf("invalid target ID %q: feature %q given twice", s, name)
		}
		id.Features = append(id.Features, Feature{Name: name, On: f[len(f)-1] == '+'})
	}
	return id, nil
}

// Lookup returns the setting of the named feature; ok is false when id
// does not name it.
func (id ID) Lookup(name string) (on, ok bool) {
	for _, f := range id.Features {
		if f.Name == name {
			return f.On, true
		}
	}
	return false, false
}

// String returns the target ID in its written form: the processor, then
// ":" + name + "+" or "-" for each feature in order.
func (id ID) String() string {
	var b strings.Builder
	b.WriteString(id.Processor)
	for _, f := range id.Features {
		b.WriteByte(':')
		b.WriteString(f.Name)
		if f.On {
			b.WriteByte('+')
		} else {
			b.WriteByte('-')
		}
	}
	return b.String()
}

// ConflictingIDs is clang's getConflictTargetIDCombination: among the
// target IDs ids, taken in sorted order without duplicates (as from a
// std::set), the first of each processor is the reference, and a later ID
// of the same processor conflicts with it when it names a feature the
// reference does not ("gfx90a" and "gfx90a:xnack+" conflict,
// "gfx90a:xnack+" and "gfx90a:xnack-" do not). It returns the first
// conflicting pair found, reference first, or ok false. IDs that do not
// parse are skipped. ids is not modified.
func ConflictingIDs(ids []string) (a, b string, ok bool) {
	sorted := append([]string(nil), ids...)
	sort.Strings(sorted)
	type ref struct {
		s  string
		id ID
	}
	first := map[string]ref{}
	for i, s := range sorted {
		if i > 0 && s == sorted[i-1] {
			continue
		}
		id, err := ParseID(s)
		if err != nil {
			continue
		}
		r, seen := first[id.Processor]
		if !seen {
			first[id.Processor] = ref{s, id}
			continue
		}
		for _, f := range id.Features {
			if _, in := r.id.Lookup(f.Name); !in {
				return r.s, s, true
			}
		}
	}
	return "", "", false
}
