package syclbin

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/offcc/offcc/packager"
)

// Encoding is the container a .syclbin file is written in.
type Encoding int

const (
	// EncodingV1 is a SYCLBIN v1 body in an OffloadBinary v1 envelope with
	// one entry (image kind 7 IMG_SYCLBIN, offload kind 8 OFK_SYCL, no
	// strings), what DPC++'s -fsyclbin writes.
	EncodingV1 Encoding = 1
	// EncodingV2 is DPC++'s version 2: one multi-entry OffloadBinary v2
	// whose IMG_SYCLBIN entries carry string keys (FORMATS.md §3.6).
	EncodingV2 Encoding = 2
)

// String returns "v1", "v2" or "encoding N".
func (e Encoding) String() string {
	switch e {
	case EncodingV1:
		return "v1"
	case EncodingV2:
		return "v2"
	}
	return "encoding " + strconv.Itoa(int(e))
}

// ImageKindSYCLBIN is IMG_SYCLBIN in intel/llvm (7); ImageKindSYCLBINOld
// (6) is accepted on read.
const (
	ImageKindSYCLBIN    packager.ImageKind = 7
	ImageKindSYCLBINOld packager.ImageKind = 6
)

// KernelNamesSet is the abstract module property set that lists the
// module's kernels, each as "<name>=1|1".
const KernelNamesSet = "SYCL/kernel names"

// Version-2 string keys and roles (FORMATS.md §3.6).
const (
	v2FormatKey   = "sycl_format_version"
	v2RoleKey     = "role"
	v2AMIndexKey  = "am_index"
	v2IRTypeKey   = "ir_type"
	v2TripleKey   = "triple"
	v2ArchKey     = "arch"
	v2FormatValue = "2"

	roleGlobal = "global_metadata"
	roleAM     = "am_metadata"
	roleIR     = "ir"
	roleNative = "native"
)

// flagMetadata is OIF_Metadata, the entry flag of metadata-only entries.
const flagMetadata = 1

// Sizes of the OffloadBinary structures IsFile and the v2 reader look at.
const (
	obHeaderSize = 32
	obEntrySize  = 40
)

// isSYCLBINKind reports whether k is IMG_SYCLBIN, current or old.
func isSYCLBINKind(k packager.ImageKind) bool {
	return k == ImageKindSYCLBIN || k == ImageKindSYCLBINOld
}

// StateName names a bundle state: "input", "object", "executable", or the
// decimal value for any other.
func StateName(s uint32) string {
	switch s {
	case StateInput:
		return "input"
	case StateObject:
		return "object"
	case StateExecutable:
		return "executable"
	}
	return strconv.FormatUint(uint64(s), 10)
}

// ParseState maps "input", "object" or "executable" to its bundle state.
func ParseState(s string) (uint32, error) {
	switch s {
	case "input":
		return StateInput, nil
	case "object":
		return StateObject, nil
	case "executable":
		return StateExecutable, nil
	}
	return 0, fmt.Errorf("unknown SYCLBIN state %q (want input, object or executable)", s)
}

// KernelNames returns the keys of the module metadata set "SYCL/kernel
// names" in stored order, or nil when the set is missing or empty.
func (m *AbstractModule) KernelNames() []string {
	s := m.Metadata.Set(KernelNamesSet)
	if s == nil || len(s.Properties) == 0 {
		return nil
	}
	names := make([]string, len(s.Properties))
	for i, p := range s.Properties {
		names[i] = p.Key
	}
	return names
}

// SetKernelNames replaces the module metadata set "SYCL/kernel names" with
// names, each as UINT32 value 1 ("<name>=1|1"), in order and without
// repeats. The set keeps its position, or is added last; no names remove
// it.
func (m *AbstractModule) SetKernelNames(names []string) {
	r := &m.Metadata
	i := 0
	for i < len(r.Sets) && r.Sets[i].Name != KernelNamesSet {
		i++
	}
	if len(names) == 0 {
		if i < len(r.Sets) {
			r.Sets = append(r.Sets[:i:i], r.Sets[i+1:]...)
		}
		return
	}
	props := make([]Property, 0, len(names))
	seen := make(map[string]bool, len(names))
	for _, n := range names {
		if !seen[n] {
			seen[n] = true
			props = append(props, Property{Key: n, Value: UInt32Value(1)})
		}
	}
	if i == len(r.Sets) {
		r.Sets = append(r.Sets, PropertySet{Name: KernelNamesSet})
	}
	r.Sets[i].Properties = props
}

