package poclbin

import (
	"bytes"
	"encoding/binary"
	"fmt"
)

// ProgramMagic starts every pocl program binary: "poclbin" and a NUL.
const ProgramMagic = "poclbin\x00"

// Program binary format versions. pocl accepts every version from
// MinProgramVersion up and has no upper bound: it reads a newer binary with
// its own layout and misreads or crashes, so a writer must write the version
// the pocl that loads the binary writes itself.
const (
	ProgramVersion        = 12 // what current pocl (4.0 and later) writes: the newest layout known here
	MinProgramVersion     = 9  // the oldest version pocl (and ParseProgram) accepts
	DefaultProgramVersion = 9  // what pocl 3.1 (Debian 12) reads and writes: MarshalProgram's default
)

// BuildHashSize is the size of the raw build-hash field (SHA1_digest_t: 40
// hex characters and a NUL).
const BuildHashSize = 41

// Header flags (Program.Flags). Bits 32–63 hold the cl_program_binary_type.
const (
	FlagFlushDenorms     uint64 = 1 << 0
	FlagProgramScopeVars uint64 = 1 << 1 // ProgramScopeVarBytes is present; v10+ writers always set it
)

// KnownFlags returns the header flags that pocl's format version knows: flush
// denorms and the binary type (bits 32–63) from version 9, program-scope
// variables from version 10.
func KnownFlags(version uint32) uint64 {
	known := FlagFlushDenorms | uint64(0xffffffff)<<32
	if version >= 10 {
		known |= FlagProgramScopeVars
	}
	return known
}

// Kernel record flags (Kernel.KernelFlags, v11+).
const (
	KernelHasWorkGroupMeta    uint32 = 1 << 1
	KernelHasSubGroupMeta     uint32 = 1 << 2
	KernelHasReqdSubGroupSize uint32 = 1 << 3
)

// BinaryType is OpenCL's cl_program_binary_type, stored in flag bits 32–63.
type BinaryType uint32

// Binary types.
const (
	BinaryTypeNone           BinaryType = 0
	BinaryTypeCompiledObject BinaryType = 1
	BinaryTypeLibrary        BinaryType = 2
	BinaryTypeExecutable     BinaryType = 4
)

func (t BinaryType) String() string {
	switch t {
	case BinaryTypeNone:
		return "none"
	case BinaryTypeCompiledObject:
		return "compiled object"
	case BinaryTypeLibrary:
		return "library"
	case BinaryTypeExecutable:
		return "executable"
	}
	return fmt.Sprintf("unknown binary type %#x", uint32(t))
}

// Program is a parsed pocl program binary.
type Program struct {
	DeviceID             uint64 // DeviceID of the device's build-hash string
	Version              uint32
	Flags                uint64
	BuildHash            string // the 41 raw bytes without trailing NULs
	ProgramScopeVarBytes uint64 // present when Flags has FlagProgramScopeVars
	RootEntries          []RootEntry
	Kernels              []Kernel
}

// BinaryType returns the program's binary type (flag bits 32–63).
func (p *Program) BinaryType() BinaryType { return BinaryType(p.Flags >> 32) }

// RootEntry is one serialised entry of the program cache directory (such
// as /program.bc), which may hold several files.
type RootEntry struct {
	Files []FileRecord
}

// FileRecord is one serialised file. Path is relative to the program's cache
// directory and normally starts with '/'. ParseProgram only requires it to be
// non-empty: never use it as a destination without stripping the leading '/'
// and checking the rest with CheckPath.
type FileRecord struct {
	Path string
	Size uint32 // as read; MarshalProgram writes len(Data)
	Data []byte // aliases the input
}

// KernelArg is one argument's metadata.
type KernelArg struct {
	AccessQualifier  uint32 // cl_kernel_arg_access_qualifier
	AddressQualifier uint32 // cl_kernel_arg_address_qualifier
	TypeQualifier    uint64 // cl_kernel_arg_type_qualifier (a cl_bitfield)
	Type             uint32 // pocl's argument type
	TypeSize         uint32
	Name             string
	TypeName         string
}

