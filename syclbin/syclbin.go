// Package syclbin reads and writes intel/llvm's SYCLBIN format: the
// version 1 body (magic "IBYS" on disk, "SYBI" in the documentation), the
// .syclbin files around it (the body in an OffloadBinary envelope, or the
// version 2 multi-entry OffloadBinary; see Encoding), and the property-set
// registry text that holds all of its metadata.
//
// Parse and Marshal handle a bare body; Decode and Encode whole .syclbin
// files. Parse checks every size, offset and index against the input with
// overflow-safe 64-bit arithmetic and never allocates more than the input
// size can justify; the Data slices it returns alias the input. Marshal
// writes the layout LLVM's writer produces.
//
// The reference is FORMATS.md §1 and §3 and intel/llvm's
// llvm/lib/Object/SYCLBIN.cpp, llvm/lib/Support/PropertySetIO.cpp and
// llvm/lib/Support/Base64.cpp.
package syclbin

import (
	"encoding/binary"
	"fmt"
)

// Magic is the SYCLBIN magic number; it is stored little-endian, so a file
// starts with the bytes 49 42 59 53 ("IBYS").
const Magic uint32 = 0x53594249

// Version is the SYCLBIN body version this package reads and writes.
const Version uint32 = 1

// Sizes of the fixed-size headers.
const (
	FileHeaderSize           = 56
	AbstractModuleHeaderSize = 32
	IRModuleHeaderSize       = 32
	NativeImageHeaderSize    = 32
)

// Predefined property-set names and keys (FORMATS.md §3.5).
const (
	GlobalMetadataSet      = "SYCLBIN/global metadata"
	IRModuleMetadataSet    = "SYCLBIN/ir module metadata"
	NativeImageMetadataSet = "SYCLBIN/native device code image metadata"

	StateKey  = "state"  // UINT32 in GlobalMetadataSet
	TypeKey   = "type"   // UINT32 in IRModuleMetadataSet
	TargetKey = "target" // BYTE_ARRAY in IRModuleMetadataSet and NativeImageMetadataSet
	ArchKey   = "arch"   // BYTE_ARRAY in NativeImageMetadataSet
)

// Bundle states stored under GlobalMetadataSet/StateKey.
const (
	StateInput      uint32 = 0
	StateObject     uint32 = 1
	StateExecutable uint32 = 2
)

// IR module types stored under IRModuleMetadataSet/TypeKey.
const (
	IRTypeSPIRV  uint32 = 0
	IRTypePTX    uint32 = 1
	IRTypeAMDGCN uint32 = 2
)

// IsSYCLBIN reports whether b starts with the SYCLBIN magic bytes 49 42 59 53.
func IsSYCLBIN(b []byte) bool {
	return len(b) >= 4 && binary.LittleEndian.Uint32(b) == Magic
}

// File is a parsed SYCLBIN body.
type File struct {
	Version        uint32 // as read: 1 for a v1 body, 2 for a v2 file; Marshal and Encode do not write it
	GlobalMetadata PropertySetRegistry
	Modules        []AbstractModule
}

// State returns the bundle state from the global metadata
// (GlobalMetadataSet/StateKey), if present as a UINT32.
func (f *File) State() (uint32, bool) {
	return getUInt32(&f.GlobalMetadata, GlobalMetadataSet, StateKey)
}

// SetState stores the bundle state in the global metadata.
func (f *File) SetState(state uint32) {
	f.GlobalMetadata.Add(GlobalMetadataSet, StateKey, UInt32Value(state))
}

// AbstractModule is a group of device images sharing properties such as
// kernel names. Its metadata must not contain the SYCLBIN/* sets.
type AbstractModule struct {
	Metadata PropertySetRegistry
	IR       []IRModule
	Native   []NativeImage
}

// IRModule is device code in an intermediate representation (e.g. SPIR-V).
type IRModule struct {
	Metadata PropertySetRegistry
	Data     []byte
}