// validate checks that every registry of f can be written as text that
// reads back the same, and that the counts fit the v1 header fields.
func (f *File) validate() error {
	if err := f.GlobalMetadata.Validate(); err != nil {
		return fmt.Errorf("global metadata: %v", err)
	}
	var nIR, nND uint64
	for i := range f.Modules {
		am := &f.Modules[i]
		if err := am.Metadata.Validate(); err != nil {
			return fmt.Errorf("abstract module %d metadata: %v", i, err)
		}
		for j := range am.IR {
			if err := am.IR[j].Metadata.Validate(); err != nil {
				return fmt.Errorf("abstract module %d IR module %d metadata: %v", i, j, err)
			}
		}
		for j := range am.Native {
			if err := am.Native[j].Metadata.Validate(); err != nil {
				return fmt.Errorf("abstract module %d native image %d metadata: %v", i, j, err)
			}
		}
		nIR += uint64(len(am.IR))
		nND += uint64(len(am.Native))
	}
	if uint64(len(f.Modules)) > math.MaxUint32 || nIR > math.MaxUint32 || nND > math.MaxUint32 {
		return fmt.Errorf("too many modules: %d abstract modules, %d IR modules, %d native images (at most %d each)", len(f.Modules), nIR, nND, uint32(math.MaxUint32))
	}
	return nil
}

// Encode writes f as a .syclbin file. EncodingV1 gives Marshal's body in a
// one-entry OffloadBinary v1 (ImageOffset 80, Size aligned to 8);
// EncodingV2 gives one OffloadBinary v2 with an entry per global, module,
// IR and native metadata (see FORMATS.md §3.6). f.Version is not written.
// It fails when a registry does not Validate or, for v2, a triple or arch
// holds a NUL byte.
func Encode(f *File, enc Encoding) ([]byte, error) {
	if enc != EncodingV1 && enc != EncodingV2 {
		return nil, fmt.Errorf("SYCLBIN: unknown encoding %d (want 1 or 2)", int(enc))
	}
	if err := f.validate(); err != nil {
		return nil, fmt.Errorf("SYCLBIN: %v", err)
	}
	if enc == EncodingV1 {
		return packager.Marshal([]packager.Image{{Kind: ImageKindSYCLBIN, Offload: packager.OffloadSYCL, Data: Marshal(f)}}), nil
	}
	return encodeV2(f)
}

