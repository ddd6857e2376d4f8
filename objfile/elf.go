package objfile

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
)

// SHTLLVMOffloading is the ELF section type LLVM gives the .llvm.offloading
// section that carries embedded offload binaries (SHT_LLVM_OFFLOADING).
const SHTLLVMOffloading = 0x6fff4c0b

// SHFExclude is the ELF section flag telling the linker to drop the section
// from linked output (SHF_EXCLUDE).
const SHFExclude = 0x80000000

// ELF constants used by the reader and writer.
const (
	elfHeaderSize  = 64
	elfShdrSize    = 64
	elfSymSize     = 24
	etRel          = 1
	etExec         = 2
	etDyn          = 3
	shnUndef       = 0
	shnLoReserve   = 0xff00
	shnXIndex      = 0xffff
	shtSymtab      = 2
	shtNobits      = 8
	shtDynsym      = 11
	stbGlobal      = 1
	stbWeak        = 2
	stbGNUUnique   = 10
	elfClass64     = 2
	elfData2LSB    = 1
	elfVersionCurr = 1
)

var le = binary.LittleEndian

// NewSection describes a section for AddSection to append to an ELF object.
type NewSection struct {
	Name  string // section name, added to the section name string table
	Type  uint32 // sh_type, e.g. SHTLLVMOffloading
	Flags uint64 // sh_flags, e.g. SHFExclude
	Align uint64 // sh_addralign: 0 or a power of two
	Data  []byte // section contents
}

// sectionHeader is one parsed Elf64_Shdr.
type sectionHeader struct {
	name      uint32
	typ       uint32
	flags     uint64
	addr      uint64
	offset    uint64
	size      uint64
	link      uint32
	info      uint32
	addralign uint64
	entsize   uint64
}

func readShdr(b []byte) sectionHeader {
	return sectionHeader{
		name:      le.Uint32(b[0:]),
		typ:       le.Uint32(b[4:]),
		flags:     le.Uint64(b[8:]),
		addr:      le.Uint64(b[16:]),
		offset:    le.Uint64(b[24:]),
		size:      le.Uint64(b[32:]),
		link:      le.Uint32(b[40:]),
		info:      le.Uint32(b[44:]),
		addralign: le.Uint64(b[48:]),
		entsize:   le.Uint64(b[56:]),
	}
}

func (s *sectionHeader) put(b []byte) {
	le.PutUint32(b[0:], s.name)
	le.PutUint32(b[4:], s.typ)
	le.PutUint64(b[8:], s.flags)
	le.PutUint64(b[16:], s.addr)
	le.PutUint64(b[24:], s.offset)
	le.PutUint64(b[32:], s.size)
	le.PutUint32(b[40:], s.link)
	le.PutUint32(b[44:], s.info)
	le.PutUint64(b[48:], s.addralign)
	le.PutUint64(b[56:], s.entsize)
}

// elfFile is a minimally parsed ELF64 little-endian file. Section headers are
// read on demand from the file bytes, so parsing allocates nothing in
// proportion to the (attacker-controlled) section count.
type elfFile struct {
	b        []byte
	typ      uint16
	machine  uint16
	shoff    uint64
	shnum    uint64 // real section count (after SHN_XINDEX decoding)
	shstrndx uint64 // real index of the section name string table (0: none)
}

// IsELF reports whether b starts with the ELF magic number.
func IsELF(b []byte) bool {
	return len(b) >= 4 && b[0] == 0x7f && b[1] == 'E' && b[2] == 'L' && b[3] == 'F'
}

func etypeName(t uint16) string {
	switch t {
	case 0:
		return "ET_NONE"
	case etRel:
		return "ET_REL"
	case etExec:
		return "ET_EXEC"
	case etDyn:
		return "ET_DYN"
	case 4:
		return "ET_CORE"
	}
	return fmt.Sprintf("type %#x", t)
}

