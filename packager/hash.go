package packager

import (
	"encoding/binary"
	"math/bits"
)

// This file reproduces the key order of llvm::DenseMap<StringRef, StringRef>
// as llvm-offload-binary iterates it: llvm::hash_value(StringRef) (the
// CityHash-derived hash from llvm/ADT/Hashing.h with the fixed release-build
// seed), truncated to 32 bits, open addressing with quadratic probing, 64
// initial buckets, doubling when the table would become 3/4 full.

const (
	hashSeed = 0xff51afd7ed558ccd
	hk0      = 0xc3a5c85c97cb3127
	hk1      = 0xb492b66fbe98f273
	hk2      = 0x9ae16a3b2f90404f
	hk3      = 0xc949d7c7509e6557
)

func fetch64(s string, i int) uint64 {
	return binary.LittleEndian.Uint64([]byte(s[i : i+8]))
}

func fetch32(s string, i int) uint64 {
	return uint64(binary.LittleEndian.Uint32([]byte(s[i : i+4])))
}

func rotr(v uint64, n int) uint64 { return bits.RotateLeft64(v, -n) }

func shiftMix(v uint64) uint64 { return v ^ (v >> 47) }

func hash16(low, high uint64) uint64 {
	const kMul = 0x9ddfea08eb382d69
	a := (low ^ high) * kMul
	a ^= a >> 47
	b := (high ^ a) * kMul
	b ^= b >> 47
	return b * kMul
}

func hashShort(s string, seed uint64) uint64 {
	n := len(s)
	switch {
	case n >= 4 && n <= 8:
		a := fetch32(s, 0)
		return hash16(uint64(n)+(a<<3), seed^fetch32(s, n-4))
	case n > 8 && n <= 16:
		a := fetch64(s, 0)
		b := fetch64(s, n-8)
		return hash16(seed^a, rotr(b+uint64(n), n)) ^ b
	case n > 16 && n <= 32:
		a := fetch64(s, 0) * hk1
		b := fetch64(s, 8)
		c := fetch64(s, n-8) * hk2
		d := fetch64(s, n-16) * hk0
		return hash16(rotr(a-b, 43)+rotr(c^seed, 30)+d,
			a+rotr(b^hk3, 20)-c+uint64(n)+seed)
	case n > 32:
		z := fetch64(s, 24)
		a := fetch64(s, 0) + (uint64(n)+fetch64(s, n-16))*hk0
		b := rotr(a+z, 52)
		c := rotr(a, 37)
		a += fetch64(s, 8)
		c += rotr(a, 7)
		a += fetch64(s, 16)
		vf := a + z
		vs := b + rotr(a, 31) + c
		a = fetch64(s, 16) + fetch64(s, n-32)
		z = fetch64(s, n-8)
		b = rotr(a+z, 52)
		c = rotr(a, 37)
		a += fetch64(s, n-24)
		c += rotr(a, 7)
		a += fetch64(s, n-16)
		wf := a + z
		ws := b + rotr(a, 31) + c
		r := shiftMix((vf+ws)*hk2 + (wf+vs)*hk0)
		return shiftMix((seed^(r*hk0))+vs) * hk2
	case n != 0:
		a := uint32(s[0])
		b := uint32(s[n>>1])
		c := uint32(s[n-1])
		y := a + b<<8
		z := uint32(n) + c<<2
		return shiftMix(uint64(y)*hk2^uint64(z)*hk3^seed) * hk2
	}
	return hk2 ^ seed
}

type hashState struct{ h0, h1, h2, h3, h4, h5, h6 uint64 }

func newHashState(s string, seed uint64) hashState {
	st := hashState{0, seed, hash16(seed, hk1), rotr(seed^hk1, 49), seed * hk1, shiftMix(seed), 0}
	st.h6 = hash16(st.h4, st.h5)
	st.mix(s)
	return st
}

func mix32(s string, a, b *uint64) {
	*a += fetch64(s, 0)
	c := fetch64(s, 24)
	*b = rotr(*b+*a+c, 21)
	d := *a
	*a += fetch64(s, 8) + fetch64(s, 16)
	*b += rotr(*a, 44) + d
	*a += c
}

func (h *hashState) mix(s string) {
	h.h0 = rotr(h.h0+h.h1+h.h3+fetch64(s, 8), 37) * hk1
	h.h1 = rotr(h.h1+h.h4+fetch64(s, 48), 42) * hk1
	h.h0 ^= h.h6
	h.h1 += h.h3 + fetch64(s, 40)
	h.h2 = rotr(h.h2+h.h5, 33) * hk1
	h.h3 = h.h4 * hk1
	h.h4 = h.h0 + h.h5
	mix32(s, &h.h3, &h.h4)
	h.h5 = h.h2 + h.h6
	h.h6 = h.h1 + fetch64(s, 16)
	mix32(s[32:], &h.h5, &h.h6)
	h.h2, h.h0 = h.h0, h.h2
}

func (h *hashState) finalize(n uint64) uint64 {
	return hash16(hash16(h.h3, h.h5)+shiftMix(h.h1)*hk1+h.h2,
		hash16(h.h4, h.h6)+shiftMix(n)*hk1+h.h0)
}

// llvmHashValue is llvm::hash_value(StringRef) of a release build.
func llvmHashValue(s string) uint64 {
	n := len(s)
	if n <= 64 {
		return hashShort(s, hashSeed)
	}
	st := newHashState(s, hashSeed)
	end := n &^ 63
	for i := 64; i != end; i += 64 {
		st.mix(s[i:])
	}
	if n&63 != 0 {
		st.mix(s[n-64:])
	}
	return st.finalize(uint64(n))
}

// denseMapHash is DenseMapInfo<StringRef>::getHashValue.
func denseMapHash(s string) uint32 { return uint32(llvmHashValue(s)) }

// denseMapOrder returns the distinct keys in the iteration order of an
// llvm::DenseMap<StringRef, ...> into which they were inserted in the given
// order (duplicates are ignored, as by try_emplace).
func denseMapOrder(keys []string) []string {
	var buckets []int // index into keys, -1 when empty
	n := 0
	present := make(map[string]bool, len(keys))
	insert := func(b []int, i int) {
		mask := uint32(len(b) - 1)
		idx := denseMapHash(keys[i]) & mask
		for probe := uint32(1); b[idx] >= 0; probe++ {
			idx = (idx + probe) & mask
		}
		b[idx] = i
	}
	for i, k := range keys {
		if present[k] {
			continue
		}
		present[k] = true
		if len(buckets) == 0 || (n+1)*4 >= len(buckets)*3 {
			size := 64
			if len(buckets) > 0 {
				size = len(buckets) * 2
			}
			nb := make([]int, size)
			for j := range nb {
				nb[j] = -1
			}
			for _, j := range buckets {
				if j >= 0 {
					insert(nb, j)
				}
			}
			buckets = nb
		}
		insert(buckets, i)
		n++
	}
	out := make([]string, 0, n)
	for _, j := range buckets {
		if j >= 0 {
			out = append(out, keys[j])
		}
	}
	return out
}
