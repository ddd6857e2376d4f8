package bundler

import (
	"sort"
	"strings"
)

// ParseTargetID parses a target ID, <processor>(:<feature>(+|-))*, as
// clang's parseTargetIDWithFormatCheckingOnly: features maps each feature
// name to true (+) or false (-). ok is false for an empty feature, a
// feature without a trailing sign, or a feature given twice. An empty
// target ID parses as processor "" with no features.
func ParseTargetID(tid string) (processor string, features map[string]bool, ok bool) {
	parts := strings.Split(tid, ":")
	features = map[string]bool{}
	for _, f := range parts[1:] {
		if len(f) < 2 {
			return "", nil, false
		}
		sign := f[len(f)-1]
		if sign != '+' && sign != '-' {
			return "", nil, false
		}
		name := f[:len(f)-1]
		if _, dup := features[name]; dup {
			return "", nil, false
		}
		features[name] = sign == '+'
	}
	return parts[0], features, true
}

// ConflictingTargetIDs is clang's getConflictTargetIDCombination: among the
// target IDs (taken in sorted order, as from a std::set), the first of each
// processor is the reference; a later ID of the same processor conflicts
// with it when it names a feature the reference does not. It returns the
// reference and the conflicting ID, or ok false. IDs that do not parse are
// skipped.
func ConflictingTargetIDs(tids []string) (a, b string, ok bool) {
	sorted := append([]string(nil), tids...)
	sort.Strings(sorted)
	type ref struct {
		tid      string
		features map[string]bool
	}
	first := map[string]ref{}
	for i, t := range sorted {
		if i > 0 && t == sorted[i-1] {
			continue
		}
		p, f, okp := ParseTargetID(t)
		if !okp {
			continue
		}
		r, seen := first[p]
		if !seen {
			first[p] = ref{t, f}
			continue
		}
		for name := range f {
			if _, in := r.features[name]; !in {
				return r.tid, t, true
			}
		}
	}
	return "", "", false
}
