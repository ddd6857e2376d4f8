// Package poclbin reads and writes the two formats that start with the
// bytes "poclbin":
//
//   - pocl's real program binary ("poclbin\x00", format versions 9 to 12:
//     pocl 3.1 writes 9, pocl 4.0 and later 12), as returned by
//     clGetProgramInfo(CL_PROGRAM_BINARIES) on pocl devices: see
//     ParseProgram and MarshalProgram, which writes version 9 unless told
//     otherwise;
//   - offcc's simple cache-export archive ("poclbin", u32 version 1, base path,
//     then (path, u32 size, blob) entries): see ParseArchive, WriteArchive and
//     Extract.
//
// Byte 7 tells them apart: it is 0 in a program binary and the low byte of
// the archive version otherwise. Every length is bounds-checked before it is
// used, no allocation exceeds what the input size justifies, and the byte
// slices returned alias the input. The reference is FORMATS.md §4 and §5 and
// pocl's lib/CL/pocl_binary.c.
package poclbin

import "fmt"

// FormatError reports malformed input. Offset is the absolute byte offset in
// the input of the structure named by Structure.
type FormatError struct {
	Format    string // "pocl program binary" or "poclbin archive"
	Structure string // e.g. "kernel 2 argument 0"
	Offset    uint64
	Reason    string
}

func (e *FormatError) Error() string {
	return fmt.Sprintf("%s %s at offset %#x: %s", e.Format, e.Structure, e.Offset, e.Reason)
}

// reader is a bounds-checked little-endian cursor over b[pos:end].
type reader struct {
	b      []byte
	pos    int
	end    int
	format string
}

func (r *reader) errf(what string, at int, format string, args ...any) error {
	return &FormatError{Format: r.format, Structure: what, Offset: uint64(at), Reason: fmt.Sprintf(format, args...)}
}

func (r *reader) left() int { return r.end - r.pos }

func (r *reader) need(what string, n uint64) error {
	if n > uint64(r.left()) {
		return r.errf(what, r.pos, "needs %#x bytes, only %#x left before %#x", n, r.left(), r.end)
	}
	return nil
}

func (r *reader) u32(what string) (uint32, error) {
	if err := r.need(what, 4); err != nil {
		return 0, err
	}
	p := r.b[r.pos:]
	r.pos += 4
	return uint32(p[0]) | uint32(p[1])<<8 | uint32(p[2])<<16 | uint32(p[3])<<24, nil
}

func (r *reader) u64(what string) (uint64, error) {
	lo, err := r.u32(what)
	if err != nil {
		return 0, err
	}
	hi, err := r.u32(what)
	if err != nil {
		r.pos -= 4
		return 0, err
	}
	return uint64(lo) | uint64(hi)<<32, nil
}

// bytes returns the next n bytes, aliasing the input.
func (r *reader) bytes(what string, n uint64) ([]byte, error) {
	if err := r.need(what, n); err != nil {
		return nil, err
	}
	s := r.b[r.pos : r.pos+int(n) : r.pos+int(n)]
	r.pos += int(n)
	return s, nil
}

// lenBytes reads a u32 length and that many bytes.
func (r *reader) lenBytes(what string) ([]byte, error) {
	at := r.pos
	n, err := r.u32(what + " length")
	if err != nil {
		return nil, err
	}
	if uint64(n) > uint64(r.left()) {
		return nil, r.errf(what, at, "length %#x runs past %#x (%#x bytes left)", n, r.end, r.left())
	}
	return r.bytes(what, uint64(n))
}

func le32(dst []byte, v uint32) []byte {
	return append(dst, byte(v), byte(v>>8), byte(v>>16), byte(v>>24))
}

func le64(dst []byte, v uint64) []byte {
	return le32(le32(dst, uint32(v)), uint32(v>>32))
}
