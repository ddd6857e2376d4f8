package objfile

import (
	"bytes"
	"fmt"
)

// ELF constants of the relocation reader.
const (
	emX8664     = 62
	rX86_64_64  = 1
	elfRelaSize = 24
	elfRelSize  = 16
)

// Pointer is where a pointer-sized word of a relocatable object points once
// linked: Offset bytes into the section named Section.
type Pointer struct {
	Section string
	Offset  uint64
}

// PointerInSymbol reads the 8-byte word at offset off into the symbol sym
// of the x86-64 relocatable ELF64 object obj, as the linker will fill it:
// the R_X86_64_64 relocation at that place, against a symbol defined in a
// section (a section symbol, as LLVM writes a reference to a private
// global, or any other), gives the section, and the symbol's value plus
// the addend the offset in it. found is false when obj defines no symbol
// named sym (in its SHT_SYMTAB); a symbol that is defined more than once,
// a word outside the symbol, or a word without exactly one such
// relocation is an error.
func PointerInSymbol(obj []byte, sym string, off uint64) (p Pointer, found bool, err error) {
	f, err := parseELF(obj)
	if err != nil {
		return Pointer{}, false, err
	}
	if f.typ != etRel || f.machine != emX8664 {
		return Pointer{}, false, fmt.Errorf("not an x86-64 relocatable object")
	}
	secs, err := Sections(obj)
	if err != nil {
		return Pointer{}, false, err
	}
	symtab := f.symtabIndex()
	if symtab == 0 {
		return Pointer{}, false, nil
	}
	st, err := f.symbolTable(symtab)
	if err != nil {
		return Pointer{}, false, err
	}
	// The symbol: defined in a section of obj, once.
	var def elfSym
	for k := uint64(1); k < st.count(); k++ {
		s := st.sym(k)
		if s.shndx == shnUndef || s.shndx >= shnLoReserve {
			continue
		}
		if name, err := st.name(k); err != nil || string(name) != sym {
			continue
		}
		if found {
			return Pointer{}, false, fmt.Errorf("symbol %s is defined more than once", sym)
		}
		def, found = s, true
	}
	if !found {
		return Pointer{}, false, nil
	}
	if off > def.size || def.size-off < 8 || uint64(def.shndx) >= f.shnum {
		return Pointer{}, false, fmt.Errorf("symbol %s (size %d) has no 8-byte word at offset %d", sym, def.size, off)
	}
	place := def.value + off
	// The relocation: in the SHT_RELA section that applies to the
	// symbol's section and uses this symbol table.
	relocs, implicit, err := f.relocations(uint64(def.shndx), symtab)
	if err != nil {
		return Pointer{}, false, err
	}
	if implicit {
		return Pointer{}, false, fmt.Errorf("section %d has SHT_REL relocations, which x86-64 objects do not use", def.shndx)
	}
	var hits []elfRela
	for _, r := range relocs {
		if r.offset+8 > place && r.offset < place+8 {
			hits = append(hits, r)
		}
	}
	if len(hits) != 1 || hits[0].offset != place || uint32(hits[0].info) != rX86_64_64 {
		return Pointer{}, false, fmt.Errorf("the word at offset %d of symbol %s is not filled by one R_X86_64_64 relocation", off, sym)
	}
	r := hits[0]
	k := r.info >> 32
	if k == 0 || k >= st.count() {
		return Pointer{}, false, fmt.Errorf("relocation symbol index %d out of range", k)
	}
	target := st.sym(k)
	if target.shndx == shnUndef || target.shndx >= shnLoReserve || uint64(target.shndx) >= f.shnum {
		return Pointer{}, false, fmt.Errorf("the word at offset %d of symbol %s points to a symbol defined in no section", off, sym)
	}
	at := int64(target.value) + r.addend
	if at < 0 {
		return Pointer{}, false, fmt.Errorf("the word at offset %d of symbol %s points before its section", off, sym)
	}
	return Pointer{Section: secs[target.shndx-1].Name, Offset: uint64(at)}, true, nil
}

// elfSym is one Elf64_Sym.
type elfSym struct {
	name  uint32
	info  uint8
	shndx uint16
	value uint64
	size  uint64
}

