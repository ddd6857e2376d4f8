package objfile

import (
	"errors"
	"fmt"
	"io"
	"sort"
)

// ELF constants used when removing sections.
const (
	shtRel        = 9
	shtRela       = 4
	shtGroup      = 17
	shtSymtabShdx = 18
	shfInfoLink   = 0x40
)

// RemoveSections returns a copy of the ELF64 little-endian relocatable
// object (ET_REL) obj without the sections whose names remove reports true
// for, as `llvm-objcopy --regex --remove-section=<re>` does. The remaining
// sections keep their order; their contents are laid out again after the
// ELF header, each at its alignment, and section indices in section
// headers (sh_link, sh_info of relocation sections and SHF_INFO_LINK),
// symbol tables (st_shndx and SHT_SYMTAB_SHNDX) and section groups are
// renumbered. The section name string table is kept as it was (names of
// removed sections stay in it, unreferenced).
//
// A removed section that a kept section, symbol or group still refers to is
// an error, except relocation sections for a removed section, which are
// removed with it (as llvm-objcopy does).
func RemoveSections(obj []byte, remove func(name string) bool) ([]byte, error) {
	parts, err := removeSectionParts(obj, remove)
	if err != nil {
		return nil, err
	}
	return joinParts(parts), nil
}

// WriteWithoutSections writes what RemoveSections returns to w; unchanged
// section contents are written straight from obj.
func WriteWithoutSections(w io.Writer, obj []byte, remove func(name string) bool) error {
	parts, err := removeSectionParts(obj, remove)
	if err != nil {
		return err
	}
	return writeParts(w, parts)
}

