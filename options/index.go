package options

import (
	"slices"
	"sort"
	"strings"
)

// recordIndex is how a table finds its records by name and by ID: sorted
// arrays of record indices, searched by bisection. For clang's records it
// is generated with them (clang_index.go), so that a process parses its
// first command line without first building maps of some 3,600 options;
// other tables build theirs (buildIndex).
type recordIndex struct {
	// ids are the indices of every record, sorted by ID (records of one
	// ID in table order).
	ids []int32
	// names are, for every name of the named records (neither Group,
	// Input nor Unknown), the index of the first record of that name in
	// table order, sorted by name; next is, for every record, the next
	// named record of its name in table order, or -1.
	names []int32
	next  []int32
	// alias and group are, for every record, the index of the record its
	// Alias and Group name (the last of that ID), or -1.
	alias, group []int32
	// prefixes are the prefixes of the named records (LLVM's
	// PrefixesUnion), longest first, and prefixVis, for each, the union
	// of the visibilities of the named records that have it.
	prefixes  []string
	prefixVis []Visibility
	// input and unknown are the last Input and Unknown records, or -1.
	input, unknown int32
}

// named reports whether records of this kind are options found by name.
func named(k Kind) bool { return k != Group && k != Input && k != Unknown }

// buildIndex makes the index of recs (see recordIndex).
func buildIndex(recs []Record) *recordIndex {
	n := len(recs)
	x := &recordIndex{ids: make([]int32, n), next: make([]int32, n), alias: make([]int32, n), group: make([]int32, n), input: -1, unknown: -1}
	for i := range recs {
		x.ids[i] = int32(i)
		x.next[i] = -1
	}
	sort.SliceStable(x.ids, func(i, j int) bool { return recs[x.ids[i]].ID < recs[x.ids[j]].ID })
	var byName []int32 // the named records, by name (then table order)
	for i := range recs {
		if named(recs[i].Kind) {
			byName = append(byName, int32(i))
		}
	}
	sort.SliceStable(byName, func(i, j int) bool { return recs[byName[i]].Name < recs[byName[j]].Name })
	for k, i := range byName {
		if k > 0 && recs[byName[k-1]].Name == recs[i].Name {
			x.next[byName[k-1]] = i
			continue
		}
		x.names = append(x.names, i)
	}
	for i := range recs {
		x.alias[i] = x.lastOfID(recs, recs[i].Alias)
		x.group[i] = x.lastOfID(recs, recs[i].Group)
		if recs[i].Alias == "" {
			x.alias[i] = -1
		}
		if recs[i].Group == "" {
			x.group[i] = -1
		}
	}
	for i := range recs {
		switch recs[i].Kind {
		case Input:
			x.input = int32(i)
		case Unknown:
			x.unknown = int32(i)
		}
		if !named(recs[i].Kind) {
			continue
		}
		for _, p := range recs[i].Prefixes {
			k := slices.Index(x.prefixes, p)
			if k < 0 {
				x.prefixes = append(x.prefixes, p)
				x.prefixVis = append(x.prefixVis, 0)
				k = len(x.prefixes) - 1
			}
			x.prefixVis[k] |= recs[i].Visibility
		}
	}
	order := make([]int, len(x.prefixes))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(i, j int) bool { return len(x.prefixes[order[i]]) > len(x.prefixes[order[j]]) })
	prefixes, vis := make([]string, len(order)), make([]Visibility, len(order))
	for i, k := range order {
		prefixes[i], vis[i] = x.prefixes[k], x.prefixVis[k]
	}
	x.prefixes, x.prefixVis = prefixes, vis
	return x
}

// ofID returns the indices of the records whose ID is id, sorted by ID.
func (x *recordIndex) ofID(recs []Record, id string) []int32 {
	lo := sort.Search(len(x.ids), func(i int) bool { return recs[x.ids[i]].ID >= id })
	hi := lo
	for hi < len(x.ids) && recs[x.ids[hi]].ID == id {
		hi++
	}
	return x.ids[lo:hi]
}

// lastOfID returns the index of the last record (in table order) whose ID
// is id, or -1.
func (x *recordIndex) lastOfID(recs []Record, id string) int32 {
	// The first position whose ID is greater than id.
	j := sort.Search(len(x.ids), func(i int) bool { return recs[x.ids[i]].ID > id })
	if j == 0 || recs[x.ids[j-1]].ID != id {
		return -1
	}
	return x.ids[j-1]
}

// namePrefixes calls visit, longest first, with the first record (in
// table order) of each name that s starts with.
func (x *recordIndex) namePrefixes(recs []Record, s string, visit func(first int32, size int)) {
	// Every name that s starts with is at most s in name order, and the
	// greatest name e at most q (s at first) shares a prefix of length l
	// with it: a shorter name that q starts with is at most e, so it is a
	// prefix of q[:l] (of q[:l-1] when e itself is a prefix of q), and
	// comes before e.
	hi, q := len(x.names), s
	for hi > 0 {
		// j: the first of names[:hi] greater than q.
		j, top := 0, hi
		for j < top {
			m := int(uint(j+top) >> 1)
			if recs[x.names[m]].Name <= q {
				j = m + 1
			} else {
				top = m
			}
		}
		if j == 0 {
			return
		}
		e := recs[x.names[j-1]].Name
		l := commonPrefix(e, q)
		hi = j - 1
		if l == len(e) {
			visit(x.names[j-1], l)
			if l == 0 {
				return
			}
			l--
		}
		q = q[:l]
	}
}

// commonPrefix returns the length of the longest common prefix of a and b.
func commonPrefix(a, b string) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// hasPrefixIn reports whether s starts with one of the index's prefixes.
func (x *recordIndex) hasPrefixIn(s string) bool {
	for _, p := range x.prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}
