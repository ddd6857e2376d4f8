package bundler

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Magic starts every binary bundle and names every object bundle section.
const Magic = "__CLANG_OFFLOAD_BUNDLE__"

// Entry is one bundle entry: its stored ID, the offset and size of its
// payload in the (uncompressed) input, and the payload, which aliases the
// input.
type Entry struct {
	ID           string
	Offset, Size uint64
	Data         []byte
}

// IsBinaryBundle reports whether b starts with the binary bundle magic.
func IsBinaryBundle(b []byte) bool { return bytes.HasPrefix(b, []byte(Magic)) }

// ParseBinary parses a binary bundle and returns its entries in file order
// (not clang's -list order; see ListOrder). Every offset, size and count is
// checked against len(b) without overflow; an entry needs at least 24 bytes
// of header, so a huge count fails before anything is allocated for it.
// Unlike clang, which silently stops at the first bad field, a malformed
// header is an error (*FormatError).
func ParseBinary(b []byte) ([]Entry, error) {
	n := uint64(len(b))
	if !IsBinaryBundle(b) {
		return nil, formatErr("binary bundle header", 0, "missing magic string %q", Magic)
	}
	pos := uint64(len(Magic))
	if n-pos < 8 {
		return nil, formatErr("binary bundle header", pos, "bundle count runs past end of input (%#x bytes)", n)
	}
	count := binary.LittleEndian.Uint64(b[pos:])
	pos += 8
	if count > (n-pos)/24 {
		return nil, formatErr("binary bundle header", uint64(len(Magic)), "bundle count %d does not fit: %#x bytes remain, each entry header needs at least 24", count, n-pos)
	}
	entries := make([]Entry, 0, count)
	for i := uint64(0); i < count; i++ {
		st := fmt.Sprintf("binary bundle entry %d", i)
		at := pos
		if n-pos < 24 {
			return nil, formatErr(st, at, "entry header runs past end of input (%#x bytes)", n)
		}
		off, size, idLen := binary.LittleEndian.Uint64(b[pos:]), binary.LittleEndian.Uint64(b[pos+8:]), binary.LittleEndian.Uint64(b[pos+16:])
		pos += 24
		if idLen > n-pos {
			return nil, formatErr(st, at, "ID length %#x runs past end of input (%#x bytes)", idLen, n)
		}
		id := string(b[pos : pos+idLen])
		pos += idLen
		if off == 0 {
			return nil, formatErr(st, at, "payload offset is 0")
		}
		if off > n || size > n-off {
			return nil, formatErr(st, at, "payload (offset %#x, size %#x) runs past end of input (%#x bytes)", off, size, n)
		}
		if idLen == 0 {
			return nil, formatErr(st, at, "empty bundle ID")
		}
		entries = append(entries, Entry{ID: id, Offset: off, Size: size, Data: b[off : off+size : off+size]})
	}
	return entries, nil
}

// alignTo is LLVM's alignTo for any non-zero alignment.
func alignTo(x, a uint64) uint64 { return (x + a - 1) / a * a }

// BinaryHeader returns the header of a binary bundle of the given IDs (in
// the stored form) and payload sizes with payloads aligned to align (1 for
// none; clang's -bundle-align), and the payload offsets. Payloads follow in
// the same order, each preceded by zero padding up to its offset.
func BinaryHeader(ids []string, sizes []uint64, align uint64) (header []byte, offsets []uint64, err error) {
	if len(ids) != len(sizes) {
		return nil, nil, errors.New("binary bundle: number of IDs and payloads differ")
	}
	if align == 0 {
		return nil, nil, errors.New("bundle alignment must not be 0")
	}
	hsize := uint64(len(Magic)) + 8
	for _, id := range ids {
		hsize += 24 + uint64(len(id))
	}
	header = make([]byte, 0, hsize)
	header = append(header, Magic...)
	header = binary.LittleEndian.AppendUint64(header, uint64(len(ids)))
	pos := hsize
	for i, id := range ids {
		pos = alignTo(pos, align)
		offsets = append(offsets, pos)
		header = binary.LittleEndian.AppendUint64(header, pos)
		header = binary.LittleEndian.AppendUint64(header, sizes[i])
		header = binary.LittleEndian.AppendUint64(header, uint64(len(id)))
		header = append(header, id...)
		pos += sizes[i]
	}
	return header, offsets, nil
}

// WriteBinary writes a binary bundle of payloads with the given stored IDs
// to w, byte for byte as clang-offload-bundler -type=bc does; payloads are
// written from the slices given.
func WriteBinary(w io.Writer, ids []string, payloads [][]byte, align uint64) error {
	sizes := make([]uint64, len(payloads))
	for i, p := range payloads {
		sizes[i] = uint64(len(p))
	}
	header, offsets, err := BinaryHeader(ids, sizes, align)
	if err != nil {
		return err
	}
	if _, err := w.Write(header); err != nil {
		return err
	}
	pos := uint64(len(header))
	for i, p := range payloads {
		if pad := offsets[i] - pos; pad > 0 {
			if err := writeZeros(w, pad); err != nil {
				return err
			}
		}
		if _, err := w.Write(p); err != nil {
			return err
		}
		pos = offsets[i] + uint64(len(p))
	}
	return nil
}

func writeZeros(w io.Writer, n uint64) error {
	var z [4096]byte
	for n > 0 {
		k := min(n, uint64(len(z)))
		if _, err := w.Write(z[:k]); err != nil {
			return err
		}
		n -= k
	}
	return nil
}