// encodeV2 writes the multi-entry layout: global_metadata, then per
// abstract module am_metadata, its ir entries and its native entries.
func encodeV2(f *File) ([]byte, error) {
	n := 1
	for _, am := range f.Modules {
		n += 1 + len(am.IR) + len(am.Native)
	}
	images := make([]packager.Image, 0, n)
	entry := func(role string, flags uint32, data []byte, extra ...packager.KeyValue) {
		strs := make([]packager.KeyValue, 0, 2+len(extra))
		strs = append(strs, packager.KeyValue{Key: v2FormatKey, Value: v2FormatValue}, packager.KeyValue{Key: v2RoleKey, Value: role})
		images = append(images, packager.Image{Kind: ImageKindSYCLBIN, Offload: packager.OffloadSYCL, Flags: flags,
			Strings: append(strs, extra...), Data: data})
	}
	payload := func(md *PropertySetRegistry, raw []byte) []byte {
		text := md.Marshal()
		b := make([]byte, 8, 8+len(text)+len(raw))
		binary.LittleEndian.PutUint64(b, uint64(len(text)))
		return append(append(b, text...), raw...)
	}
	noNUL := func(s, what string, i, j int) error {
		if strings.IndexByte(s, 0) >= 0 {
			return fmt.Errorf("SYCLBIN: abstract module %d %s %d: %q holds a NUL byte, which an OffloadBinary v2 string cannot", i, what, j, s)
		}
		return nil
	}
	entry(roleGlobal, flagMetadata, f.GlobalMetadata.Marshal())
	for i := range f.Modules {
		am := &f.Modules[i]
		idx := packager.KeyValue{Key: v2AMIndexKey, Value: strconv.Itoa(i)}
		entry(roleAM, flagMetadata, am.Metadata.Marshal(), idx)
		for j := range am.IR {
			m := &am.IR[j]
			kv := []packager.KeyValue{idx}
			if t, ok := m.Type(); ok {
				kv = append(kv, packager.KeyValue{Key: v2IRTypeKey, Value: strconv.FormatUint(uint64(t), 10)})
			}
			if t, ok := m.Target(); ok {
				if err := noNUL(t, "target of IR module", i, j); err != nil {
					return nil, err
				}
				kv = append(kv, packager.KeyValue{Key: v2TripleKey, Value: t})
			}
			entry(roleIR, 0, payload(&m.Metadata, m.Data), kv...)
		}
		for j := range am.Native {
			m := &am.Native[j]
			kv := []packager.KeyValue{idx}
			if a, ok := m.Arch(); ok {
				if err := noNUL(a, "arch of native image", i, j); err != nil {
					return nil, err
				}
				kv = append(kv, packager.KeyValue{Key: v2ArchKey, Value: a})
			}
			if t, ok := m.Target(); ok {
				if err := noNUL(t, "target of native image", i, j); err != nil {
					return nil, err
				}
				kv = append(kv, packager.KeyValue{Key: v2TripleKey, Value: t})
			}
			entry(roleNative, 0, payload(&m.Metadata, m.Data), kv...)
		}
	}
	return packager.MarshalV2(images), nil
}

// IsFile reports whether data looks like a .syclbin file in any encoding:
// a bare SYCLBIN body, or an OffloadBinary whose first entry has image
// kind 7, or kind 6 with a SYCLBIN body or a v2 "role" key. It reads only
// the headers, so a true result does not promise that Decode succeeds.
func IsFile(data []byte) bool {
	if IsSYCLBIN(data) {
		return true
	}
	n := uint64(len(data))
	if !packager.IsOffloadBinary(data) || n < obHeaderSize+obEntrySize {
		return false
	}
	le := binary.LittleEndian
	ver := le.Uint32(data[4:])
	entOff := le.Uint64(data[16:])
	if (ver != 1 && ver != 2) || entOff > n-obEntrySize {
		return false
	}
	e := data[entOff : entOff+obEntrySize]
	switch packager.ImageKind(le.Uint16(e)) {
	case ImageKindSYCLBIN:
		return true
	case ImageKindSYCLBINOld:
	default:
		return false
	}
	if off, size := le.Uint64(e[24:]), le.Uint64(e[32:]); size >= 4 && off <= n-4 && IsSYCLBIN(data[off:]) {
		return true
	}
	// A v2 entry of the old kind: look for its "role" key.
	strOff, numStr := le.Uint64(e[8:]), le.Uint64(e[16:])
	strSize := uint64(16)
	if ver == 2 {
		strSize = 24
	}
	if strOff > n || numStr > (n-strOff)/strSize {
		return false
	}
	key := []byte(v2RoleKey + "\x00")
	for k := uint64(0); k < numStr; k++ {
		ko := le.Uint64(data[strOff+k*strSize:])
		if ko <= n && uint64(len(key)) <= n-ko && string(data[ko:ko+uint64(len(key))]) == string(key) {
			return true
		}
	}
	return false
}