// Kernel is one kernel record.
type Kernel struct {
	// Offset is where the record (its struct_size field) starts in the
	// input and StructSize its length in bytes, as read; MarshalProgram
	// ignores both and computes the size.
	Offset, StructSize uint64

	Name      string
	NumArgs   uint32 // as read; MarshalProgram writes len(Args) unless Opaque is set
	NumLocals uint32 // as read; MarshalProgram writes len(LocalSizes) unless Opaque is set

	ReqdWGSize     [3]uint64
	LocalSizes     []uint64
	Attributes     string
	HasArgMetadata uint64 // u64 on disk up to v10, u32 from v11
	KernelFlags    uint32 // v11+: KernelHas* bits gating the groups below

	MaxSubgroups, CompileSubgroups                                             uint32 // KernelHasSubGroupMeta
	MaxWGSize, PreferredWGMultiple, LocalMemSize, PrivateMemSize, SpillMemSize uint32 // KernelHasWorkGroupMeta
	ReqdSubGroupSize                                                           uint32 // KernelHasReqdSubGroupSize

	Args  []KernelArg
	Files []FileRecord // the kernel's cache directory, paths like "/<kernel>/..."

	// Opaque is set for versions above ProgramVersion, whose metadata layout
	// is unknown: it holds the bytes between NumLocals and the file records,
	// and the fields from ReqdWGSize to Args are left zero. MarshalProgram
	// writes it verbatim, with ArgInfoSize.
	Opaque      []byte
	ArgInfoSize uint32 // as read
}

// IsProgramBinary reports whether b starts with "poclbin\x00".
func IsProgramBinary(b []byte) bool {
	return len(b) >= len(ProgramMagic) && string(b[:len(ProgramMagic)]) == ProgramMagic
}

// DeviceID computes pocl's device id from a device build-hash string such as
// "cpu-x86_64-pc-linux-gnu-skylake" or "CUDA-sm_80": 64-bit FNV with offset
// basis 0xcbf29ce484222325 and prime 0x100000001b3, multiplying before
// XOR-ing each byte, and bytes taken as signed char (sign-extended) as on x86.
func DeviceID(buildHash string) uint64 {
	h := uint64(0xcbf29ce484222325)
	for i := 0; i < len(buildHash); i++ {
		h *= 0x100000001b3
		h ^= uint64(int64(int8(buildHash[i])))
	}
	return h
}

const (
	programHeaderSize    = 8 + 8 + 4 + 4 + 8 + 4 + BuildHashSize // 77
	kernelFixedSize      = 8 + 8 + 4                             // struct_size, binaries_size, arginfo_size
	minArgSize           = 4 + 4 + 8 + 4 + 4 + 4 + 4
	minFileRecordSize    = 8
	minRootEntrySize     = 8
	minKernelRecordBytes = kernelFixedSize + 4 + 4 + 4
)