// NewIRModule returns an IR module whose metadata holds type and then
// target, in LLVM's write order.
func NewIRModule(irType uint32, target string, data []byte) IRModule {
	m := IRModule{Data: data}
	m.Metadata.Add(IRModuleMetadataSet, TypeKey, UInt32Value(irType))
	m.Metadata.Add(IRModuleMetadataSet, TargetKey, StringValue(target))
	return m
}

// Type returns the IR type (IRTypeSPIRV, ...) from the module's metadata.
func (m *IRModule) Type() (uint32, bool) { return getUInt32(&m.Metadata, IRModuleMetadataSet, TypeKey) }

// Target returns the target triple from the module's metadata. Files from
// mid-2025 compilers lack it.
func (m *IRModule) Target() (string, bool) {
	return getString(&m.Metadata, IRModuleMetadataSet, TargetKey)
}

// NativeImage is device code compiled ahead of time for one architecture.
type NativeImage struct {
	Metadata PropertySetRegistry
	Data     []byte
}

// NewNativeImage returns a native image whose metadata holds arch and then
// target, in LLVM's write order.
func NewNativeImage(arch, target string, data []byte) NativeImage {
	m := NativeImage{Data: data}
	m.Metadata.Add(NativeImageMetadataSet, ArchKey, StringValue(arch))
	m.Metadata.Add(NativeImageMetadataSet, TargetKey, StringValue(target))
	return m
}

// Arch returns the architecture string (may be empty) from the metadata.
func (m *NativeImage) Arch() (string, bool) {
	return getString(&m.Metadata, NativeImageMetadataSet, ArchKey)
}

// Target returns the target triple from the metadata; the SYCL runtime
// requires it.
func (m *NativeImage) Target() (string, bool) {
	return getString(&m.Metadata, NativeImageMetadataSet, TargetKey)
}

func getUInt32(r *PropertySetRegistry, set, key string) (uint32, bool) {
	v, ok := r.Get(set, key)
	if !ok || v.Type != TypeUInt32 {
		return 0, false
	}
	return v.UInt32, true
}

func getString(r *PropertySetRegistry, set, key string) (string, bool) {
	v, ok := r.Get(set, key)
	if !ok || v.Type != TypeByteArray {
		return "", false
	}
	return string(v.Bytes), true
}

// FormatError reports a malformed SYCLBIN body. Offset is the absolute byte
// offset in the input of the structure named by Structure.
type FormatError struct {
	Structure string // e.g. "IR module header 2"
	Offset    uint64
	Reason    string
	Err       error // underlying error (e.g. *PropertySetError), if any
}

func (e *FormatError) Error() string {
	s := fmt.Sprintf("SYCLBIN %s at offset %#x: %s", e.Structure, e.Offset, e.Reason)
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *FormatError) Unwrap() error { return e.Err }

// inTable reports whether [off, off+size) lies within a table of tableSize
// bytes, without overflow.
func inTable(off, size, tableSize uint64) bool {
	return off <= tableSize && size <= tableSize-off
}

// addOK returns a+b and whether it did not overflow.
func addOK(a, b uint64) (uint64, bool) {
	s := a + b
	return s, s >= a
}

type parser struct {
	b        []byte
	md, bin  []byte // the metadata and binary tables (unpadded)
	mdStart  uint64 // absolute offset of the metadata table
	binStart uint64 // absolute offset of the binary table
	mdParsed uint64 // bytes of metadata parsed so far
}

// metadata parses the metadata blob [off, off+size) declared by the
// structure what at absolute offset at.
func (p *parser) metadata(what string, at, off, size uint64) (PropertySetRegistry, error) {
	if !inTable(off, size, uint64(len(p.md))) {
		return PropertySetRegistry{}, &FormatError{Structure: what, Offset: at,
			Reason: fmt.Sprintf("metadata (offset %#x, size %#x) runs past end of metadata table (%#x bytes)", off, size, len(p.md))}
	}
	// Distinct structures must not share metadata bytes: the writer lays
	// blobs out without overlap, and overlapping blobs would let a small
	// file make the parser do (and allocate for) the same work many times.
	p.mdParsed += size // cannot overflow: each size <= len(md) and at most len(b)/32+1 blobs
	if p.mdParsed > uint64(len(p.md)) {
		return PropertySetRegistry{}, &FormatError{Structure: what, Offset: at,
			Reason: fmt.Sprintf("metadata (offset %#x, size %#x) overlaps other metadata: %#x bytes referenced, table has %#x", off, size, p.mdParsed, len(p.md))}
	}
	r, err := ParsePropertySets(p.md[off : off+size])
	if err != nil {
		return PropertySetRegistry{}, &FormatError{Structure: what, Offset: at,
			Reason: fmt.Sprintf("metadata at table offset %#x (file offset %#x)", off, p.mdStart+off), Err: err}
	}
	return r, nil
}

