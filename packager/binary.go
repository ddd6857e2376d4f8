package packager

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"slices"
	"sort"
)

// Layout constants of format version 1.
const (
	headerSize      = 32
	entrySize       = 40
	stringEntrySize = 16
	align           = 8
	version         = 1
)

// magic is the first four bytes of every offload binary blob.
var magic = [4]byte{0x10, 0xFF, 0x10, 0xAD}

func alignTo(x, a uint64) uint64 { return (x + a - 1) / a * a }

// stringTable is llvm::StringTableBuilder in ELF mode after finalize():
// distinct strings sorted by their reversed bytes (descending, a string
// before its own suffixes) and tail merged; "" has offset 0.
type stringTable struct {
	data    []byte
	offsets map[string]uint64
}

func newStringTable(strs []string) stringTable {
	set := make(map[string]bool, len(strs))
	var uniq []string
	for _, s := range strs {
		if s != "" && !set[s] {
			set[s] = true
			uniq = append(uniq, s)
		}
	}
	sort.Slice(uniq, func(i, j int) bool { return reversedGreater(uniq[i], uniq[j]) })
	t := stringTable{data: []byte{0}, offsets: map[string]uint64{"": 0}}
	prev := ""
	for _, s := range uniq {
		if len(prev) >= len(s) && prev[len(prev)-len(s):] == s {
			t.offsets[s] = uint64(len(t.data) - len(s) - 1)
			continue
		}
		t.offsets[s] = uint64(len(t.data))
		t.data = append(t.data, s...)
		t.data = append(t.data, 0)
		prev = s
	}
	return t
}

// reversedGreater orders a before b when a read backwards compares greater
// than b read backwards, bytes unsigned, a string ending before the other
// being the smaller one (LLVM's multikeySort on charTailAt).
func reversedGreater(a, b string) bool {
	for i := 0; ; i++ {
		ca, cb := -1, -1
		if i < len(a) {
			ca = int(a[len(a)-1-i])
		}
		if i < len(b) {
			cb = int(b[len(b)-1-i])
		}
		if ca != cb {
			return ca > cb
		}
		if ca == -1 {
			return false
		}
	}
}

// Marshal serializes images the way LLVM 22's llvm-offload-binary does:
// one complete version 1 blob per image, concatenated, each 8-byte aligned.
// String entries are written in the order of Image.Strings (repeated keys
// are written as given); the string table holds every key and value once,
// sorted and tail merged like llvm::StringTableBuilder.
func Marshal(images []Image) []byte {
	var buf bytes.Buffer
	buf.Grow(int(MarshalledSize(images)))
	WriteImages(&buf, images) // a bytes.Buffer does not fail
	return buf.Bytes()
}

// MarshalledSize returns len(Marshal(images)) without building it.
func MarshalledSize(images []Image) uint64 {
	var n uint64
	for i := range images {
		n += newBlobLayout(&images[i]).size
	}
	return n
}

// WriteImages writes what Marshal returns to w, streaming each image's
// bytes from Image.Data instead of copying them into one buffer first.
func WriteImages(w io.Writer, images []Image) error {
	var pad [align]byte
	for i := range images {
		im := &images[i]
		l := newBlobLayout(im)
		if _, err := w.Write(l.head(im)); err != nil {
			return err
		}
		if _, err := w.Write(im.Data); err != nil {
			return err
		}
		if _, err := w.Write(pad[:l.size-l.dataOff-uint64(len(im.Data))]); err != nil {
			return err
		}
	}
	return nil
}

// blobLayout is where the parts of one image's blob go.
type blobLayout struct {
	tab                      stringTable
	strTabOff, dataOff, size uint64
}

func newBlobLayout(im *Image) blobLayout {
	strs := make([]string, 0, 2*len(im.Strings))
	for _, kv := range im.Strings {
		strs = append(strs, kv.Key, kv.Value)
	}
	l := blobLayout{tab: newStringTable(strs)}
	l.strTabOff = uint64(headerSize+entrySize) + stringEntrySize*uint64(len(im.Strings))
	l.dataOff = alignTo(l.strTabOff+uint64(len(l.tab.data)), align)
	l.size = alignTo(l.dataOff+uint64(len(im.Data)), align)
	return l
}

// head returns the blob's bytes before the image: header, entry, string
// entries, string table and padding up to the image offset.
func (l *blobLayout) head(im *Image) []byte {
	b := make([]byte, l.dataOff)
	le := binary.LittleEndian
	copy(b, magic[:])
	le.PutUint32(b[4:], version)
	le.PutUint64(b[8:], l.size)
	le.PutUint64(b[16:], headerSize)
	le.PutUint64(b[24:], entrySize)
	e := b[headerSize:]
	le.PutUint16(e[0:], uint16(im.Kind))
	le.PutUint16(e[2:], uint16(im.Offload))
	le.PutUint32(e[4:], im.Flags)
	le.PutUint64(e[8:], headerSize+entrySize)
	le.PutUint64(e[16:], uint64(len(im.Strings)))
	le.PutUint64(e[24:], l.dataOff)
	le.PutUint64(e[32:], uint64(len(im.Data)))
	se := b[headerSize+entrySize:]
	for i, kv := range im.Strings {
		le.PutUint64(se[16*i:], l.strTabOff+l.tab.offsets[kv.Key])
		le.PutUint64(se[16*i+8:], l.strTabOff+l.tab.offsets[kv.Value])
	}
	copy(b[l.strTabOff:], l.tab.data)
	return b
}