// elfRela is one Elf64_Rela.
type elfRela struct {
	offset uint64
	info   uint64
	addend int64
}

// elfSymtab is a checked ELF64 symbol table (section index, at file
// offset offset) and its string table.
type elfSymtab struct {
	index, offset uint64
	syms, strs    []byte
}

// symtabIndex returns the index of the object's SHT_SYMTAB section (an
// ELF file has at most one), or 0.
func (f *elfFile) symtabIndex() uint64 {
	for i := uint64(1); i < f.shnum; i++ {
		if f.shdr(i).typ == shtSymtab {
			return i
		}
	}
	return 0
}

// symbolTable returns section i as a symbol table with its string table
// (sh_entsize 0 is taken for 24, as LLVM's readers do).
func (f *elfFile) symbolTable(i uint64) (elfSymtab, error) {
	h := f.shdr(i)
	syms, err := f.data(i)
	if err != nil {
		return elfSymtab{}, err
	}
	if h.entsize != 0 && h.entsize != elfSymSize {
		return elfSymtab{}, fmt.Errorf("ELF section header %d at offset %#x: symbol table entry size %d, want 24", i, f.shdrOffset(i), h.entsize)
	}
	if uint64(h.link) == 0 || uint64(h.link) >= f.shnum {
		return elfSymtab{}, fmt.Errorf("ELF section header %d at offset %#x: symbol table string table index %d out of range (%d sections)", i, f.shdrOffset(i), h.link, f.shnum)
	}
	strs, err := f.data(uint64(h.link))
	if err != nil {
		return elfSymtab{}, err
	}
	return elfSymtab{index: i, offset: h.offset, syms: syms, strs: strs}, nil
}

func (t elfSymtab) count() uint64 { return uint64(len(t.syms)) / elfSymSize }

func (t elfSymtab) sym(k uint64) elfSym {
	e := t.syms[k*elfSymSize:]
	return elfSym{name: le.Uint32(e), info: e[4], shndx: le.Uint16(e[6:]), value: le.Uint64(e[8:]), size: le.Uint64(e[16:])}
}

// name returns the bytes of symbol k's name in the string table (they
// alias it).
func (t elfSymtab) name(k uint64) ([]byte, error) {
	off := uint64(t.sym(k).name)
	if off >= uint64(len(t.strs)) {
		return nil, fmt.Errorf("ELF symbol %d at offset %#x: name offset %#x out of range of string table (size %#x)",
			k, t.offset+k*elfSymSize, off, len(t.strs))
	}
	end := bytes.IndexByte(t.strs[off:], 0)
	if end < 0 {
		return nil, fmt.Errorf("ELF symbol %d at offset %#x: name at string table offset %#x is not NUL-terminated",
			k, t.offset+k*elfSymSize, off)
	}
	return t.strs[off : off+uint64(end)], nil
}

// relocations returns the relocations that apply to section i and use
// the symbol table symtab, in file order. implicit reports SHT_REL ones
// among them, whose addends are in the bytes they apply to (read here as
// 0). Relocations that use another symbol table are an error.
func (f *elfFile) relocations(i, symtab uint64) (rs []elfRela, implicit bool, err error) {
	for j := uint64(1); j < f.shnum; j++ {
		h := f.shdr(j)
		if h.typ != shtRel && h.typ != shtRela || uint64(h.info) != i {
			continue
		}
		if uint64(h.link) != symtab {
			return nil, false, fmt.Errorf("relocation section %d uses another symbol table", j)
		}
		data, err := f.data(j)
		if err != nil {
			return nil, false, err
		}
		if h.typ == shtRel {
			implicit = true
			for o := 0; o+elfRelSize <= len(data); o += elfRelSize {
				rs = append(rs, elfRela{offset: le.Uint64(data[o:]), info: le.Uint64(data[o+8:])})
			}
			continue
		}
		for o := 0; o+elfRelaSize <= len(data); o += elfRelaSize {
			rs = append(rs, elfRela{offset: le.Uint64(data[o:]), info: le.Uint64(data[o+8:]), addend: int64(le.Uint64(data[o+16:]))})
		}
	}
	return rs, implicit, nil
}
