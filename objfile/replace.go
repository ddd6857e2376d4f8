package objfile

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
)

// ReplaceSection returns a copy of the relocatable ELF64 object obj in which
// the section named name holds data, laid out as LLVM's object writer would
// have laid out the object had the section been given data in the first
// place: every section stored after it, and the section header table, move
// by the same distance, which keeps their alignment and padding.
//
// That holds when the distance is a multiple of the alignment of every
// section that moves (and of 8, the section header table's). When it is
// not, or when the section is missing, not PROGBITS, or referred to by a
// symbol with a size (which would have to change too), ReplaceSection
// returns a *ReplaceError and the caller must produce the object another way
// (compile it with the data). Relocations name symbols, not file offsets,
// so none changes.
func ReplaceSection(obj []byte, name string, data []byte) ([]byte, error) {
	return resizeSection(obj, name, func(f *elfFile, idx uint64, _ []byte) ([]byte, error) {
		if err := checkNoSizedSymbols(f, idx); err != nil {
			return nil, replaceErr(name, fmt.Sprintf("%v", err))
		}
		return data, nil
	})
}

// ExtendSection returns a copy of the relocatable ELF64 object obj in which
// the contents of the section named name are followed by tail, laid out as
// ReplaceSection lays out new contents: the object LLVM's writer would
// have written had the section been given tail at its end. What the
// section held stays where it was, and so does every symbol in it. The
// same *ReplaceError cases apply, but for symbols with a size.
func ExtendSection(obj []byte, name string, tail []byte) ([]byte, error) {
	return resizeSection(obj, name, func(_ *elfFile, _ uint64, old []byte) ([]byte, error) {
		return append(old[:len(old):len(old)], tail...), nil
	})
}

// resizeSection gives the section named name of obj the contents that
// contents returns for it (given the file, the section's index and its
// contents now), moving what follows it.
func resizeSection(obj []byte, name string, contents func(f *elfFile, idx uint64, old []byte) ([]byte, error)) ([]byte, error) {
	f, err := parseELF(obj)
	if err != nil {
		return nil, err
	}
	if f.typ != etRel {
		return nil, replaceErr(name, "not a relocatable object")
	}
	secs, err := Sections(obj)
	if err != nil {
		return nil, err
	}
	target := -1
	for i, s := range secs {
		if s.Name == name {
			if target >= 0 {
				return nil, replaceErr(name, "more than one section of that name")
			}
			target = i
		}
	}
	if target < 0 {
		return nil, &ReplaceError{Section: name, Reason: ErrNoSection.Error(), err: ErrNoSection}
	}
	idx := uint64(target + 1) // Sections omits index 0
	h := f.shdr(idx)
	if h.typ != 1 && h.typ != SHTLLVMOffloading { // SHT_PROGBITS
		return nil, replaceErr(name, fmt.Sprintf("type %#x, not SHT_PROGBITS or SHT_LLVM_OFFLOADING", h.typ))
	}
	old, err := f.data(idx)
	if err != nil {
		return nil, err
	}
	data, err := contents(f, idx, old)
	if err != nil {
		return nil, err
	}
	return relayout(obj, f, idx, data, name)
}