// blob returns the binary-table bytes [off, off+size) declared by what.
func (p *parser) blob(what, name string, at, off, size uint64) ([]byte, error) {
	if !inTable(off, size, uint64(len(p.bin))) {
		return nil, &FormatError{Structure: what, Offset: at,
			Reason: fmt.Sprintf("%s (offset %#x, size %#x) run past end of binary table (%#x bytes)", name, off, size, len(p.bin))}
	}
	return p.bin[off : off+size : off+size], nil
}

// Parse parses a bare SYCLBIN v1 body (no OffloadBinary envelope).
//
// Besides LLVM's reader checks (size, magic, version <= 1, tables inside the
// input, every blob inside its table, every metadata blob a valid registry),
// Parse requires each abstract module's IR and native index ranges to lie
// within the header arrays, the per-module counts to sum to at most the file
// header's totals, and metadata blobs not to overlap. IR and native headers
// that no abstract module references are ignored, as in LLVM. Modules whose
// index ranges overlap (one LLVM writer revision did not advance the
// indices) share the parsed metadata of the common headers.
func Parse(b []byte) (*File, error) {
	n := uint64(len(b))
	if n < FileHeaderSize {
		return nil, &FormatError{Structure: "file header", Offset: 0,
			Reason: fmt.Sprintf("input has %d bytes, need at least %d", n, FileHeaderSize)}
	}
	le := binary.LittleEndian
	if m := le.Uint32(b); m != Magic {
		return nil, &FormatError{Structure: "file header", Offset: 0, Reason: fmt.Sprintf("incorrect magic number %#08x", m)}
	}
	f := &File{Version: le.Uint32(b[4:])}
	if f.Version > Version {
		return nil, &FormatError{Structure: "file header", Offset: 4, Reason: fmt.Sprintf("unsupported version %d", f.Version)}
	}
	amCount := uint64(le.Uint32(b[8:]))
	irCount := uint64(le.Uint32(b[12:]))
	ndCount := uint64(le.Uint32(b[16:]))
	mdSize := le.Uint64(b[24:])
	binSize := le.Uint64(b[32:])
	gOff := le.Uint64(b[40:])
	gSize := le.Uint64(b[48:])

	headerBlock := FileHeaderSize + 32*(amCount+irCount+ndCount) // < 2^39, no overflow
	alignedMD, ok1 := addOK(mdSize, 7)
	alignedMD &^= 7
	end, ok2 := addOK(headerBlock, alignedMD)
	end, ok3 := addOK(end, binSize)
	if !ok1 || !ok2 || !ok3 || end > n {
		return nil, &FormatError{Structure: "file header", Offset: 0,
			Reason: fmt.Sprintf("headers (%#x bytes for %d abstract modules, %d IR modules, %d native images) + metadata table (%#x bytes, padded to 8) + binary table (%#x bytes) exceed input size %#x",
				headerBlock, amCount, irCount, ndCount, mdSize, binSize, n)}
	}
	p := &parser{b: b, mdStart: headerBlock, binStart: headerBlock + alignedMD}
	p.md = b[p.mdStart : p.mdStart+mdSize]
	p.bin = b[p.binStart : p.binStart+binSize]

	var err error
	if f.GlobalMetadata, err = p.metadata("global metadata", 40, gOff, gSize); err != nil {
		return nil, err
	}

	irBase := FileHeaderSize + 32*amCount
	ndBase := irBase + 32*irCount
	// IR module and native image headers share one shape: metadata, then
	// bytes in the binary table. Headers several modules point at are
	// parsed once.
	type part struct {
		Metadata PropertySetRegistry
		Data     []byte
	}
	irCache := make([]*part, irCount)
	ndCache := make([]*part, ndCount)
	header := func(cache []*part, base, idx uint64, what, bytesWhat string) (*part, error) {
		if cache[idx] != nil {
			return cache[idx], nil
		}
		hat := base + 32*idx
		hh := b[hat : hat+32]
		hwhat := fmt.Sprintf("%s %d", what, idx)
		m := new(part)
		var err error
		if m.Metadata, err = p.metadata(hwhat, hat, le.Uint64(hh), le.Uint64(hh[8:])); err != nil {
			return nil, err
		}
		if m.Data, err = p.blob(hwhat, bytesWhat, hat, le.Uint64(hh[16:]), le.Uint64(hh[24:])); err != nil {
			return nil, err
		}
		cache[idx] = m
		return m, nil
	}
	var irRefs, ndRefs uint64

	f.Modules = make([]AbstractModule, amCount)
	for i := range f.Modules {
		at := FileHeaderSize + 32*uint64(i)
		h := b[at : at+32]
		what := fmt.Sprintf("abstract module header %d", i)
		am := &f.Modules[i]
		if am.Metadata, err = p.metadata(what, at, le.Uint64(h), le.Uint64(h[8:])); err != nil {
			return nil, err
		}
		nIR, firstIR := uint64(le.Uint32(h[16:])), uint64(le.Uint32(h[20:]))
		nND, firstND := uint64(le.Uint32(h[24:])), uint64(le.Uint32(h[28:]))
		if !inTable(firstIR, nIR, irCount) {
			return nil, &FormatError{Structure: what, Offset: at,
				Reason: fmt.Sprintf("IR modules %d..%d (index %d, count %d) outside the %d IR module headers", firstIR, firstIR+nIR, firstIR, nIR, irCount)}
		}
		if !inTable(firstND, nND, ndCount) {
			return nil, &FormatError{Structure: what, Offset: at,
				Reason: fmt.Sprintf("native images %d..%d (index %d, count %d) outside the %d native image headers", firstND, firstND+nND, firstND, nND, ndCount)}
		}
		if irRefs += nIR; irRefs > irCount {
			return nil, &FormatError{Structure: what, Offset: at,
				Reason: fmt.Sprintf("abstract modules 0..%d claim %d IR modules, file header has %d", i, irRefs, irCount)}
		}
		if ndRefs += nND; ndRefs > ndCount {
			return nil, &FormatError{Structure: what, Offset: at,
				Reason: fmt.Sprintf("abstract modules 0..%d claim %d native images, file header has %d", i, ndRefs, ndCount)}
		}
		if nIR > 0 {
			am.IR = make([]IRModule, nIR)
		}
		for j := range am.IR {
			m, err := header(irCache, irBase, firstIR+uint64(j), "IR module header", "raw IR bytes")
			if err != nil {
				return nil, err
			}
			am.IR[j] = IRModule(*m)
		}
		if nND > 0 {
			am.Native = make([]NativeImage, nND)
		}
		for j := range am.Native {
			m, err := header(ndCache, ndBase, firstND+uint64(j), "native device code image header", "native image bytes")
			if err != nil {
				return nil, err
			}
			am.Native[j] = NativeImage(*m)
		}
	}
	return f, nil
}

