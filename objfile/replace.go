package objfile

import (
	"errors"
	"fmt"
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
	if err := checkNoSizedSymbols(f, idx); err != nil {
		return nil, replaceErr(name, fmt.Sprintf("%v", err))
	}
	// The first section stored after the old contents fixes the distance:
	// the writer placed it at the next multiple of its alignment.
	oldEnd, newEnd := h.offset+h.size, h.offset+uint64(len(data))
	// A section moves when it is stored after the old contents; an empty
	// section at the very end of them moves only when its header comes
	// later (an empty section before it stays).
	after := func(i, off uint64) bool { return off > oldEnd || off == oldEnd && i > idx }
	next, nextAlign := uint64(0), uint64(1)
	for i := uint64(1); i < f.shnum; i++ {
		s := f.shdr(i)
		if i != idx && after(i, s.offset) && (next == 0 || s.offset < next) {
			next, nextAlign = s.offset, max(s.addralign, 1)
		}
	}
	if f.shoff >= oldEnd && (next == 0 || f.shoff < next) {
		next, nextAlign = f.shoff, 8
	}
	if next == 0 || next != alignUp(oldEnd, nextAlign) {
		return nil, replaceErr(name, "the data after it is not where the object writer puts it")
	}
	delta := int64(alignUp(newEnd, nextAlign)) - int64(next)
	for i := uint64(1); i < f.shnum; i++ {
		s := f.shdr(i)
		if i != idx && after(i, s.offset) && delta%int64(max(s.addralign, 1)) != 0 {
			return nil, replaceErr(name, fmt.Sprintf("moving section %d by %d bytes would break its %d-byte alignment", i, delta, s.addralign))
		}
	}
	if f.shoff >= oldEnd && delta%8 != 0 {
		return nil, replaceErr(name, fmt.Sprintf("moving the section headers by %d bytes would break their alignment", delta))
	}
	tailStart := next // everything from here moves by delta
	if tailStart > uint64(len(obj)) {
		return nil, replaceErr(name, "object truncated")
	}
	out := make([]byte, 0, max(0, int64(len(obj))+delta+int64(len(data))))
	out = append(out, obj[:h.offset]...)
	out = append(out, data...)
	for uint64(len(out)) < uint64(int64(tailStart)+delta) {
		out = append(out, 0)
	}
	out = append(out, obj[tailStart:]...)
	// Fix the ELF header's section header offset and every moved header.
	shoff := f.shoff
	if shoff >= oldEnd {
		shoff = uint64(int64(shoff) + delta)
		le.PutUint64(out[0x28:], shoff)
	}
	for i := uint64(1); i < f.shnum; i++ {
		s := f.shdr(i)
		switch {
		case i == idx:
			s.size = uint64(len(data))
		case after(i, s.offset):
			s.offset = uint64(int64(s.offset) + delta)
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
	for i := uint64(1); i < f.shnum; i++ {
		s := f.shdr(i)
		if s.typ != shtSymtab {
			continue
		}
		syms, err := f.data(i)
		if err != nil {
			return err
		}
		for off := 0; off+elfSymSize <= len(syms); off += elfSymSize {
			shndx := uint64(le.Uint16(syms[off+6:]))
			size := le.Uint64(syms[off+16:])
			if shndx == idx && size != 0 {
				return fmt.Errorf("symbol %d in it has a size", off/elfSymSize)
			}
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