// parseELF validates the ELF header and the location of the section header
// table.
func parseELF(b []byte) (*elfFile, error) {
	if !IsELF(b) {
		return nil, errors.New("not an ELF file: bad magic number")
	}
	if len(b) < elfHeaderSize {
		return nil, fmt.Errorf("ELF header at offset 0x0: file is %d bytes, shorter than the 64-byte ELF64 header", len(b))
	}
	if b[4] != elfClass64 {
		return nil, fmt.Errorf("ELF header at offset 0x4: class %d is not ELFCLASS64 (only 64-bit ELF is supported)", b[4])
	}
	if b[5] != elfData2LSB {
		return nil, fmt.Errorf("ELF header at offset 0x5: data encoding %d is not ELFDATA2LSB (only little-endian ELF is supported)", b[5])
	}
	if b[6] != elfVersionCurr {
		return nil, fmt.Errorf("ELF header at offset 0x6: unknown ELF version %d", b[6])
	}
	f := &elfFile{b: b, typ: le.Uint16(b[16:]), machine: le.Uint16(b[18:])}
	f.shoff = le.Uint64(b[40:])
	shentsize := le.Uint16(b[58:])
	shnum := uint64(le.Uint16(b[60:]))
	shstrndx := uint64(le.Uint16(b[62:]))
	if f.shoff == 0 {
		if shnum != 0 {
			return nil, fmt.Errorf("ELF header at offset 0x0: e_shnum is %d but e_shoff is 0", shnum)
		}
		return f, nil // no sections
	}
	if shentsize != elfShdrSize {
		return nil, fmt.Errorf("ELF header at offset 0x3a: section header size e_shentsize is %d, want 64", shentsize)
	}
	if f.shoff > uint64(len(b)) || uint64(len(b))-f.shoff < elfShdrSize {
		return nil, fmt.Errorf("ELF header at offset 0x28: section header table offset %#x runs past end of file (size %#x)", f.shoff, len(b))
	}
	if shnum == 0 || shstrndx == shnXIndex {
		// Extended numbering: the real values live in section header 0.
		s0 := readShdr(b[f.shoff:])
		if shnum == 0 {
			shnum = s0.size
		}
		if shstrndx == shnXIndex {
			shstrndx = uint64(s0.link)
		}
	}
	if shnum > (uint64(len(b))-f.shoff)/elfShdrSize {
		return nil, fmt.Errorf("ELF header at offset 0x28: section header table at %#x with %d entries runs past end of file (size %#x)", f.shoff, shnum, len(b))
	}
	if shstrndx != 0 && shstrndx >= shnum {
		return nil, fmt.Errorf("ELF header at offset 0x3e: section name string table index %d out of range (%d sections)", shstrndx, shnum)
	}
	f.shnum, f.shstrndx = shnum, shstrndx
	return f, nil
}

func (f *elfFile) shdrOffset(i uint64) uint64 { return f.shoff + i*elfShdrSize }

func (f *elfFile) shdr(i uint64) sectionHeader {
	return readShdr(f.b[f.shdrOffset(i):])
}

// emCUDA is the ELF machine of NVIDIA's cubins (EM_CUDA).
const emCUDA = 190

// cudaNoBits are the processor-specific section types of cubins that, like
// SHT_NOBITS, occupy memory but no file space: .nv.global (uninitialised
// device variables), .nv.local.* and .nv.shared.* (local and __shared__
// memory). Their sizes are those of the memory, so their offsets and sizes
// may run past the end of the file.
var cudaNoBits = [...]uint32{0x70000007, 0x70000009, 0x7000000a}

// hasFileData reports whether a section of type typ has contents in the
// file: not SHT_NOBITS, nor, in a cubin, one of cudaNoBits.
func (f *elfFile) hasFileData(typ uint32) bool {
	if typ == shtNobits {
		return false
	}
	return f.machine != emCUDA || !slices.Contains(cudaNoBits[:], typ)
}

