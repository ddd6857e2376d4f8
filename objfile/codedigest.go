package objfile

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"slices"
)

// ELF constants of the code digests.
const (
	sttFunc    = 2
	shfWrite   = 0x1
	shfAlloc   = 0x2
	shfExec    = 0x4
	shfMerge   = 0x10
	shfStrings = 0x20
)

// CodeDigests returns, for each function that the relocatable ELF64
// little-endian object obj defines under a name with the given prefix
// (global ones and local ones), a digest of its code as the linker sees
// it: the function's bytes and every relocation within them, its type and
// what it names. A global symbol is named by its name and addend; a local
// function (a symbol, or a section symbol and an addend that lead to a
// function's start) by that function's own digest; anything else local by
// the kind of section it is in. On x86-64 a direct call or jump to a
// function of the same section, which needs no relocation, is read the
// same way, its displacement left out. One function compiled alike in two
// objects so has one digest, wherever the objects put it and whatever else
// they hold; code that differs in an instruction, an immediate constant,
// a callee or a global it uses has another. Data a function reads through
// local symbols (string literals, constant tables) is not part of the
// digest.
func CodeDigests(obj []byte, prefix string) (map[string][sha256.Size]byte, error) {
	f, err := parseELF(obj)
	if err != nil {
		return nil, err
	}
	if f.typ != etRel {
		return nil, fmt.Errorf("ELF header at offset 0x10: file type %s is not a relocatable object", etypeName(f.typ))
	}
	symtab := f.symtabIndex()
	if symtab == 0 {
		return nil, nil
	}
	st, err := f.symbolTable(symtab)
	if err != nil {
		return nil, err
	}
	c := &codeDigester{f: f, st: st, symtab: symtab, memo: map[uint64][]byte{}, relocs: map[uint64][]elfRela{},
		funcAt: map[[2]uint64]uint64{}}
	for k := uint64(1); k < st.count(); k++ {
		s := st.sym(k)
		if s.info&0xf == sttFunc && s.shndx != shnUndef && s.shndx < shnLoReserve {
			at := [2]uint64{uint64(s.shndx), s.value}
			if _, dup := c.funcAt[at]; !dup {
				c.funcAt[at] = k
			}
		}
	}
	out := map[string][sha256.Size]byte{}
	for k := uint64(1); k < st.count(); k++ {
		s := st.sym(k)
		if s.info&0xf != sttFunc || s.shndx == shnUndef || s.shndx >= shnLoReserve {
			continue
		}
		name, err := st.name(k)
		if err != nil || !bytes.HasPrefix(name, []byte(prefix)) {
			continue
		}
		d, err := c.digest(k)
		if err != nil {
			return nil, fmt.Errorf("function %s: %v", name, err)
		}
		out[string(name)] = [sha256.Size]byte(d)
	}
	return out, nil
}

// codeDigester computes the digests of CodeDigests, each function once.
type codeDigester struct {
	f      *elfFile
	st     elfSymtab
	symtab uint64
	memo   map[uint64][]byte    // by symbol index; nil while being computed
	relocs map[uint64][]elfRela // by section index, sorted by offset
	// funcAt finds the function symbol that starts at (section, offset).
	funcAt map[[2]uint64]uint64
}

