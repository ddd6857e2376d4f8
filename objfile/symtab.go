package objfile

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strings"
)

// Symbol is one symbol of an object or bitcode module as a linker sees it.
type Symbol struct {
	Name string
	// Undefined: the symbol is referenced, not defined (ELF: st_shndx is
	// SHN_UNDEF; common symbols are defined).
	Undefined bool
	// Weak: weak binding (ELF STB_WEAK; STB_GNU_UNIQUE is global, not weak).
	Weak bool
	// Global: not local (ELF: any binding but STB_LOCAL).
	Global bool
	// Hidden: hidden visibility (ELF: st_other&3 == STV_HIDDEN).
	Hidden bool
	// FormatSpecific: a symbol of the file format rather than of the
	// program (ELF: STT_SECTION and STT_FILE symbols, and the mapping
	// symbols of AArch64, ARM, C-SKY and RISC-V), which linkers skip.
	FormatSpecific bool
	// MayOmit is the IR symbol table's "can be omitted from the symbol
	// table" (bitcode only).
	MayOmit bool
}

// ImageSymbols returns the symbols of a device image as LLVM 22's
// clang-linker-wrapper reads them to decide archive-member extraction: an
// ELF relocatable object (ELF32 or ELF64, either byte order, any machine),
// in symbol table order with flags as ELFObjectFile::getSymbolFlags gives
// them, or an LLVM bitcode file (raw or inside the 0x0B17C0DE wrapper),
// from its IR symbol table, every module's symbols in order.
//
// ok reports whether data is of one of those kinds (by its magic number and
// ELF type, as LLVM's identify_magic decides); for other data (PTX text,
// ELF executables and shared objects, ...) ImageSymbols returns nil, false
// and a nil error, as LLVM's getSymbols extracts nothing from them. A
// malformed object or bitcode file gives ok=true and an error. Bitcode
// whose IR symbol table is missing, or that LLVM 22 would not trust and
// rebuild from the IR (other format version or producer, or a module count
// that differs from the file's), gives an error wrapping
// ErrNoIRSymbolTable: the caller decides what to do with such a file.
//
// For ELF, the names of local and format-specific symbols, which the
// linker wrapper does not read, are left empty where they cannot be read
// rather than failing, as in LLVM.
//
// The symbol count is bounded by len(data); names share one copy of the
// string table.
func ImageSymbols(data []byte) (syms []Symbol, ok bool, err error) {
	switch {
	case isBitcodeMagic(data):
		syms, err = bitcodeSymbols(data)
	case isELFRelocatable(data):
		syms, err = elfImageSymbols(data)
	default:
		return nil, false, nil
	}
	if err != nil {
		return nil, true, err
	}
	return syms, true, nil
}

// isELFRelocatable reports whether b is what LLVM's identify_magic calls
// an ELF relocatable object: the ELF magic and e_type ET_REL, read in the
// byte order EI_DATA names (little-endian unless ELFDATA2MSB).
func isELFRelocatable(b []byte) bool {
	if len(b) < 18 || !IsELF(b) {
		return false
	}
	hi, lo := b[17], b[16]
	if b[5] == elfData2MSB {
		hi, lo = b[16], b[17]
	}
	return hi == 0 && lo == etRel
}

// ELF constants of the symbol reader beyond those in elf.go.
const (
	elfClass32    = 1
	elfData2MSB   = 2
	elf32EhdrSize = 52
	elf32ShdrSize = 40
	elf32SymSize  = 16
	shtStrtab     = 3
	sttSection    = 3
	sttFile       = 4
	stvHidden     = 2
	emARM         = 40
	emAArch64     = 183
	emRISCV       = 243
	emCSKY        = 252
)

// elfSymFile is an ELF file of either class and byte order, parsed as far
// as reading its symbol tables needs.
type elfSymFile struct {
	b       []byte
	bo      binary.ByteOrder
	is64    bool
	machine uint16
	shoff   uint64
	shnum   uint64
}

// elfShdrFields are the fields of a section header the symbol reader uses.
type elfShdrFields struct {
	typ                         uint32
	offset, size, link, entsize uint64
}

func (f *elfSymFile) shdrSize() uint64 {
	if f.is64 {
		return elfShdrSize
	}
	return elf32ShdrSize
}

func (f *elfSymFile) symSize() uint64 {
	if f.is64 {
		return elfSymSize
	}
	return elf32SymSize
}

// align is the alignment LLVM requires of section headers and symbol
// tables (that of the address-sized fields).
func (f *elfSymFile) align() uint64 {
	if f.is64 {
		return 8
	}
	return 4
}