func removeSectionParts(obj []byte, remove func(name string) bool) ([][]byte, error) {
	f, err := parseELF(obj)
	if err != nil {
		return nil, err
	}
	if f.typ != etRel {
		return nil, fmt.Errorf("cannot remove sections from an ELF %s file: only relocatable objects (ET_REL) are supported", etypeName(f.typ))
	}
	if f.shnum == 0 {
		return nil, errors.New("ELF header at offset 0x28: object has no section header table")
	}
	if le.Uint16(obj[56:]) != 0 {
		return nil, errors.New("ELF header at offset 0x38: relocatable object with program headers is not supported")
	}
	secs, err := Sections(obj)
	if err != nil {
		return nil, err
	}
	n := f.shnum
	removed := make([]bool, n)
	for i, s := range secs {
		if remove(s.Name) {
			removed[i+1] = true
		}
	}
	if f.shstrndx != 0 && removed[f.shstrndx] {
		return nil, fmt.Errorf("ELF section header %d at offset %#x: cannot remove the section name string table", f.shstrndx, f.shdrOffset(f.shstrndx))
	}
	// Relocation sections for removed sections go too.
	for i := uint64(1); i < n; i++ {
		h := f.shdr(i)
		if (h.typ == shtRel || h.typ == shtRela) && uint64(h.info) < n && h.info != 0 && removed[h.info] {
			removed[i] = true
		}
	}
	newIdx := make([]uint64, n) // 0 for removed sections
	kept := uint64(1)
	for i := uint64(1); i < n; i++ {
		if !removed[i] {
			newIdx[i] = kept
			kept++
		}
	}
	remap := func(i uint64, field string, idx uint64) (uint64, error) {
		if idx == 0 || idx >= n {
			return idx, nil
		}
		if removed[idx] {
			return 0, fmt.Errorf("ELF section header %d at offset %#x: %s refers to section %d (%s), which is being removed",
				i, f.shdrOffset(i), field, idx, secs[idx-1].Name)
		}
		return newIdx[idx], nil
	}

	// New contents of sections that hold section indices.
	newData := make(map[uint64][]byte)
	for i := uint64(1); i < n; i++ {
		if removed[i] {
			continue
		}
		h := f.shdr(i)
		switch h.typ {
		case shtSymtab, shtDynsym:
			d, err := f.remapSymbols(i, secs[i-1].Data, removed, newIdx)
			if err != nil {
				return nil, err
			}
			if d != nil {
				newData[i] = d
			}
		case shtGroup:
			d := secs[i-1].Data
			if len(d)%4 != 0 {
				return nil, fmt.Errorf("ELF section header %d at offset %#x: group section size %#x is not a multiple of 4", i, f.shdrOffset(i), len(d))
			}
			c := make([]byte, len(d))
			copy(c, d)
			for k := 4; k+4 <= len(c); k += 4 {
				m, err := remap(i, "section group member", uint64(le.Uint32(c[k:])))
				if err != nil {
					return nil, err
				}
				le.PutUint32(c[k:], uint32(m))
			}
			newData[i] = c
		case shtSymtabShdx:
			d := secs[i-1].Data
			c := make([]byte, len(d))
			copy(c, d)
			for k := 0; k+4 <= len(c); k += 4 {
				v := uint64(le.Uint32(c[k:]))
				if v == 0 {
					continue
				}
				m, err := remap(i, "extended symbol section index", v)
				if err != nil {
					return nil, err
				}
				le.PutUint32(c[k:], uint32(m))
			}
			newData[i] = c
		}
	}

	// Lay out kept contents in their original file order.
	order := make([]uint64, 0, kept)
	for i := uint64(1); i < n; i++ {
		if !removed[i] {
			order = append(order, i)
		}
	}
	sort.SliceStable(order, func(a, b int) bool { return f.shdr(order[a]).offset < f.shdr(order[b]).offset })
	parts := [][]byte{nil}
	pos := uint64(elfHeaderSize)
	newOff := make([]uint64, n)
	for _, i := range order {
		h := f.shdr(i)
		if !f.hasFileData(h.typ) {
			newOff[i] = alignUp(pos, max(h.addralign, 1))
			continue
		}
		d := secs[i-1].Data
		if nd, ok := newData[i]; ok {
			d = nd
		}
		if h.addralign > maxAddAlign {
			return nil, fmt.Errorf("ELF section header %d at offset %#x: alignment %#x is larger than the supported maximum %#x", i, f.shdrOffset(i), h.addralign, maxAddAlign)
		}
		al := alignUp(pos, max(h.addralign, 1))
		if len(d) == 0 {
			newOff[i] = al
			continue
		}
		if al > pos {
			parts = append(parts, make([]byte, al-pos))
		}
		newOff[i] = al
		parts = append(parts, d)
		pos = al + uint64(len(d))
	}
	shoff := alignUp(pos, 8)
	if shoff > pos {
		parts = append(parts, make([]byte, shoff-pos))
	}
	shdrs := make([]byte, kept*elfShdrSize)
	copy(shdrs, obj[f.shoff:f.shoff+elfShdrSize])
	for i := uint64(1); i < n; i++ {
		if removed[i] {
			continue
		}
		h := f.shdr(i)
		h.offset = newOff[i]
		l, err := remap(i, "sh_link", uint64(h.link))
		if err != nil {
			return nil, err
		}
		h.link = uint32(l)
		if h.typ == shtRel || h.typ == shtRela || h.flags&shfInfoLink != 0 {
			v, err := remap(i, "sh_info", uint64(h.info))
			if err != nil {
				return nil, err
			}
			h.info = uint32(v)
		}
		h.put(shdrs[newIdx[i]*elfShdrSize:])
	}
	parts[0] = f.newHeader(shdrs, shoff, kept, newIdx[f.shstrndx])
	return append(parts, shdrs), nil
}

// remapSymbols returns a copy of symbol table section i's data (syms) with
// st_shndx renumbered, or nil when no symbol refers to a renumbered
// section. A symbol in a removed section is an error.
func (f *elfFile) remapSymbols(i uint64, syms []byte, removed []bool, newIdx []uint64) ([]byte, error) {
	var c []byte
	count := uint64(len(syms)) / elfSymSize
	for k := uint64(0); k < count; k++ {
		e := syms[k*elfSymSize:]
		idx := uint64(le.Uint16(e[6:]))
		if idx == shnUndef || idx >= shnLoReserve || idx >= f.shnum {
			continue
		}
		if removed[idx] {
			return nil, fmt.Errorf("ELF symbol %d at offset %#x: defined in section %d, which is being removed", k, f.shdr(i).offset+k*elfSymSize, idx)
		}
		if newIdx[idx] == idx {
			continue
		}
		if newIdx[idx] >= shnLoReserve {
			return nil, fmt.Errorf("ELF symbol %d at offset %#x: renumbering needs extended section indices, which are not supported", k, f.shdr(i).offset+k*elfSymSize)
		}
		if c == nil {
			c = make([]byte, len(syms))
			copy(c, syms)
		}
		le.PutUint16(c[k*elfSymSize+6:], uint16(newIdx[idx]))
	}
	return c, nil
}