// Marshal writes f as a SYCLBIN v1 body the way LLVM's writer lays it out:
// the file header (padding field zeroed, version 1), abstract module headers,
// all IR module headers in module order, all native image headers; then the
// metadata table (global, each module's, each IR module's, each native
// image's metadata, without gaps) zero-padded to 8, then the binary table (all
// IR bytes in module order, then all native bytes) zero-padded to 8. The
// index fields are running indices. The header's table sizes are unpadded.
//
// Older LLVM readers reject an empty metadata blob, so abstract modules
// should carry at least one set (e.g. "SYCL/kernel names").
func Marshal(f *File) []byte {
	var nIR, nND int
	for _, am := range f.Modules {
		nIR += len(am.IR)
		nND += len(am.Native)
	}
	var md []byte
	type span struct{ off, size uint64 }
	addMD := func(r *PropertySetRegistry) span {
		off := uint64(len(md))
		md = append(md, r.Marshal()...)
		return span{off, uint64(len(md)) - off}
	}
	global := addMD(&f.GlobalMetadata)
	amMD := make([]span, len(f.Modules))
	for i := range f.Modules {
		amMD[i] = addMD(&f.Modules[i].Metadata)
	}
	irMD := make([]span, 0, nIR)
	ndMD := make([]span, 0, nND)
	for i := range f.Modules {
		for j := range f.Modules[i].IR {
			irMD = append(irMD, addMD(&f.Modules[i].IR[j].Metadata))
		}
	}
	for i := range f.Modules {
		for j := range f.Modules[i].Native {
			ndMD = append(ndMD, addMD(&f.Modules[i].Native[j].Metadata))
		}
	}
	var binSize uint64
	for _, am := range f.Modules {
		for _, m := range am.IR {
			binSize += uint64(len(m.Data))
		}
		for _, m := range am.Native {
			binSize += uint64(len(m.Data))
		}
	}
	headerBlock := FileHeaderSize + 32*(len(f.Modules)+nIR+nND)
	total := uint64(headerBlock) + align8(uint64(len(md))) + align8(binSize)
	out := make([]byte, 0, total)
	le := binary.LittleEndian
	out = le.AppendUint32(out, Magic)
	out = le.AppendUint32(out, Version)
	out = le.AppendUint32(out, uint32(len(f.Modules)))
	out = le.AppendUint32(out, uint32(nIR))
	out = le.AppendUint32(out, uint32(nND))
	out = le.AppendUint32(out, 0) // padding
	out = le.AppendUint64(out, uint64(len(md)))
	out = le.AppendUint64(out, binSize)
	out = le.AppendUint64(out, global.off)
	out = le.AppendUint64(out, global.size)
	var irIdx, ndIdx int
	for i, am := range f.Modules {
		out = le.AppendUint64(out, amMD[i].off)
		out = le.AppendUint64(out, amMD[i].size)
		out = le.AppendUint32(out, uint32(len(am.IR)))
		out = le.AppendUint32(out, uint32(irIdx))
		out = le.AppendUint32(out, uint32(len(am.Native)))
		out = le.AppendUint32(out, uint32(ndIdx))
		irIdx += len(am.IR)
		ndIdx += len(am.Native)
	}
	var binOff uint64
	k := 0
	for _, am := range f.Modules {
		for _, m := range am.IR {
			out = le.AppendUint64(out, irMD[k].off)
			out = le.AppendUint64(out, irMD[k].size)
			out = le.AppendUint64(out, binOff)
			out = le.AppendUint64(out, uint64(len(m.Data)))
			binOff += uint64(len(m.Data))
			k++
		}
	}
	k = 0
	for _, am := range f.Modules {
		for _, m := range am.Native {
			out = le.AppendUint64(out, ndMD[k].off)
			out = le.AppendUint64(out, ndMD[k].size)
			out = le.AppendUint64(out, binOff)
			out = le.AppendUint64(out, uint64(len(m.Data)))
			binOff += uint64(len(m.Data))
			k++
		}
	}
	out = append(out, md...)
	out = pad8(out, len(md))
	for _, am := range f.Modules {
		for _, m := range am.IR {
			out = append(out, m.Data...)
		}
	}
	for _, am := range f.Modules {
		for _, m := range am.Native {
			out = append(out, m.Data...)
		}
	}
	out = pad8(out, int(binSize%8))
	return out
}

func align8(n uint64) uint64 { return (n + 7) &^ 7 }

// pad8 appends zeros so that a part of length n ends on a multiple of 8.
func pad8(out []byte, n int) []byte {
	for ; n%8 != 0; n++ {
		out = append(out, 0)
	}
	return out
}