// ParseProgram parses a pocl program binary. Unlike pocl, which trusts every
// length, it checks each count and size against the bytes that remain, and
// requires: version >= 9; every root entry's and kernel's byte counts to be
// filled exactly by their file records; each kernel's struct_size,
// binaries_size and arginfo_size to agree with its contents; non-empty file
// paths; and no bytes after the last kernel.
//
// Versions 9 and 10 store has_arg_metadata as a u64 and have no kernel
// flags; 11 and 12 store two u32 and the groups the flags select. For
// versions above 12 the kernel metadata is skipped (see Kernel.Opaque).
func ParseProgram(b []byte) (*Program, error) {
	r := &reader{b: b, end: len(b), format: "pocl program binary"}
	if !IsProgramBinary(b) {
		return nil, r.errf("header", 0, "missing magic \"poclbin\\x00\"")
	}
	if len(b) < programHeaderSize {
		return nil, r.errf("header", 0, "input has %d bytes, header needs %d", len(b), programHeaderSize)
	}
	r.pos = 8
	p := &Program{}
	p.DeviceID, _ = r.u64("device id")
	p.Version, _ = r.u32("version")
	if p.Version < MinProgramVersion {
		return nil, r.errf("header", 16, "unsupported version %d (minimum %d)", p.Version, MinProgramVersion)
	}
	numKernels, _ := r.u32("kernel count")
	p.Flags, _ = r.u64("flags")
	numRoots, _ := r.u32("root entry count")
	hash, _ := r.bytes("build hash", BuildHashSize)
	p.BuildHash = string(bytes.TrimRight(hash, "\x00"))
	if p.Flags&FlagProgramScopeVars != 0 {
		var err error
		if p.ProgramScopeVarBytes, err = r.u64("program-scope variable size"); err != nil {
			return nil, err
		}
	}

	if uint64(numRoots)*minRootEntrySize > uint64(r.left()) {
		return nil, r.errf("header", 32, "%d root entries need at least %#x bytes, %#x left", numRoots, uint64(numRoots)*minRootEntrySize, r.left())
	}
	if numRoots > 0 {
		p.RootEntries = make([]RootEntry, numRoots)
	}
	for i := range p.RootEntries {
		what := fmt.Sprintf("root entry %d", i)
		at := r.pos
		n, err := r.u64(what + " size")
		if err != nil {
			return nil, err
		}
		if n > uint64(r.left()) {
			return nil, r.errf(what, at, "size %#x runs past end of input (%#x bytes left)", n, r.left())
		}
		files, err := parseFiles(r, what, r.pos+int(n))
		if err != nil {
			return nil, err
		}
		p.RootEntries[i].Files = files
	}

	if uint64(numKernels)*minKernelRecordBytes > uint64(r.left()) {
		return nil, r.errf("header", 20, "%d kernels need at least %#x bytes, %#x left", numKernels, uint64(numKernels)*minKernelRecordBytes, r.left())
	}
	if numKernels > 0 {
		p.Kernels = make([]Kernel, numKernels)
	}
	for i := range p.Kernels {
		if err := parseKernel(r, p.Version, i, &p.Kernels[i]); err != nil {
			return nil, err
		}
	}
	if r.pos != len(b) {
		return nil, r.errf("end", r.pos, "%#x trailing bytes after the last kernel", len(b)-r.pos)
	}
	return p, nil
}

// parseFiles parses file records filling r.b[r.pos:end] exactly.
func parseFiles(r *reader, owner string, end int) ([]FileRecord, error) {
	saved := r.end
	r.end = end
	defer func() { r.end = saved }()
	var files []FileRecord
	for i := 0; r.pos < end; i++ {
		what := fmt.Sprintf("%s file %d", owner, i)
		at := r.pos
		path, err := r.lenBytes(what + " path")
		if err != nil {
			return nil, err
		}
		if len(path) == 0 {
			return nil, r.errf(what, at, "empty path")
		}
		data, err := r.lenBytes(what + " content")
		if err != nil {
			return nil, err
		}
		files = append(files, FileRecord{Path: string(path), Size: uint32(len(data)), Data: data})
	}
	return files, nil
}

func parseKernel(r *reader, version uint32, i int, k *Kernel) error {
	what := fmt.Sprintf("kernel %d", i)
	start := r.pos
	structSize, err := r.u64(what + " struct_size")
	if err != nil {
		return err
	}
	k.Offset, k.StructSize = uint64(start), structSize
	binSize, err := r.u64(what + " binaries_size")
	if err != nil {
		return err
	}
	if k.ArgInfoSize, err = r.u32(what + " arginfo_size"); err != nil {
		return err
	}
	if structSize > uint64(len(r.b)-start) || structSize < minKernelRecordBytes {
		return r.errf(what, start, "struct_size %#x outside [%#x, %#x]", structSize, minKernelRecordBytes, len(r.b)-start)
	}
	end := start + int(structSize)
	if binSize > structSize-minKernelRecordBytes {
		return r.errf(what, start, "binaries_size %#x does not fit in struct_size %#x", binSize, structSize)
	}
	filesAt := end - int(binSize)

	saved := r.end
	r.end = filesAt
	name, err := r.lenBytes(what + " name")
	if err != nil {
		return err
	}
	k.Name = string(name)
	what = fmt.Sprintf("kernel %d (%.64q)", i, k.Name)
	if k.NumArgs, err = r.u32(what + " num_args"); err != nil {
		return err
	}
	if k.NumLocals, err = r.u32(what + " num_locals"); err != nil {
		return err
	}
	if version > ProgramVersion {
		k.Opaque, _ = r.bytes(what+" metadata", uint64(r.left()))
	} else if err := parseKernelMeta(r, version, what, k); err != nil {
		return err
	}
	if r.pos != filesAt {
		return r.errf(what, r.pos, "metadata ends at %#x but files start at %#x (struct_size %#x - binaries_size %#x)", r.pos, filesAt, structSize, binSize)
	}
	r.end = saved
	if k.Files, err = parseFiles(r, what, end); err != nil {
		return err
	}
	return nil
}