// ParseError reports malformed offload binary input: the byte offset of
// the blob in the parsed buffer and what is wrong with it.
type ParseError struct {
	Offset uint64 // offset of the blob's first byte in the parsed buffer
	Msg    string
}

// Error returns "offload binary at offset 0x..: <msg>".
func (e *ParseError) Error() string {
	return fmt.Sprintf("offload binary at offset %#x: %s", e.Offset, e.Msg)
}

// IsOffloadBinary reports whether data starts with the offload binary magic.
func IsOffloadBinary(data []byte) bool { return bytes.HasPrefix(data, magic[:]) }

// Parse reads one or more concatenated version 1 blobs that fill buf
// completely. It checks everything LLVM 22 checks and more: a 72-byte
// minimum size, Size a multiple of 8 and inside buf, the entry, the string
// entry array and the image inside the blob, and every key and value
// NUL-terminated inside the blob; all arithmetic is overflow-safe. Errors
// are *ParseError. Image.Strings holds every string entry in file order
// (use Get for LLVM's last-value-wins lookup); the strings share one copy of
// the blob's string bytes and Data aliases buf, so allocation stays
// proportional to len(buf).
func Parse(buf []byte) ([]Image, error) {
	var images []Image
	var off uint64
	for off < uint64(len(buf)) {
		im, size, err := parseBlob(buf[off:], off)
		if err != nil {
			return nil, err
		}
		images = append(images, im)
		off += size
	}
	if len(images) == 0 {
		return nil, &ParseError{0, "empty input"}
	}
	return images, nil
}

func parseBlob(b []byte, at uint64) (Image, uint64, error) {
	fail := func(format string, args ...any) (Image, uint64, error) {
		return Image{}, 0, &ParseError{at, fmt.Sprintf(format, args...)}
	}
	le := binary.LittleEndian
	avail := uint64(len(b))
	if avail < 4 || !IsOffloadBinary(b) {
		return fail("bad magic (want 10 ff 10 ad)")
	}
	if avail < headerSize+entrySize {
		return fail("truncated: %d bytes left, a blob needs at least %d", avail, headerSize+entrySize)
	}
	if v := le.Uint32(b[4:]); v != version {
		return fail("unsupported version %d (only version 1 is supported)", v)
	}
	size := le.Uint64(b[8:])
	entryOff := le.Uint64(b[16:])
	entSize := le.Uint64(b[24:])
	switch {
	case size > avail:
		return fail("size %#x runs past end of input (%#x bytes left)", size, avail)
	case size < headerSize+entrySize:
		return fail("size %#x smaller than header and entry (%#x)", size, headerSize+entrySize)
	case size%align != 0:
		return fail("size %#x not a multiple of %d", size, align)
	case entryOff > size-entrySize:
		return fail("entry offset %#x runs past end of blob", entryOff)
	case entSize > size-headerSize:
		return fail("entry size %#x larger than blob", entSize)
	}
	b = b[:size]
	e := b[entryOff:]
	im := Image{
		Kind:    ImageKind(le.Uint16(e[0:])),
		Offload: OffloadKind(le.Uint16(e[2:])),
		Flags:   le.Uint32(e[4:]),
	}
	strOff := le.Uint64(e[8:])
	numStr := le.Uint64(e[16:])
	imgOff := le.Uint64(e[24:])
	imgSize := le.Uint64(e[32:])
	if imgOff > size || imgSize > size-imgOff {
		return fail("image (offset %#x, size %#x) runs past end of blob (size %#x)", imgOff, imgSize, size)
	}
	if strOff > size || numStr > (size-strOff)/stringEntrySize {
		return fail("string entries (offset %#x, count %d) run past end of blob (size %#x)", strOff, numStr, size)
	}
	im.Data = b[imgOff : imgOff+imgSize : imgOff+imgSize]
	if numStr == 0 {
		return im, size, nil
	}
	// Find the NUL ending each key and value with one forward sweep over
	// the sorted distinct offsets (linear time), then copy the byte range
	// they use into a Go string once.
	entry := func(k uint64) uint64 { return le.Uint64(b[strOff+8*k:]) } // k-th key or value offset
	uniq := make([]uint64, 2*numStr)
	for k := range uniq {
		o := entry(uint64(k))
		if o >= size {
			return fail("string entry %d: %s offset %#x past end of blob", k/2, [2]string{"key", "value"}[k%2], o)
		}
		uniq[k] = o
	}
	slices.Sort(uniq)
	uniq = slices.Clip(slices.Compact(uniq))
	ends := make([]uint64, len(uniq))
	nul := int64(-1)
	for k, o := range uniq {
		if nul < int64(o) {
			n := bytes.IndexByte(b[o:], 0)
			if n < 0 {
				for i := uint64(0); ; i++ {
					if entry(i) == o {
						return fail("string entry %d: %s at offset %#x has no NUL terminator inside the blob", i/2, [2]string{"key", "value"}[i%2], o)
					}
				}
			}
			nul = int64(o) + int64(n)
		}
		ends[k] = uint64(nul)
	}
	lo, hi := uniq[0], slices.Max(ends)
	pool := string(b[lo:hi])
	str := func(o uint64) string {
		k, _ := slices.BinarySearch(uniq, o)
		return pool[o-lo : ends[k]-lo]
	}
	im.Strings = make([]KeyValue, numStr)
	for i := range im.Strings {
		im.Strings[i] = KeyValue{str(entry(uint64(2 * i))), str(entry(uint64(2*i + 1)))}
	}
	return im, size, nil
}
