package inspect

import "encoding/binary"

// ELF constants isPIE reads.
const (
	ptDynamic = 2          // PT_DYNAMIC
	dtNull    = 0          // DT_NULL
	dtFlags1  = 0x6ffffffb // DT_FLAGS_1
	df1PIE    = 0x08000000 // DF_1_PIE
)

// isPIE reports whether the ET_DYN ELF file b is a position-independent
// executable rather than a shared library: its dynamic section has
// DT_FLAGS_1 with DF_1_PIE, which the GNU linkers and lld set for -pie. This
// is the test file(1) makes; an interpreter (PT_INTERP) alone does not
// decide, since shared libraries such as glibc's libc.so.6 have one too.
// Every offset is bounds-checked: a malformed file is not a PIE.
func isPIE(b []byte, order binary.ByteOrder) bool {
	is64 := b[4] == 2
	var phoff uint64
	var phentsize, phnum int
	if is64 {
		if len(b) < 64 {
			return false
		}
		phoff = order.Uint64(b[32:])
		phentsize, phnum = int(order.Uint16(b[54:])), int(order.Uint16(b[56:]))
	} else {
		if len(b) < 52 {
			return false
		}
		phoff = uint64(order.Uint32(b[28:]))
		phentsize, phnum = int(order.Uint16(b[42:])), int(order.Uint16(b[44:]))
	}
	minEnt, dynEnt := 32, 8
	if is64 {
		minEnt, dynEnt = 56, 16
	}
	if phentsize < minEnt || phoff > uint64(len(b)) {
		return false
	}
	for i := range phnum {
		at := phoff + uint64(i)*uint64(phentsize)
		if at+uint64(minEnt) > uint64(len(b)) {
			return false
		}
		ph := b[at:]
		if order.Uint32(ph) != ptDynamic {
			continue
		}
		var off, size uint64
		if is64 {
			off, size = order.Uint64(ph[8:]), order.Uint64(ph[32:])
		} else {
			off, size = uint64(order.Uint32(ph[4:])), uint64(order.Uint32(ph[16:]))
		}
		if off > uint64(len(b)) || size > uint64(len(b))-off {
			return false
		}
		dyn := b[off : off+size]
		for len(dyn) >= dynEnt {
			var tag, val uint64
			if is64 {
				tag, val = order.Uint64(dyn), order.Uint64(dyn[8:])
			} else {
				tag, val = uint64(order.Uint32(dyn)), uint64(order.Uint32(dyn[4:]))
			}
			if tag == dtNull {
				break
			}
			if tag == dtFlags1 {
				return val&df1PIE != 0
			}
			dyn = dyn[dynEnt:]
		}
		return false
	}
	return false
}