func (f *elfSymFile) shdr(i uint64) elfShdrFields {
	h := f.b[f.shoff+i*f.shdrSize():]
	if f.is64 {
		return elfShdrFields{typ: f.bo.Uint32(h[4:]), offset: f.bo.Uint64(h[24:]), size: f.bo.Uint64(h[32:]),
			link: uint64(f.bo.Uint32(h[40:])), entsize: f.bo.Uint64(h[56:])}
	}
	return elfShdrFields{typ: f.bo.Uint32(h[4:]), offset: uint64(f.bo.Uint32(h[16:])), size: uint64(f.bo.Uint32(h[20:])),
		link: uint64(f.bo.Uint32(h[24:])), entsize: uint64(f.bo.Uint32(h[36:]))}
}

// parseELFSyms checks the header and section header table as LLVM's
// ELFObjectFile::create does.
func parseELFSyms(b []byte) (*elfSymFile, error) {
	f := &elfSymFile{b: b, bo: binary.LittleEndian}
	switch b[4] {
	case elfClass32:
	case elfClass64:
		f.is64 = true
	default:
		return nil, fmt.Errorf("ELF header at offset 0x4: invalid ELF class %d", b[4])
	}
	switch b[5] {
	case elfData2LSB:
	case elfData2MSB:
		f.bo = binary.BigEndian
	default:
		return nil, fmt.Errorf("ELF header at offset 0x5: invalid ELF data encoding %d", b[5])
	}
	ehsize, shentOff := uint64(elf32EhdrSize), 46
	if f.is64 {
		ehsize, shentOff = elfHeaderSize, 58
	}
	if uint64(len(b)) < ehsize {
		return nil, fmt.Errorf("ELF header at offset 0x0: file is %d bytes, shorter than the %d-byte ELF header", len(b), ehsize)
	}
	f.machine = f.bo.Uint16(b[18:])
	if f.is64 {
		f.shoff = f.bo.Uint64(b[40:])
	} else {
		f.shoff = uint64(f.bo.Uint32(b[32:]))
	}
	if f.shoff == 0 {
		return f, nil // no sections
	}
	shsz := f.shdrSize()
	if es := uint64(f.bo.Uint16(b[shentOff:])); es != shsz {
		return nil, fmt.Errorf("ELF header at offset %#x: invalid section header size e_shentsize %d, want %d", shentOff, es, shsz)
	}
	size := uint64(len(b))
	if f.shoff > size || size-f.shoff < shsz {
		return nil, fmt.Errorf("ELF header: section header table offset %#x runs past end of file (size %#x)", f.shoff, size)
	}
	if f.shoff%f.align() != 0 {
		return nil, fmt.Errorf("ELF header: section header table offset %#x is not %d-byte aligned", f.shoff, f.align())
	}
	f.shnum = uint64(f.bo.Uint16(b[shentOff+2:]))
	if f.shnum == 0 {
		f.shnum = f.shdr(0).size // extended numbering
	}
	if f.shnum > (size-f.shoff)/shsz {
		return nil, fmt.Errorf("ELF header: section header table at %#x with %d entries runs past end of file (size %#x)", f.shoff, f.shnum, size)
	}
	return f, nil
}

// checkSymtab checks section i as an array of symbols, as LLVM's
// ELFFile::symbols does.
func (f *elfSymFile) checkSymtab(i uint64) error {
	h := f.shdr(i)
	if h.entsize != f.symSize() {
		return fmt.Errorf("ELF section %d: invalid symbol table entry size sh_entsize %d, want %d", i, h.entsize, f.symSize())
	}
	if h.size%f.symSize() != 0 {
		return fmt.Errorf("ELF section %d: symbol table size %#x is not a multiple of its entry size %d", i, h.size, f.symSize())
	}
	if h.offset > uint64(len(f.b)) || h.size > uint64(len(f.b))-h.offset {
		return fmt.Errorf("ELF section %d: symbol table (offset %#x, size %#x) runs past end of file (size %#x)", i, h.offset, h.size, len(f.b))
	}
	if h.offset%f.align() != 0 {
		return fmt.Errorf("ELF section %d: symbol table offset %#x is not %d-byte aligned", i, h.offset, f.align())
	}
	return nil
}

