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

// MarshalV2 serializes images as one offload binary of format version 2,
// the multi-entry layout of LLVM after version 22 (OffloadBinary::write):
// header, all entries, all 24-byte string entries, one shared string
// table, padding to 8, then the images back to back, the total padded to
// 8. offcc writes version 1 when it stands in for LLVM 22's tools; this is
// for reading tests and for tools that want the newer layout.
func MarshalV2(images []Image) []byte {
	var strs []string
	var numStr, imgTotal uint64
	for _, im := range images {
		for _, kv := range im.Strings {
			strs = append(strs, kv.Key, kv.Value)
		}
		numStr += uint64(len(im.Strings))
		imgTotal += uint64(len(im.Data))
	}
	tab := newStringTable(strs)
	entries := uint64(len(images))
	strTabOff := headerSize + entrySize*entries + stringEntryV2Size*numStr
	dataOff := alignTo(strTabOff+uint64(len(tab.data)), align)
	size := alignTo(dataOff+imgTotal, align)
	b := make([]byte, size)
	le := binary.LittleEndian
	copy(b, magic[:])
	le.PutUint32(b[4:], version2)
	le.PutUint64(b[8:], size)
	le.PutUint64(b[16:], headerSize)
	le.PutUint64(b[24:], entries)
	strEnt, img := headerSize+entrySize*entries, dataOff
	for i, im := range images {
		e := b[headerSize+entrySize*uint64(i):]
		le.PutUint16(e[0:], uint16(im.Kind))
		le.PutUint16(e[2:], uint16(im.Offload))
		le.PutUint32(e[4:], im.Flags)
		le.PutUint64(e[8:], strEnt)
		le.PutUint64(e[16:], uint64(len(im.Strings)))
		le.PutUint64(e[24:], img)
		le.PutUint64(e[32:], uint64(len(im.Data)))
		for _, kv := range im.Strings {
			le.PutUint64(b[strEnt:], strTabOff+tab.offsets[kv.Key])
			le.PutUint64(b[strEnt+8:], strTabOff+tab.offsets[kv.Value])
			le.PutUint64(b[strEnt+16:], uint64(len(kv.Value)))
			strEnt += stringEntryV2Size
		}
		img += uint64(copy(b[img:], im.Data))
	}
	copy(b[strTabOff:], tab.data)
	return b
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

// Blob is one offload binary as stored: where it starts in the parsed
// buffer, its Size field, its format version and its entries.
type Blob struct {
	Offset  uint64
	Size    uint64
	Version uint32
	Images  []Image
}

// Parse reads one or more concatenated blobs that fill buf completely and
// returns their images in order. See ParseBlobs.
func Parse(buf []byte) ([]Image, error) {
	blobs, err := ParseBlobs(buf)
	if err != nil {
		return nil, err
	}
	if len(blobs) == 1 {
		return blobs[0].Images, nil
	}
	var images []Image
	for _, b := range blobs {
		images = append(images, b.Images...)
	}
	return images, nil
}

// ParseBlobs reads one or more concatenated blobs that fill buf completely:
// version 1 (one entry, 16-byte string entries; what LLVM 22 writes) and
// version 2 (newer LLVM: EntriesCount entries sharing one string table,
// 24-byte string entries whose values carry their size). Each blob starts
// where the previous one's Size ends. It checks everything LLVM checks and
// more: a 72-byte minimum size, a version 1 Size that is a multiple of 8,
// the entries, string entry arrays and images inside the blob, and every
// key (and version 1 value) NUL-terminated inside the blob; all arithmetic
// is overflow-safe. Errors are *ParseError. Image.Strings holds the string
// entries in file order (use Get for LLVM's last-value-wins lookup); the
// strings of a blob share one copy of its string bytes and Data aliases
// buf, so allocation stays proportional to len(buf).
func ParseBlobs(buf []byte) ([]Blob, error) {
	var blobs []Blob
	var off uint64
	for off < uint64(len(buf)) {
		b, err := parseBlob(buf[off:], off)
		if err != nil {
			return nil, err
		}
		blobs = append(blobs, b)
		off += b.Size
	}
	if len(blobs) == 0 {
		return nil, &ParseError{0, "empty input"}
	}
	return blobs, nil
}

// Version 2 layout sizes.
const (
	version2          = 2
	stringEntryV2Size = 24
)

func parseBlob(b []byte, at uint64) (Blob, error) {
	fail := func(format string, args ...any) (Blob, error) {
		return Blob{}, &ParseError{at, fmt.Sprintf(format, args...)}
	}
	le := binary.LittleEndian
	avail := uint64(len(b))
	if avail < 4 || !IsOffloadBinary(b) {
		return fail("bad magic (want 10 ff 10 ad)")
	}
	if avail < headerSize+entrySize {
		return fail("truncated: %d bytes left, a blob needs at least %d", avail, headerSize+entrySize)
	}
	ver := le.Uint32(b[4:])
	if ver != version && ver != version2 {
		return fail("unsupported version %d (versions 1 and 2 are supported)", ver)
	}
	size := le.Uint64(b[8:])
	entriesOff := le.Uint64(b[16:])
	switch {
	case size > avail:
		return fail("size %#x runs past end of input (%#x bytes left)", size, avail)
	case size < headerSize+entrySize:
		return fail("size %#x smaller than header and entry (%#x)", size, headerSize+entrySize)
	case ver == version && size%align != 0:
		return fail("size %#x not a multiple of %d", size, align)
	}
	count, strEntSize := uint64(1), uint64(stringEntrySize)
	if ver == version {
		switch entSize := le.Uint64(b[24:]); {
		case entriesOff > size-entrySize:
			return fail("entry offset %#x runs past end of blob", entriesOff)
		case entSize > size-headerSize:
			return fail("entry size %#x larger than blob", entSize)
		}
	} else {
		count, strEntSize = le.Uint64(b[24:]), stringEntryV2Size
		if count > (size-headerSize)/entrySize || entriesOff > size-count*entrySize {
			return fail("entries (offset %#x, count %d) run past end of blob (size %#x)", entriesOff, count, size)
		}
	}
	b = b[:size]
	blob := Blob{Offset: at, Size: size, Version: ver, Images: make([]Image, count)}

	// entryStrings calls fn for each string entry of entry i, giving the
	// key offset, the value offset and the value size (^0 for a version 1
	// NUL-terminated value). The first pass has checked the arrays.
	const nulTerminated = ^uint64(0)
	entryStrings := func(i uint64, fn func(k, key, val, n uint64)) {
		e := b[entriesOff+i*entrySize:]
		strOff, numStr := le.Uint64(e[8:]), le.Uint64(e[16:])
		for k := uint64(0); k < numStr; k++ {
			se := b[strOff+k*strEntSize:]
			n := nulTerminated
			if ver != version {
				n = le.Uint64(se[16:])
			}
			fn(k, le.Uint64(se[0:]), le.Uint64(se[8:]), n)
		}
	}

	// Check every entry's image and string entry array, then every string
	// entry, collecting the offsets of the NUL-terminated strings.
	var total uint64
	for i := uint64(0); i < count; i++ {
		e := b[entriesOff+i*entrySize:]
		im := &blob.Images[i]
		im.Kind = ImageKind(le.Uint16(e[0:]))
		im.Offload = OffloadKind(le.Uint16(e[2:]))
		im.Flags = le.Uint32(e[4:])
		strOff := le.Uint64(e[8:])
		numStr := le.Uint64(e[16:])
		imgOff := le.Uint64(e[24:])
		imgSize := le.Uint64(e[32:])
		if imgOff > size || imgSize > size-imgOff {
			return fail("entry %d: image (offset %#x, size %#x) runs past end of blob (size %#x)", i, imgOff, imgSize, size)
		}
		if strOff > size || numStr > (size-strOff)/strEntSize {
			return fail("entry %d: string entries (offset %#x, count %d) run past end of blob (size %#x)", i, strOff, numStr, size)
		}
		im.Data = b[imgOff : imgOff+imgSize : imgOff+imgSize]
		total += numStr // at most size/16 per entry, and count <= size/40
	}
	if total > size/strEntSize {
		return fail("%d string entries in %d entries do not fit in the blob (size %#x)", total, count, size)
	}
	perEntry := uint64(1)
	if ver == version {
		perEntry = 2
	}
	starts := make([]uint64, 0, perEntry*total)
	var bad error
	for i := uint64(0); i < count && bad == nil; i++ {
		entryStrings(i, func(k, key, val, n uint64) {
			switch {
			case bad != nil:
			case key >= size:
				_, bad = fail("entry %d: string entry %d: key offset %#x past end of blob", i, k, key)
			case n == nulTerminated && val >= size:
				_, bad = fail("entry %d: string entry %d: value offset %#x past end of blob", i, k, val)
			case n != nulTerminated && (val > size || n > size-val):
				_, bad = fail("entry %d: string entry %d: value (offset %#x, size %#x) runs past end of blob", i, k, val, n)
			default:
				starts = append(starts, key)
				if n == nulTerminated {
					starts = append(starts, val)
				}
			}
		})
	}
	if bad != nil {
		return Blob{}, bad
	}
	if len(starts) == 0 {
		return blob, nil
	}

	// Find the NUL ending each NUL-terminated string with one forward sweep
	// over the sorted distinct offsets (linear time), then copy the byte
	// range all strings use into one Go string.
	slices.Sort(starts)
	starts = slices.Clip(slices.Compact(starts))
	ends := make([]uint64, len(starts))
	nul := int64(-1)
	for k, o := range starts {
		if nul < int64(o) {
			n := bytes.IndexByte(b[o:], 0)
			if n < 0 {
				return fail("string at offset %#x has no NUL terminator inside the blob", o)
			}
			nul = int64(o) + int64(n)
		}
		ends[k] = uint64(nul)
	}
	end := func(o, n uint64) uint64 {
		if n != nulTerminated {
			return o + n
		}
		k, _ := slices.BinarySearch(starts, o)
		return ends[k]
	}
	lo, hi := starts[0], slices.Max(ends)
	for i := uint64(0); i < count && ver != version; i++ {
		entryStrings(i, func(_, _, val, n uint64) { lo, hi = min(lo, val), max(hi, val+n) })
	}
	pool := string(b[lo:hi])
	str := func(o, n uint64) string { return pool[o-lo : end(o, n)-lo] }
	for i := uint64(0); i < count; i++ {
		var strs []KeyValue
		entryStrings(i, func(_, key, val, n uint64) {
			if strs == nil {
				strs = make([]KeyValue, 0, le.Uint64(b[entriesOff+i*entrySize+16:]))
			}
			strs = append(strs, KeyValue{str(key, nulTerminated), str(val, n)})
		})
		blob.Images[i].Strings = strs
	}
	return blob, nil
}