// Decode reads a .syclbin file: a bare SYCLBIN v1 body, a v1 body in an
// OffloadBinary envelope (first entry's image kind 7 or 6, any offload
// kind), or a v2 multi-entry OffloadBinary. It returns the file and the
// encoding it was read from; a bare body and the runtime's one-entry
// OffloadBinary v2 around a v1 body read as EncodingV1. Errors are one
// line and say where; the result's byte slices alias data.
//
// A v1 envelope must hold exactly one entry. In a v2 file every entry must
// have image kind 7 or 6, a known role and, if present,
// sycl_format_version "2"; there must be exactly one global_metadata
// entry, one am_metadata entry per abstract module index 0..N-1, and ir
// and native entries may only name those indices. As in intel/llvm's
// reader, the metadata in the entry images is authoritative: the
// duplicated ir_type, triple and arch strings are not read. File.Version
// is 1 for a v1 body and 2 for a v2 file.
func Decode(data []byte) (*File, Encoding, error) {
	if IsSYCLBIN(data) {
		f, err := Parse(data)
		if err != nil {
			return nil, 0, err
		}
		return f, EncodingV1, nil
	}
	if !packager.IsOffloadBinary(data) {
		if len(data) < 4 {
			return nil, 0, fmt.Errorf("not a SYCLBIN file: %d bytes, too short for a magic number", len(data))
		}
		return nil, 0, fmt.Errorf("not a SYCLBIN file: magic % x is neither SYCLBIN's (49 42 59 53) nor an offload binary's (10 ff 10 ad)", data[:4])
	}
	blobs, err := packager.ParseBlobs(data)
	if err != nil {
		return nil, 0, fmt.Errorf("SYCLBIN envelope: %w", err)
	}
	b := &blobs[0]
	if len(b.Images) == 0 {
		return nil, 0, fmt.Errorf("SYCLBIN envelope: offload binary v%d has no entries", b.Version)
	}
	first := &b.Images[0]
	if !isSYCLBINKind(first.Kind) {
		return nil, 0, fmt.Errorf("not a SYCLBIN file: offload binary entry 0 has image kind %d, not IMG_SYCLBIN (7)", first.Kind)
	}
	if IsSYCLBIN(first.Data) {
		if len(blobs) > 1 || len(b.Images) > 1 {
			return nil, 0, fmt.Errorf("SYCLBIN envelope: offload binary holds %d entries; a v1 SYCLBIN file holds one", countImages(blobs))
		}
		f, err := Parse(first.Data)
		if err != nil {
			return nil, 0, fmt.Errorf("offload binary image at offset %#x: %w", imageOffset(data, 0), err)
		}
		return f, EncodingV1, nil
	}
	if b.Version != 2 {
		return nil, 0, fmt.Errorf("SYCLBIN envelope: offload binary v%d entry 0 at offset %#x holds no SYCLBIN body (no magic 49 42 59 53); only offload binary v2 holds a multi-entry SYCLBIN", b.Version, imageOffset(data, 0))
	}
	if len(blobs) > 1 {
		return nil, 0, fmt.Errorf("SYCLBIN envelope: %d bytes after the SYCLBIN v2 offload binary (size %#x)", uint64(len(data))-b.Size, b.Size)
	}
	f, err := decodeV2(data, b.Images)
	if err != nil {
		return nil, 0, err
	}
	return f, EncodingV2, nil
}

func countImages(blobs []packager.Blob) int {
	n := 0
	for _, b := range blobs {
		n += len(b.Images)
	}
	return n
}

// entryOffset returns where entry i of the (checked) offload binary at the
// start of data begins.
func entryOffset(data []byte, i int) uint64 {
	return binary.LittleEndian.Uint64(data[16:]) + obEntrySize*uint64(i)
}

// imageOffset returns where entry i's image starts in data.
func imageOffset(data []byte, i int) uint64 {
	return binary.LittleEndian.Uint64(data[entryOffset(data, i)+24:])
}

// v2Entry is what the first pass learns about one v2 entry.
type v2Entry struct {
	role string
	am   uint64 // am_index; unused for global_metadata
}