func parseKernelMeta(r *reader, version uint32, what string, k *Kernel) error {
	var err error
	for d := range k.ReqdWGSize {
		if k.ReqdWGSize[d], err = r.u64(what + " reqd_wg_size"); err != nil {
			return err
		}
	}
	if uint64(k.NumLocals)*8 > uint64(r.left()) {
		return r.errf(what, r.pos, "%d local sizes need %#x bytes, %#x left", k.NumLocals, uint64(k.NumLocals)*8, r.left())
	}
	if k.NumLocals > 0 {
		k.LocalSizes = make([]uint64, k.NumLocals)
	}
	for j := range k.LocalSizes {
		k.LocalSizes[j], _ = r.u64(what + " local size")
	}
	attr, err := r.lenBytes(what + " attributes")
	if err != nil {
		return err
	}
	k.Attributes = string(attr)
	if version <= 10 {
		if k.HasArgMetadata, err = r.u64(what + " has_arg_metadata"); err != nil {
			return err
		}
	} else {
		v, err := r.u32(what + " has_arg_metadata")
		if err != nil {
			return err
		}
		k.HasArgMetadata = uint64(v)
		if k.KernelFlags, err = r.u32(what + " flags"); err != nil {
			return err
		}
		read := func(dst ...*uint32) error {
			for _, d := range dst {
				if *d, err = r.u32(what + " flag-selected metadata"); err != nil {
					return err
				}
			}
			return nil
		}
		if k.KernelFlags&KernelHasSubGroupMeta != 0 {
			if err := read(&k.MaxSubgroups, &k.CompileSubgroups); err != nil {
				return err
			}
		}
		if k.KernelFlags&KernelHasWorkGroupMeta != 0 {
			if err := read(&k.MaxWGSize, &k.PreferredWGMultiple, &k.LocalMemSize, &k.PrivateMemSize, &k.SpillMemSize); err != nil {
				return err
			}
		}
		if k.KernelFlags&KernelHasReqdSubGroupSize != 0 {
			if err := read(&k.ReqdSubGroupSize); err != nil {
				return err
			}
		}
	}
	argStart := r.pos
	if uint64(k.NumArgs)*minArgSize > uint64(r.left()) {
		return r.errf(what, r.pos, "%d arguments need at least %#x bytes, %#x left", k.NumArgs, uint64(k.NumArgs)*minArgSize, r.left())
	}
	if k.NumArgs > 0 {
		k.Args = make([]KernelArg, k.NumArgs)
	}
	for j := range k.Args {
		a := &k.Args[j]
		aw := fmt.Sprintf("%s argument %d", what, j)
		if err := r.need(aw, 24); err != nil {
			return err
		}
		a.AccessQualifier, _ = r.u32(aw)
		a.AddressQualifier, _ = r.u32(aw)
		a.TypeQualifier, _ = r.u64(aw)
		a.Type, _ = r.u32(aw)
		a.TypeSize, _ = r.u32(aw)
		name, err := r.lenBytes(aw + " name")
		if err != nil {
			return err
		}
		typeName, err := r.lenBytes(aw + " type name")
		if err != nil {
			return err
		}
		a.Name, a.TypeName = string(name), string(typeName)
	}
	if got := r.pos - argStart; uint64(got) != uint64(k.ArgInfoSize) {
		return r.errf(what, argStart, "arguments take %#x bytes, arginfo_size says %#x", got, k.ArgInfoSize)
	}
	return nil
}