// digest returns the digest of the function symbol k.
func (c *codeDigester) digest(k uint64) ([]byte, error) {
	if d, ok := c.memo[k]; ok {
		if d == nil {
			return []byte("recursive call"), nil
		}
		return d, nil
	}
	c.memo[k] = nil
	s := c.st.sym(k)
	if uint64(s.shndx) >= c.f.shnum {
		return nil, fmt.Errorf("section index %d out of range", s.shndx)
	}
	data, err := c.f.data(uint64(s.shndx))
	if err != nil {
		return nil, err
	}
	if s.value > uint64(len(data)) || s.size > uint64(len(data))-s.value {
		return nil, fmt.Errorf("its %d bytes at %#x run past its section (%d bytes)", s.size, s.value, len(data))
	}
	all, err := c.sectionRelocs(uint64(s.shndx))
	if err != nil {
		return nil, err
	}
	var relocs []elfRela
	for _, r := range all {
		if r.offset >= s.value && r.offset < s.value+s.size {
			relocs = append(relocs, r)
		}
	}
	code := slices.Clone(data[s.value : s.value+s.size])
	h := sha256.New()
	var num [8]byte
	word := func(v uint64) {
		binary.LittleEndian.PutUint64(num[:], v)
		h.Write(num[:])
	}
	for _, r := range relocs {
		word(r.offset - s.value)
		word(r.info & 0xffffffff)
		target, err := c.target(r)
		if err != nil {
			return nil, err
		}
		h.Write(target)
		h.Write([]byte{0})
	}
	if c.f.machine == emX8664 {
		// Direct calls and jumps (E8, E9 rel32) to a function of the
		// same section: the assembler resolved them, so no relocation
		// says where they go, and the displacement depends on where
		// the object put the two functions.
		covered := func(from, to uint64) bool {
			for _, r := range relocs {
				if r.offset-s.value < to && r.offset-s.value+4 > from {
					return true
				}
			}
			return false
		}
		for i := uint64(0); i+5 <= uint64(len(code)); i++ {
			if code[i] != 0xe8 && code[i] != 0xe9 || covered(i+1, i+5) {
				continue
			}
			to := int64(s.value+i+5) + int64(int32(binary.LittleEndian.Uint32(code[i+1:])))
			callee, ok := c.funcAt[[2]uint64{uint64(s.shndx), uint64(to)}]
			if to < 0 || !ok {
				continue
			}
			d, err := c.digest(callee)
			if err != nil {
				return nil, err
			}
			clear(code[i+1 : i+5])
			word(i)
			h.Write([]byte("direct call "))
			h.Write(d)
			i += 4
		}
	}
	h.Write(code)
	d := h.Sum(nil)
	c.memo[k] = d
	return d, nil
}

// target describes what relocation r names (see CodeDigests).
func (c *codeDigester) target(r elfRela) ([]byte, error) {
	k := r.info >> 32
	if k == 0 {
		return fmt.Appendf(nil, "none %d", r.addend), nil
	}
	if k >= c.st.count() {
		return nil, fmt.Errorf("relocation symbol index %d out of range", k)
	}
	s := c.st.sym(k)
	if s.info>>4 != 0 { // not STB_LOCAL: the linker resolves it by name
		name, err := c.st.name(k)
		if err != nil {
			return nil, err
		}
		return fmt.Appendf(nil, "global %s %d", name, r.addend), nil
	}
	if s.shndx == shnUndef || s.shndx >= shnLoReserve || uint64(s.shndx) >= c.f.shnum {
		return []byte("local, no section"), nil
	}
	// A function's start, named by its symbol or by its section's symbol
	// and an addend, less the 4 bytes of a PC-relative field.
	for _, bias := range []int64{0, 4} {
		at := int64(s.value) + r.addend + bias
		if at < 0 {
			continue
		}
		if fn, ok := c.funcAt[[2]uint64{uint64(s.shndx), uint64(at)}]; ok {
			d, err := c.digest(fn)
			if err != nil {
				return nil, err
			}
			return append(fmt.Appendf(nil, "local function %d ", bias), d...), nil
		}
	}
	flags := c.f.shdr(uint64(s.shndx)).flags & (shfWrite | shfAlloc | shfExec | shfMerge | shfStrings)
	return fmt.Appendf(nil, "local in a section of flags %#x", flags), nil
}

// sectionRelocs returns the relocations of section i, sorted by offset.
func (c *codeDigester) sectionRelocs(i uint64) ([]elfRela, error) {
	if rs, ok := c.relocs[i]; ok {
		return rs, nil
	}
	rs, _, err := c.f.relocations(i, c.symtab)
	if err != nil {
		return nil, err
	}
	slices.SortStableFunc(rs, func(a, b elfRela) int { return cmp.Compare(a.offset, b.offset) })
	c.relocs[i] = rs
	return rs, nil
}

// SourceFile returns the name of the first STT_FILE symbol of the ELF64
// object obj: the source file it was compiled from, as the compiler named
// it. It returns "" when there is none or it cannot be read.
func SourceFile(obj []byte) string {
	f, err := parseELF(obj)
	if err != nil {
		return ""
	}
	i := f.symtabIndex()
	if i == 0 {
		return ""
	}
	st, err := f.symbolTable(i)
	if err != nil {
		return ""
	}
	for k := uint64(1); k < st.count(); k++ {
		if st.sym(k).info&0xf == sttFile {
			name, _ := st.name(k)
			return string(name)
		}
	}
	return ""
}