// stringTable returns section i as a string table, checked as LLVM's
// ELFFile::getStringTable does.
func (f *elfSymFile) stringTable(i uint64) ([]byte, error) {
	if i >= f.shnum {
		return nil, fmt.Errorf("ELF symbol table: string table section index %d out of range (%d sections)", i, f.shnum)
	}
	h := f.shdr(i)
	if h.typ != shtStrtab {
		return nil, fmt.Errorf("ELF section %d: string table has type %#x, not SHT_STRTAB", i, h.typ)
	}
	if h.offset > uint64(len(f.b)) || h.size > uint64(len(f.b))-h.offset {
		return nil, fmt.Errorf("ELF section %d: string table (offset %#x, size %#x) runs past end of file (size %#x)", i, h.offset, h.size, len(f.b))
	}
	s := f.b[h.offset : h.offset+h.size]
	if len(s) == 0 {
		return nil, fmt.Errorf("ELF section %d: string table is empty", i)
	}
	if s[len(s)-1] != 0 {
		return nil, fmt.Errorf("ELF section %d: string table is not NUL-terminated", i)
	}
	return s, nil
}

// elfImageSymbols reads the symbols of the first SHT_SYMTAB section of an
// ELF relocatable object, skipping the null symbol 0.
func elfImageSymbols(b []byte) ([]Symbol, error) {
	f, err := parseELFSyms(b)
	if err != nil {
		return nil, err
	}
	var symtab, dynsym uint64
	var haveSymtab, haveDynsym bool
	for i := uint64(0); i < f.shnum; i++ {
		switch f.shdr(i).typ {
		case shtSymtab:
			if !haveSymtab {
				symtab, haveSymtab = i, true
			}
		case shtDynsym:
			if !haveDynsym {
				dynsym, haveDynsym = i, true
			}
		}
	}
	if !haveSymtab {
		return nil, nil
	}
	sh := f.shdr(symtab)
	n := sh.size / f.symSize()
	if n < 2 {
		return nil, nil // at most the null symbol
	}
	// LLVM checks both symbol tables whole when it reads any symbol's
	// flags.
	if err := f.checkSymtab(symtab); err != nil {
		return nil, err
	}
	if haveDynsym {
		if err := f.checkSymtab(dynsym); err != nil {
			return nil, err
		}
	}
	strData, strErr := f.stringTable(sh.link)
	var strs string // one copy; names are substrings of it
	if strErr == nil {
		strs = string(strData)
	}
	syms := make([]Symbol, 0, n-1)
	for k := uint64(1); k < n; k++ {
		e := f.b[sh.offset+k*f.symSize():]
		var nameOff uint32
		var info, other uint8
		var shndx uint16
		if f.is64 {
			nameOff, info, other, shndx = f.bo.Uint32(e), e[4], e[5], f.bo.Uint16(e[6:])
		} else {
			nameOff, info, other, shndx = f.bo.Uint32(e), e[12], e[13], f.bo.Uint16(e[14:])
		}
		bind, typ := info>>4, info&0xf
		s := Symbol{
			Global:         bind != 0,
			Weak:           bind == stbWeak,
			Undefined:      shndx == shnUndef,
			Hidden:         other&3 == stvHidden,
			FormatSpecific: typ == sttSection || typ == sttFile,
		}
		nameErr := strErr
		if nameErr == nil {
			if uint64(nameOff) >= uint64(len(strData)) {
				nameErr = fmt.Errorf("ELF symbol %d: name offset %#x is past the end of the string table (size %#x)", k, nameOff, len(strData))
			} else {
				end := uint64(nameOff) + uint64(bytes.IndexByte(strData[nameOff:], 0))
				s.Name = strs[nameOff:end]
			}
		}
		if nameErr == nil && f.mappingSymbol(s.Name) {
			s.FormatSpecific = true
		}
		if nameErr != nil && s.Global && !s.FormatSpecific {
			return nil, nameErr // the linker wrapper reads this name
		}
		syms = append(syms, s)
	}
	return syms, nil
}

// mappingSymbol reports whether LLVM marks a symbol of this name
// format-specific on the file's machine (mapping symbols such as $d and
// $x, ARM's unnamed symbols, RISC-V's ".L0 " label).
func (f *elfSymFile) mappingSymbol(name string) bool {
	switch f.machine {
	case emAArch64:
		return strings.HasPrefix(name, "$d") || strings.HasPrefix(name, "$x")
	case emARM:
		return name == "" || strings.HasPrefix(name, "$d") || strings.HasPrefix(name, "$t") || strings.HasPrefix(name, "$a")
	case emCSKY:
		return strings.HasPrefix(name, "$d") || strings.HasPrefix(name, "$t")
	case emRISCV:
		return name == ".L0 " || strings.HasPrefix(name, "$d") || strings.HasPrefix(name, "$x")
	}
	return false
}