func decodeV2(data []byte, images []packager.Image) (*File, error) {
	entries := make([]v2Entry, len(images))
	fail := func(i int, format string, args ...any) error {
		s := fmt.Sprintf("v2 entry %d", i)
		if r := entries[i].role; r != "" {
			s += " (" + r + ")"
		}
		return &FormatError{Structure: s, Offset: entryOffset(data, i), Reason: fmt.Sprintf(format, args...)}
	}
	global, nAM := -1, uint64(0)
	for i := range images {
		im := &images[i]
		if !isSYCLBINKind(im.Kind) {
			return nil, fail(i, "image kind %d is not IMG_SYCLBIN (7)", im.Kind)
		}
		if v, ok := im.Get(v2FormatKey); ok && v != v2FormatValue {
			return nil, fail(i, "unsupported %s %q (want %q)", v2FormatKey, v, v2FormatValue)
		}
		role, ok := im.Get(v2RoleKey)
		switch {
		case !ok:
			return nil, fail(i, "no %q key", v2RoleKey)
		case role == roleGlobal:
			entries[i].role = role
			if global >= 0 {
				return nil, fail(i, "duplicate global metadata: entry %d is global_metadata too", global)
			}
			global = i
			continue
		case role == roleAM || role == roleIR || role == roleNative:
			entries[i].role = role
		default:
			return nil, fail(i, "unknown role %q (want global_metadata, am_metadata, ir or native)", quoteMax(role))
		}
		s, ok := im.Get(v2AMIndexKey)
		if !ok {
			return nil, fail(i, "no %q key", v2AMIndexKey)
		}
		idx, err := parseDecimal([]byte(s))
		if err != nil {
			return nil, fail(i, "invalid %s %q", v2AMIndexKey, quoteMax(s))
		}
		entries[i].am = idx
		if role == roleAM {
			nAM++
		}
	}
	if global < 0 {
		return nil, &FormatError{Structure: "v2 offload binary", Offset: 0, Reason: "no global_metadata entry"}
	}
	// Each abstract module index 0..nAM-1 has exactly one am_metadata
	// entry; ir and native entries name one of them.
	amEntry := make([]int, nAM)
	for i := range amEntry {
		amEntry[i] = -1
	}
	for i, e := range entries {
		if e.role == roleGlobal {
			continue
		}
		if e.am >= nAM {
			return nil, fail(i, "am_index %d out of range: the file has %d am_metadata entries", e.am, nAM)
		}
		if e.role == roleAM {
			if prev := amEntry[e.am]; prev >= 0 {
				return nil, fail(i, "duplicate am_metadata for am_index %d (entry %d has it too)", e.am, prev)
			}
			amEntry[e.am] = i
		}
	}

	registry := func(i int, b []byte, at uint64) (PropertySetRegistry, error) {
		r, err := ParsePropertySets(b)
		if err != nil {
			fe := fail(i, "metadata at offset %#x", at).(*FormatError)
			fe.Err = err
			return PropertySetRegistry{}, fe
		}
		return r, nil
	}
	f := &File{Version: 2, Modules: make([]AbstractModule, nAM)}
	var err error
	if f.GlobalMetadata, err = registry(global, images[global].Data, imageOffset(data, global)); err != nil {
		return nil, err
	}
	for i, e := range entries {
		im := &images[i]
		at := imageOffset(data, i)
		switch e.role {
		case roleAM:
			if f.Modules[e.am].Metadata, err = registry(i, im.Data, at); err != nil {
				return nil, err
			}
		case roleIR, roleNative:
			n := uint64(len(im.Data))
			if n < 8 {
				return nil, fail(i, "image has %d bytes, too short for its 8-byte metadata size", n)
			}
			mdSize := binary.LittleEndian.Uint64(im.Data)
			if mdSize > n-8 {
				return nil, fail(i, "metadata size %#x runs past the end of the image (%#x bytes after the size)", mdSize, n-8)
			}
			md, err := registry(i, im.Data[8:8+mdSize], at+8)
			if err != nil {
				return nil, err
			}
			raw := im.Data[8+mdSize : n : n]
			am := &f.Modules[e.am]
			if e.role == roleIR {
				am.IR = append(am.IR, IRModule{Metadata: md, Data: raw})
			} else {
				am.Native = append(am.Native, NativeImage{Metadata: md, Data: raw})
			}
		}
	}
	return f, nil
}

// quoteMax shortens s for an error message.
func quoteMax(s string) string {
	if len(s) > maxQuoted {
		return s[:maxQuoted] + "..."
	}
	return s
}
