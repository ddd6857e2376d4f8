package bundler

// stringMap models llvm::StringMap's bucket layout so that iteration order
// matches LLVM 22: the hash is the low 32 bits of xxh3_64bits, the table
// starts with 16 buckets, probing is quadratic (+1, +2, ...), and after an
// insertion that leaves more than 3/4 of the buckets full the table doubles,
// re-inserting entries in old bucket order. Erasing leaves a tombstone, so
// remaining entries keep their buckets.
type stringMap struct {
	buckets []int // index into keys, -1 empty, -2 tombstone
	hashes  []uint32
	keys    []string
	items   int
	tombs   int
}

// hashKey is llvm::StringMap's hash of a key: the low 32 bits of
// xxh3_64bits (xxh3.go).
func hashKey(k string) uint32 { return uint32(xxh3Hash64(k)) }

func (m *stringMap) lookup(k string, h uint32) (bucket int, found bool) {
	n := len(m.buckets)
	b := int(h) & (n - 1)
	firstTomb := -1
	for probe := 1; ; probe++ {
		switch v := m.buckets[b]; {
		case v == -1:
			if firstTomb >= 0 {
				return firstTomb, false
			}
			return b, false
		case v == -2:
			if firstTomb < 0 {
				firstTomb = b
			}
		case m.hashes[b] == h && m.keys[v] == k:
			return b, true
		}
		b = (b + probe) & (n - 1)
	}
}

// insert adds k (keeping the bucket of an existing equal key) and returns
// its index in m.keys.
func (m *stringMap) insert(k string) int {
	if m.buckets == nil {
		m.buckets = make([]int, 16)
		m.hashes = make([]uint32, 16)
		for i := range m.buckets {
			m.buckets[i] = -1
		}
	}
	h := hashKey(k)
	b, found := m.lookup(k, h)
	if found {
		return m.buckets[b]
	}
	if m.buckets[b] == -2 {
		m.tombs--
	}
	m.keys = append(m.keys, k)
	m.buckets[b] = len(m.keys) - 1
	m.hashes[b] = h
	m.items++
	n := len(m.buckets)
	switch {
	case m.items*4 > n*3:
		m.rehash(n * 2)
	case n-(m.items+m.tombs) <= n/8:
		m.rehash(n)
	}
	return len(m.keys) - 1
}

func (m *stringMap) rehash(size int) {
	nb := make([]int, size)
	nh := make([]uint32, size)
	for i := range nb {
		nb[i] = -1
	}
	for i, v := range m.buckets {
		if v < 0 {
			continue
		}
		h := m.hashes[i]
		b := int(h) & (size - 1)
		for probe := 1; nb[b] != -1; probe++ {
			b = (b + probe) & (size - 1)
		}
		nb[b], nh[b] = v, h
	}
	m.buckets, m.hashes, m.tombs = nb, nh, 0
}

func (m *stringMap) erase(k string) {
	if m.buckets == nil {
		return
	}
	b, found := m.lookup(k, hashKey(k))
	if found {
		m.buckets[b] = -2
		m.items--
		m.tombs++
	}
}

// order returns the indices (into m.keys) of live entries in iteration
// order.
func (m *stringMap) order() []int {
	var out []int
	for _, v := range m.buckets {
		if v >= 0 {
			out = append(out, v)
		}
	}
	return out
}

// ListOrder returns the entries of a binary bundle (as ParseBinary returns
// them) in the order clang-offload-bundler -list prints and unbundles them:
// llvm::StringMap iteration order. An ID given twice appears once, where
// its first occurrence was inserted, with the last occurrence's payload (as
// clang's map assignment keeps).
func ListOrder(entries []Entry) []Entry {
	var m stringMap
	last := map[string]int{}
	for i, e := range entries {
		m.insert(e.ID)
		last[e.ID] = i
	}
	out := make([]Entry, 0, len(m.keys))
	for _, k := range m.order() {
		out = append(out, entries[last[m.keys[k]]])
	}
	return out
}