// data returns the file contents of section i (empty for a section with
// none: see hasFileData).
func (f *elfFile) data(i uint64) ([]byte, error) {
	s := f.shdr(i)
	if !f.hasFileData(s.typ) {
		return f.b[:0:0], nil
	}
	if s.offset > uint64(len(f.b)) || s.size > uint64(len(f.b))-s.offset {
		return nil, fmt.Errorf("ELF section header %d at offset %#x: data (offset %#x, size %#x) runs past end of file (size %#x)",
			i, f.shdrOffset(i), s.offset, s.size, len(f.b))
	}
	return f.b[s.offset : s.offset+s.size : s.offset+s.size], nil
}

// SectionsOfType returns the contents of every section of type typ in the
// ELF64 little-endian object, executable or shared object obj, in section
// order. The slices alias obj. SHT_NOBITS sections yield empty slices.
func SectionsOfType(obj []byte, typ uint32) ([][]byte, error) {
	f, err := parseELF(obj)
	if err != nil {
		return nil, err
	}
	if f.typ != etRel && f.typ != etExec && f.typ != etDyn {
		return nil, fmt.Errorf("ELF header at offset 0x10: file type %s is not a relocatable object, executable or shared object", etypeName(f.typ))
	}
	var out [][]byte
	for i := uint64(1); i < f.shnum; i++ {
		if f.shdr(i).typ != typ {
			continue
		}
		d, err := f.data(i)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}

// Symbols returns the names of the global and weak symbols the ELF object
// obj defines (st_shndx not SHN_UNDEF; bindings STB_GLOBAL, STB_WEAK and
// STB_GNU_UNIQUE) and of the global symbols it references undefined
// (STB_GLOBAL, SHN_UNDEF; undefined weak references are left out, as a linker
// does not load archive members for them). It reads the SHT_SYMTAB section,
// or SHT_DYNSYM when there is none. Names are in symbol table order.
func Symbols(obj []byte) (defined, undefined []string, err error) {
	f, err := parseELF(obj)
	if err != nil {
		return nil, nil, err
	}
	if f.typ != etRel && f.typ != etExec && f.typ != etDyn {
		return nil, nil, fmt.Errorf("ELF header at offset 0x10: file type %s is not a relocatable object, executable or shared object", etypeName(f.typ))
	}
	symidx := uint64(0)
	for i := uint64(1); i < f.shnum; i++ {
		if t := f.shdr(i).typ; t == shtSymtab {
			symidx = i
			break
		} else if t == shtDynsym && symidx == 0 {
			symidx = i
		}
	}
	if symidx == 0 {
		return nil, nil, nil
	}
	st, err := f.symbolTable(symidx)
	if err != nil {
		return nil, nil, err
	}
	// One copy of the string table; names are substrings of it, so the
	// memory used stays bounded by the input size.
	var strtab string
	for k := uint64(1); k < st.count(); k++ {
		sym := st.sym(k)
		bind := sym.info >> 4
		var isDef bool
		switch {
		case sym.shndx == shnUndef && bind == stbGlobal:
			isDef = false
		case sym.shndx != shnUndef && (bind == stbGlobal || bind == stbWeak || bind == stbGNUUnique):
			isDef = true
		default:
			continue
		}
		b, err := st.name(k)
		if err != nil {
			return nil, nil, err
		}
		if len(b) == 0 {
			continue
		}
		if strtab == "" {
			strtab = string(st.strs)
		}
		name := strtab[sym.name : int(sym.name)+len(b)]
		if isDef {
			defined = append(defined, name)
		} else {
			undefined = append(undefined, name)
		}
	}
	return defined, undefined, nil
}

// AddSection returns a copy of the ELF64 little-endian relocatable object
// (ET_REL) obj with section s appended as a new last section. Existing
// section indices and contents are unchanged. The section data is placed,
// aligned to s.Align, after the existing content; a copy of the section name
// string table extended with s.Name follows it (unless s.Name already occurs
// there), and a new section header table ends the file. Extended section
// numbering (e_shnum 0 / e_shstrndx SHN_XINDEX) is read and written as
// needed. A section with the same name that already exists is kept.
//
// For an offload object: AddSection(obj, NewSection{Name: ".llvm.offloading",
// Type: SHTLLVMOffloading, Flags: SHFExclude, Align: 8, Data: image}).
func AddSection(obj []byte, s NewSection) ([]byte, error) {
	return AddSections(obj, []NewSection{s})
}

// AddSections is AddSection for several sections at once: they are appended
// in slice order, each aligned to its Align, with one extended copy of the
// section name string table and one new section header table. An empty
// slice gives a copy of obj with its section header table rewritten.
func AddSections(obj []byte, secs []NewSection) ([]byte, error) {
	parts, err := addSectionParts(obj, secs)
	if err != nil {
		return nil, err
	}
	return joinParts(parts), nil
}

// WriteWithSection writes what AddSection returns to w without building it
// in memory: the object's bytes and the new data are written from the
// slices passed in.
func WriteWithSection(w io.Writer, obj []byte, s NewSection) error {
	return WriteWithSections(w, obj, []NewSection{s})
}

// WriteWithSections writes what AddSections returns to w without building
// it in memory.
func WriteWithSections(w io.Writer, obj []byte, secs []NewSection) error {
	parts, err := addSectionParts(obj, secs)
	if err != nil {
		return err
	}
	return writeParts(w, parts)
}

func joinParts(parts [][]byte) []byte {
	total := 0
	for _, p := range parts {
		total += len(p)
	}
	out := make([]byte, 0, total)
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func writeParts(w io.Writer, parts [][]byte) error {
	for _, p := range parts {
		if len(p) == 0 {
			continue
		}
		if _, err := w.Write(p); err != nil {
			return err
		}
	}
	return nil
}

// checkNewSection validates one section to add.
func checkNewSection(s NewSection) error {
	if s.Name == "" {
		return errors.New("cannot add a section with an empty name")
	}
	if strings.IndexByte(s.Name, 0) >= 0 {
		return fmt.Errorf("section name %q contains a NUL byte", s.Name)
	}
	if s.Align&(s.Align-1) != 0 {
		return fmt.Errorf("section %s: alignment %d is not a power of two", s.Name, s.Align)
	}
	if s.Align > maxAddAlign {
		return fmt.Errorf("section %s: alignment %d is larger than the supported maximum %d", s.Name, s.Align, maxAddAlign)
	}
	return nil
}

// addSectionParts lays out AddSections' result as consecutive pieces; the
// big ones alias obj and the sections' Data.
func addSectionParts(obj []byte, secs []NewSection) ([][]byte, error) {
	f, err := parseELF(obj)
	if err != nil {
		return nil, err
	}
	if f.typ != etRel {
		return nil, fmt.Errorf("cannot add a section to an ELF %s file: only relocatable objects (ET_REL) are supported", etypeName(f.typ))
	}
	for _, s := range secs {
		if err := checkNewSection(s); err != nil {
			return nil, err
		}
	}
	if f.shnum == 0 {
		return nil, errors.New("ELF header at offset 0x28: object has no section header table")
	}
	if f.shstrndx == 0 {
		return nil, errors.New("ELF header at offset 0x3e: object has no section name string table")
	}
	if f.shnum+uint64(len(secs)) >= math.MaxUint32 {
		return nil, fmt.Errorf("ELF header at offset 0x3c: too many sections (%d)", f.shnum+uint64(len(secs)))
	}
	strShdr := f.shdr(f.shstrndx)
	if strShdr.typ == shtNobits {
		return nil, fmt.Errorf("ELF section header %d at offset %#x: section name string table has type SHT_NOBITS", f.shstrndx, f.shdrOffset(f.shstrndx))
	}
	oldStr, err := f.data(f.shstrndx)
	if err != nil {
		return nil, err
	}

	keep := f.keepBeforeShdrs()

	// Names: reuse an existing NUL-terminated occurrence in the string
	// table when there is one, otherwise append to a copy of the table
	// (once per distinct new name).
	nameOffs := make([]uint64, len(secs))
	var extra []byte // bytes appended to the old table
	base := uint64(len(oldStr))
	if base == 0 || oldStr[base-1] != 0 {
		extra = append(extra, 0) // keep a terminating NUL before new names
	}
	added := map[string]uint64{}
	for i, s := range secs {
		if off := bytes.Index(oldStr, append([]byte(s.Name), 0)); off >= 0 {
			nameOffs[i] = uint64(off)
			continue
		}
		if off, ok := added[s.Name]; ok {
			nameOffs[i] = off
			continue
		}
		off := base + uint64(len(extra))
		added[s.Name] = off
		nameOffs[i] = off
		extra = append(extra, s.Name...)
		extra = append(extra, 0)
	}
	newStr := len(added) > 0
	if newStr && base+uint64(len(extra)) > math.MaxUint32 {
		return nil, errors.New("section name string table is too large")
	}

	// Layout: obj[:keep], then each section's padding and data, then the
	// new string table (if any), padding and the section header table.
	parts := [][]byte{nil, obj[elfHeaderSize:keep]}
	pos := keep
	dataOffs := make([]uint64, len(secs))
	for i, s := range secs {
		al := alignUp(pos, max(s.Align, 1))
		if al > pos {
			parts = append(parts, make([]byte, al-pos))
		}
		dataOffs[i] = al
		parts = append(parts, s.Data)
		pos = al + uint64(len(s.Data))
	}
	strOff := pos
	strSize := uint64(0)
	if newStr {
		strSize = base + uint64(len(extra))
		pos += strSize
	}
	shoff := alignUp(pos, 8)
	newNum := f.shnum + uint64(len(secs))
	total := shoff + newNum*elfShdrSize

	tail := make([]byte, total-strOff)
	if newStr {
		copy(tail, oldStr)
		copy(tail[base:], extra)
	}
	// Old section headers, then the new ones.
	shdrs := tail[shoff-strOff:]
	copy(shdrs, obj[f.shoff:f.shoff+f.shnum*elfShdrSize])
	if newStr {
		h := readShdr(shdrs[f.shstrndx*elfShdrSize:])
		h.offset, h.size = strOff, strSize
		h.put(shdrs[f.shstrndx*elfShdrSize:])
	}
	for i, s := range secs {
		nh := sectionHeader{
			name:      uint32(nameOffs[i]),
			typ:       s.Type,
			flags:     s.Flags,
			offset:    dataOffs[i],
			size:      uint64(len(s.Data)),
			addralign: s.Align,
		}
		nh.put(shdrs[(f.shnum+uint64(i))*elfShdrSize:])
	}
	parts[0] = f.newHeader(shdrs, shoff, newNum, f.shstrndx)
	return append(parts, tail), nil
}

// keepBeforeShdrs returns how many leading bytes of the file a rewrite
// keeps: all of them, except a section header table that ends the file and
// overlaps no section data or program headers, which is replaced.
func (f *elfFile) keepBeforeShdrs() uint64 {
	obj := f.b
	keep := uint64(len(obj))
	shtEnd := f.shoff + f.shnum*elfShdrSize
	if shtEnd != uint64(len(obj)) || f.shoff < elfHeaderSize {
		return keep
	}
	for i := uint64(1); i < f.shnum; i++ {
		h := f.shdr(i)
		if !f.hasFileData(h.typ) || h.size == 0 {
			continue
		}
		if h.offset+h.size > f.shoff || h.offset+h.size < h.offset {
			return keep
		}
	}
	// Program headers must not live in the dropped range either.
	phoff := le.Uint64(obj[32:])
	phnum := uint64(le.Uint16(obj[56:]))
	phentsize := uint64(le.Uint16(obj[54:]))
	if phnum != 0 && phoff+phnum*phentsize > f.shoff {
		return keep
	}
	return f.shoff
}

// newHeader returns a copy of the ELF header pointing at a section header
// table at shoff with num entries and the name table at index strndx,
// using extended numbering in shdrs[0] (which it updates) as needed.
func (f *elfFile) newHeader(shdrs []byte, shoff, num, strndx uint64) []byte {
	ehdr := make([]byte, elfHeaderSize)
	copy(ehdr, f.b)
	le.PutUint64(ehdr[40:], shoff)
	s0 := readShdr(shdrs)
	if num >= shnLoReserve {
		le.PutUint16(ehdr[60:], 0)
		s0.size = num
	} else {
		le.PutUint16(ehdr[60:], uint16(num))
		s0.size = 0
	}
	if strndx >= shnLoReserve {
		le.PutUint16(ehdr[62:], shnXIndex)
		s0.link = uint32(strndx)
	} else {
		le.PutUint16(ehdr[62:], uint16(strndx))
		if le.Uint16(f.b[62:]) == shnXIndex {
			s0.link = 0
		}
	}
	s0.put(shdrs)
	return ehdr
}

// maxAddAlign bounds the padding AddSection inserts before the new section.
const maxAddAlign = 1 << 16

func alignUp(x, a uint64) uint64 {
	if a <= 1 {
		return x
	}
	return (x + a - 1) &^ (a - 1)
}

// Section is one section of an ELF file.
type Section struct {
	Name   string
	Type   uint32
	Flags  uint64
	Offset uint64 // file offset of the contents
	Data   []byte // contents (aliases the input; nil for SHT_NOBITS and the like)
}

// Sections returns every section of an ELF64 little-endian file in header
// order (index 0 excluded). Names are read from the section name string
// table; a file without one yields empty names. Every header's offset and
// size is checked against the file, so the result aliases obj and the
// memory used is proportional to the section count, which parseELF bounds
// by the file size.
func Sections(obj []byte) ([]Section, error) {
	f, err := parseELF(obj)
	if err != nil {
		return nil, err
	}
	var strtab []byte
	var strs string // one copy of the string table; names are substrings
	if f.shstrndx != 0 {
		if f.shdr(f.shstrndx).typ == shtNobits {
			return nil, fmt.Errorf("ELF section header %d at offset %#x: section name string table has type SHT_NOBITS", f.shstrndx, f.shdrOffset(f.shstrndx))
		}
		if strtab, err = f.data(f.shstrndx); err != nil {
			return nil, err
		}
		strs = string(strtab)
	}
	if f.shnum <= 1 {
		return nil, nil
	}
	out := make([]Section, 0, f.shnum-1)
	for i := uint64(1); i < f.shnum; i++ {
		h := f.shdr(i)
		name, err := f.sectionName(i, h.name, strtab, strs)
		if err != nil {
			return nil, err
		}
		s := Section{Name: name, Type: h.typ, Flags: h.flags, Offset: h.offset}
		if f.hasFileData(h.typ) {
			if s.Data, err = f.data(i); err != nil {
				return nil, err
			}
		}
		out = append(out, s)
	}
	return out, nil
}

// sectionName reads the NUL-terminated name at offset off of the section
// name string table strtab (strs is the same bytes as a string) for section
// header i.
func (f *elfFile) sectionName(i uint64, off uint32, strtab []byte, strs string) (string, error) {
	if strtab == nil {
		return "", nil
	}
	if uint64(off) >= uint64(len(strtab)) {
		return "", fmt.Errorf("ELF section header %d at offset %#x: name offset %#x out of range of section name string table (size %#x)",
			i, f.shdrOffset(i), off, len(strtab))
	}
	end := bytes.IndexByte(strtab[off:], 0)
	if end < 0 {
		return "", fmt.Errorf("ELF section header %d at offset %#x: name at string table offset %#x is not NUL-terminated", i, f.shdrOffset(i), off)
	}
	return strs[off : int(off)+end], nil
}