// MarshalProgram writes p in pocl's layout for p.Version: versions up to 10
// with a u64 has_arg_metadata and no kernel flags, later ones with two u32
// and the flag-selected groups. The program-scope variable size is written
// when the flags written have FlagProgramScopeVars. BuildHash is NUL-padded
// (or cut) to 41 bytes. Kernels with Opaque set are written with it verbatim.
// Counts and sizes are taken from the slices, except NumArgs and NumLocals of
// opaque kernels.
//
// Version 0 writes DefaultProgramVersion, the format pocl 3.1 reads, and
// keeps only the flags it knows (KnownFlags): no program-scope variable size,
// no kernel flags. pocl does not reject newer versions, so a binary for a
// newer pocl must name its version (ProgramVersion for pocl 4.0 and later);
// an explicit version is written with p.Flags as given, so that a parsed
// program writes back byte for byte.
func MarshalProgram(p *Program) []byte {
	version, flags := p.Version, p.Flags
	if version == 0 {
		version = DefaultProgramVersion
		flags &= KnownFlags(version)
	}
	out := []byte(ProgramMagic)
	out = le64(out, p.DeviceID)
	out = le32(out, version)
	out = le32(out, uint32(len(p.Kernels)))
	out = le64(out, flags)
	out = le32(out, uint32(len(p.RootEntries)))
	var hash [BuildHashSize]byte
	copy(hash[:], p.BuildHash)
	out = append(out, hash[:]...)
	if flags&FlagProgramScopeVars != 0 {
		out = le64(out, p.ProgramScopeVarBytes)
	}
	for _, e := range p.RootEntries {
		at := len(out)
		out = le64(out, 0)
		out = appendFiles(out, e.Files)
		binary.LittleEndian.PutUint64(out[at:], uint64(len(out)-at-8))
	}
	for i := range p.Kernels {
		out = appendKernel(out, version, &p.Kernels[i])
	}
	return out
}

func appendStr(out []byte, s string) []byte {
	return append(le32(out, uint32(len(s))), s...)
}

func appendFiles(out []byte, files []FileRecord) []byte {
	for _, f := range files {
		out = appendStr(out, f.Path)
		out = le32(out, uint32(len(f.Data)))
		out = append(out, f.Data...)
	}
	return out
}

func appendKernel(out []byte, version uint32, k *Kernel) []byte {
	start := len(out)
	out = le64(out, 0) // struct_size
	out = le64(out, 0) // binaries_size
	out = le32(out, 0) // arginfo_size
	out = appendStr(out, k.Name)
	argInfo := k.ArgInfoSize
	if k.Opaque != nil {
		out = le32(out, k.NumArgs)
		out = le32(out, k.NumLocals)
		out = append(out, k.Opaque...)
	} else {
		out = le32(out, uint32(len(k.Args)))
		out = le32(out, uint32(len(k.LocalSizes)))
		for _, v := range k.ReqdWGSize {
			out = le64(out, v)
		}
		for _, v := range k.LocalSizes {
			out = le64(out, v)
		}
		out = appendStr(out, k.Attributes)
		if version <= 10 {
			out = le64(out, k.HasArgMetadata)
		} else {
			out = le32(out, uint32(k.HasArgMetadata))
			out = le32(out, k.KernelFlags)
			if k.KernelFlags&KernelHasSubGroupMeta != 0 {
				out = le32(le32(out, k.MaxSubgroups), k.CompileSubgroups)
			}
			if k.KernelFlags&KernelHasWorkGroupMeta != 0 {
				for _, v := range []uint32{k.MaxWGSize, k.PreferredWGMultiple, k.LocalMemSize, k.PrivateMemSize, k.SpillMemSize} {
					out = le32(out, v)
				}
			}
			if k.KernelFlags&KernelHasReqdSubGroupSize != 0 {
				out = le32(out, k.ReqdSubGroupSize)
			}
		}
		argStart := len(out)
		for _, a := range k.Args {
			out = le32(out, a.AccessQualifier)
			out = le32(out, a.AddressQualifier)
			out = le64(out, a.TypeQualifier)
			out = le32(out, a.Type)
			out = le32(out, a.TypeSize)
			out = appendStr(out, a.Name)
			out = appendStr(out, a.TypeName)
		}
		argInfo = uint32(len(out) - argStart)
	}
	filesAt := len(out)
	out = appendFiles(out, k.Files)
	binary.LittleEndian.PutUint64(out[start:], uint64(len(out)-start))
	binary.LittleEndian.PutUint64(out[start+8:], uint64(len(out)-filesAt))
	binary.LittleEndian.PutUint32(out[start+16:], argInfo)
	return out
}