// relayout returns obj with section idx holding data and everything
// stored after its old contents laid out again as LLVM's ELF writer lays
// out an object: each section at the next multiple of its alignment after
// the one before it in the file, the gaps zero, and the section header
// table last, 8-aligned. It checks first that obj is laid out so (a
// *ReplaceError if not), so that the result is the object the writer
// would have written with data in the section.
func relayout(obj []byte, f *elfFile, idx uint64, data []byte, name string) ([]byte, error) {
	h := f.shdr(idx)
	oldEnd, newEnd := h.offset+h.size, h.offset+uint64(len(data))
	// A section moves when it is stored after the old contents; an empty
	// section at the very end of them moves only when its header comes
	// later (an empty section before it stays).
	after := func(i, off uint64) bool { return off > oldEnd || off == oldEnd && i > idx }
	type stored struct{ index, offset, size, align uint64 }
	var moved []stored
	for i := uint64(1); i < f.shnum; i++ {
		s := f.shdr(i)
		size := s.size
		if !f.hasFileData(s.typ) {
			size = 0
		}
		switch {
		case i == idx:
		case after(i, s.offset):
			moved = append(moved, stored{i, s.offset, size, max(s.addralign, 1)})
		case size > 0 && s.offset < oldEnd && s.offset+size > h.offset:
			return nil, replaceErr(name, fmt.Sprintf("section %d overlaps it", i))
		}
	}
	if f.shoff < oldEnd {
		return nil, replaceErr(name, "the section headers come before it")
	}
	// In the order written: by offset, and at one offset the empty
	// sections first.
	slices.SortStableFunc(moved, func(a, b stored) int {
		return cmp.Or(cmp.Compare(a.offset, b.offset), cmp.Compare(min(a.size, 1), min(b.size, 1)))
	})
	// Where the writer put each section, and where it puts it now.
	newOffset := make(map[uint64]uint64, len(moved))
	oldPos, newPos := oldEnd, newEnd
	place := func(offset, size, align uint64) (uint64, error) {
		if offset != alignUp(oldPos, align) || offset > uint64(len(obj)) || size > uint64(len(obj))-offset {
			return 0, replaceErr(name, "the data after it is not where the object writer puts it")
		}
		for _, b := range obj[oldPos:offset] {
			if b != 0 {
				return 0, replaceErr(name, "the gaps after it are not zero, as the object writer leaves them")
			}
		}
		at := alignUp(newPos, align)
		oldPos, newPos = offset+size, at+size
		return at, nil
	}
	for _, s := range moved {
		at, err := place(s.offset, s.size, s.align)
		if err != nil {
			return nil, err
		}
		newOffset[s.index] = at
	}
	shdrsSize := f.shnum * elfShdrSize
	shoff, err := place(f.shoff, shdrsSize, 8)
	if err != nil {
		return nil, err
	}
	if f.shoff+shdrsSize != uint64(len(obj)) {
		return nil, replaceErr(name, "data follows the section headers")
	}
	out := make([]byte, shoff+shdrsSize)
	copy(out, obj[:h.offset])
	copy(out[h.offset:], data)
	for _, s := range moved {
		copy(out[newOffset[s.index]:], obj[s.offset:s.offset+s.size])
	}
	copy(out[shoff:], obj[f.shoff:])
	// Fix the ELF header's section header offset and every moved header.
	le.PutUint64(out[0x28:], shoff)
	for i := uint64(1); i < f.shnum; i++ {
		s := f.shdr(i)
		switch at, ok := newOffset[i]; {
		case i == idx:
			s.size = uint64(len(data))
		case ok:
			s.offset = at
		default:
			continue
		}
		s.put(out[shoff+i*elfShdrSize:])
	}
	return out, nil
}

// checkNoSizedSymbols fails when a symbol defined in section idx has a
// size: replacing the contents would leave it wrong.
func checkNoSizedSymbols(f *elfFile, idx uint64) error {
	symtab := f.symtabIndex()
	if symtab == 0 {
		return nil
	}
	st, err := f.symbolTable(symtab)
	if err != nil {
		return err
	}
	for k := uint64(1); k < st.count(); k++ {
		if s := st.sym(k); uint64(s.shndx) == idx && s.size != 0 {
			return fmt.Errorf("symbol %d in it has a size", k)
		}
	}
	return nil
}

// ReplaceError says why ReplaceSection cannot put new contents into a
// section of a well-formed object.
type ReplaceError struct {
	Section, Reason string
	err             error
}

func (e *ReplaceError) Error() string { return "replace section " + e.Section + ": " + e.Reason }

// Unwrap returns ErrNoSection for an object without the section.
func (e *ReplaceError) Unwrap() error { return e.err }

// ErrNoSection is the ReplaceError (errors.Is) of an object that has no
// section of the name.
var ErrNoSection = errors.New("no such section")

func replaceErr(section, reason string) error { return &ReplaceError{Section: section, Reason: reason} }
