package inspect

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/offcc/offcc/bundler"
	"github.com/offcc/offcc/bundler/ccob"
	"github.com/offcc/offcc/nvfatbin"
	"github.com/offcc/offcc/objfile"
	"github.com/offcc/offcc/packager"
	"github.com/offcc/offcc/poclbin"
	"github.com/offcc/offcc/syclbin"
)

// all describes data as one or more containers back to back, as in a
// .hip_fatbin section that holds one bundle per translation unit with zero
// padding between them.
func (w *walker) all(data []byte, depth int) ([]*Node, error) {
	if depth > MaxDepth {
		return nil, fmt.Errorf("containers nested more than %d deep", MaxDepth)
	}
	var nodes []*Node
	rest := data
	for len(rest) > 0 {
		n, used, err := w.one(rest, depth)
		if err != nil {
			return nil, err
		}
		nodes = append(nodes, n)
		rest = rest[used:]
		pad := 0
		for pad < len(rest) && rest[pad] == 0 {
			pad++
		}
		rest = rest[pad:]
	}
	if len(nodes) == 0 {
		return []*Node{w.node("data", data)}, nil
	}
	return nodes, nil
}

// spirvMagic starts a SPIR-V module (0x07230203, little-endian).
var spirvMagic = []byte{0x03, 0x02, 0x23, 0x07}

// one describes the container at the start of data and returns how many
// bytes it covers.
func (w *walker) one(data []byte, depth int) (*Node, int, error) {
	var n *Node
	var err error
	used := len(data)
	switch {
	case packager.IsOffloadBinary(data):
		n, err = w.offloadBinary(data, depth)
	case ccob.IsCompressed(data):
		n, used, err = w.compressed(data, depth)
	case bundler.IsBinaryBundle(data):
		n, used, err = w.binaryBundle(data, depth)
	case nvfatbin.IsFatBinary(data):
		n, used, err = w.fatbin(data, depth)
	case objfile.IsELF(data):
		n, err = w.elf(data, depth)
	case objfile.IsArchive(data):
		n, err = w.archive(data, depth)
	case syclbin.IsSYCLBIN(data):
		n, err = w.syclbin(data, depth)
	case poclbin.IsProgramBinary(data):
		n, err = w.poclProgram(data, depth)
	case poclbin.IsArchive(data):
		n, err = w.poclArchive(data, depth)
	case packager.IsBitcode(data):
		n = w.node("bitcode", data)
	case bytes.HasPrefix(data, spirvMagic):
		n = w.node("spirv", data)
		if len(data) >= 8 {
			v := binary.LittleEndian.Uint32(data[4:])
			n.Format = fmt.Sprintf("SPIR-V %d.%d", v>>16&0xff, v>>8&0xff)
		}
	default:
		if comment, ok := bundler.IsTextBundle(data); ok {
			n, err = w.textBundle(data, comment, depth)
		} else if isPTX(data) {
			n = w.node("ptx", data)
		} else {
			n = w.node("data", data)
		}
	}
	if err != nil {
		return nil, 0, err
	}
	return n, used, nil
}

// isPTX reports whether data looks like PTX assembly text.
func isPTX(data []byte) bool {
	head := data[:min(len(data), 4096)]
	return bytes.Contains(head, []byte(".version ")) && bytes.Contains(head, []byte(".target "))
}

// children describes payload as the contents of parent.
func (w *walker) children(parent *Node, payload []byte, depth int) error {
	if len(payload) == 0 {
		return nil
	}
	kids, err := w.all(payload, depth+1)
	if err != nil {
		return err
	}
	parent.Children = append(parent.Children, kids...)
	return nil
}

func (w *walker) offloadBinary(data []byte, depth int) (*Node, error) {
	blobs, err := packager.ParseBlobs(data)
	if err != nil {
		// Report where the blob is in the file, not in data.
		if pe, ok := err.(*packager.ParseError); ok {
			pe.Offset += w.offset(data)
		}
		return nil, err
	}
	var nodes []*Node
	for _, b := range blobs {
		blob := data[b.Offset : b.Offset+b.Size]
		n := w.node("offload-binary", blob)
		n.Version = b.Version
		if isSYCLBINv2(&b, blob) {
			// One SYCLBIN spread over all the entries (FORMATS.md §3.6).
			f, _, err := syclbin.Decode(blob)
			if err != nil {
				return nil, wrap(err, "offload binary at offset %#x", n.Offset)
			}
			s, err := w.syclbinNode(f, blob, "v2", depth)
			if err != nil {
				return nil, wrap(err, "offload binary at offset %#x", n.Offset)
			}
			n.Children = append(n.Children, s)
			nodes = append(nodes, n)
			continue
		}
		for i, im := range b.Images {
			c := w.node("image", im.Data)
			c.Format = im.Kind.String()
			if im.Kind == syclbin.ImageKindSYCLBIN || im.Kind == syclbin.ImageKindSYCLBINOld && syclbin.IsSYCLBIN(im.Data) {
				c.Format = "syclbin"
			}
			c.Producer = im.Offload.String()
			if im.Flags != 0 {
				c.Keys = map[string]string{"flags": fmt.Sprintf("%#x", im.Flags)}
			}
			for _, kv := range im.Strings {
				switch kv.Key {
				case "triple":
					c.Triple = kv.Value
				case "arch":
					c.Arch = kv.Value
				default:
					if c.Keys == nil {
						c.Keys = map[string]string{}
					}
					c.Keys[kv.Key] = kv.Value
				}
			}
			if err := w.children(c, im.Data, depth); err != nil {
				return nil, wrap(err, "offload binary at offset %#x: image %d", n.Offset, i)
			}
			if len(c.Children) == 1 && c.Children[0].Kind == "syclbin" {
				// A SYCLBIN body in its envelope, as -fsyclbin writes it.
				c.Children[0].Keys["encoding"] = syclbin.EncodingV1.String()
			}
			n.Children = append(n.Children, c)
		}
		nodes = append(nodes, n)
	}
	if len(nodes) == 1 {
		return nodes[0], nil
	}
	return &Node{Kind: "sequence", Offset: w.offset(data), Size: uint64(len(data)), Children: nodes}, nil
}

// isSYCLBINv2 reports whether the offload binary b (whose bytes are blob)
// is a SYCLBIN in DPC++'s version 2 encoding: a v2 offload binary whose
// IMG_SYCLBIN entries are the parts of one SYCLBIN, rather than an
// envelope around a SYCLBIN body.
func isSYCLBINv2(b *packager.Blob, blob []byte) bool {
	return b.Version == 2 && len(b.Images) > 0 && !syclbin.IsSYCLBIN(b.Images[0].Data) && syclbin.IsFile(blob)
}

func (w *walker) compressed(data []byte, depth int) (*Node, int, error) {
	at := w.offset(data)
	// Split bounds the first envelope by its size field (v2, v3) or its
	// compressed stream (v1); what follows it is not its business.
	envs, err := ccob.Split(data)
	if len(envs) == 0 {
		if ce, ok := err.(*ccob.Error); ok {
			ce.Offset += int64(at)
		}
		return nil, 0, err
	}
	env := envs[0]
	out, h, err := ccob.DecompressWith(env, ccob.DecompressOptions{Base: int64(at)})
	if err != nil {
		return nil, 0, err
	}
	n := w.node("compressed-bundle", env)
	n.Version = uint32(h.Version)
	n.Format = h.Method.String()
	n.Keys = map[string]string{
		"uncompressed-size": strconv.FormatUint(h.UncompressedSize, 10),
		"hash":              fmt.Sprintf("%016x", h.Hash),
	}
	inner := &walker{base: out, inflate: w.inflate}
	kids, err := inner.all(out, depth+1)
	if err != nil {
		return nil, 0, wrap(err, "compressed bundle at offset %#x: decompressed data", at)
	}
	n.Children = kids
	return n, len(env), nil
}

func (w *walker) binaryBundle(data []byte, depth int) (*Node, int, error) {
	entries, err := bundler.ParseBinary(data)
	if err != nil {
		return nil, 0, wrap(err, "at offset %#x", w.offset(data))
	}
	end := uint64(0)
	for _, e := range entries {
		end = max(end, e.Offset+e.Size)
	}
	hdr := 24 + 8
	for _, e := range entries {
		hdr += 24 + len(e.ID)
	}
	end = max(end, uint64(hdr))
	n := w.node("bundle", data[:end])
	n.Format = "binary"
	if err := w.bundleEntries(n, entries, depth); err != nil {
		return nil, 0, err
	}
	return n, int(end), nil
}

func (w *walker) textBundle(data []byte, comment string, depth int) (*Node, error) {
	entries, err := bundler.ParseText(data, comment)
	if err != nil {
		return nil, wrap(err, "at offset %#x", w.offset(data))
	}
	n := w.node("bundle", data)
	n.Format = "text " + comment
	return n, w.bundleEntries(n, entries, depth)
}

// bundleEntries adds a bundle-entry node per entry, with the ID's parts.
func (w *walker) bundleEntries(n *Node, entries []bundler.Entry, depth int) error {
	for _, e := range entries {
		c := w.node("bundle-entry", e.Data)
		if len(e.Data) == 0 {
			c.Offset = n.Offset + e.Offset // Entry.Offset counts from the bundle's start
		}
		describeID(c, e.ID)
		if err := w.children(c, e.Data, depth); err != nil {
			return wrap(err, "bundle at offset %#x: entry %s", n.Offset, e.ID)
		}
		n.Children = append(n.Children, c)
	}
	return nil
}

// describeID fills a node's name, producer, triple and arch from a bundle
// entry ID; IDs the bundler would reject are shown as they are.
func describeID(n *Node, id string) {
	n.Name = id
	if p, err := bundler.ParseID(id); err == nil {
		// Bundle IDs spell an empty environment as a trailing "-".
		n.Producer, n.Triple, n.Arch = p.Kind, strings.TrimSuffix(p.Triple, "-"), p.TargetID
	}
}

func (w *walker) elf(data []byte, depth int) (*Node, error) {
	n := w.node("elf", data)
	n.Format = elfDescription(data)
	secs, err := objfile.Sections(data)
	if err != nil {
		return nil, wrap(err, "ELF file at offset %#x", n.Offset)
	}
	registered := registeredFatbin(data)
	for _, s := range secs {
		switch {
		case s.Type == objfile.SHTLLVMOffloading, s.Name == ".hip_fatbin", s.Name == ".nv_fatbin", s.Name == "__nv_relfatbin":
			c := w.node("section", s.Data)
			c.Name = s.Name
			// What the translation unit's top-level asm put in the
			// section comes before the fat binary clang registers:
			// each is described on its own.
			parts := [][]byte{s.Data}
			if registered.Section == s.Name && registered.Offset > 0 && registered.Offset < uint64(len(s.Data)) {
				parts = [][]byte{s.Data[:registered.Offset], s.Data[registered.Offset:]}
			}
			for _, part := range parts {
				if err := w.children(c, part, depth); err != nil {
					return nil, wrap(err, "section %s", s.Name)
				}
			}
			n.Children = append(n.Children, c)
		case s.Name == ".nvFatBinSegment":
			c, err := w.fatbinWrappers(s)
			if err != nil {
				return nil, wrap(err, "section %s", s.Name)
			}
			n.Children = append(n.Children, c)
		case strings.HasPrefix(s.Name, bundleSectionPrefix):
			c := w.node("bundle-entry", s.Data)
			describeID(c, strings.TrimPrefix(s.Name, bundleSectionPrefix))
			if !strings.HasPrefix(c.Name, "host-") {
				if err := w.children(c, s.Data, depth); err != nil {
					return nil, wrap(err, "section %s", s.Name)
				}
			}
			n.Children = append(n.Children, c)
		}
	}
	return n, nil
}

// registeredFatbin returns where the fat binary that a CUDA or HIP host
// object registers lies (its fat binary wrapper's pointer), or the zero
// Pointer.
func registeredFatbin(obj []byte) objfile.Pointer {
	for _, wrapper := range []string{"__cuda_fatbin_wrapper", "__hip_fatbin_wrapper"} {
		if p, found, err := objfile.PointerInSymbol(obj, wrapper, 8); err == nil && found {
			return p
		}
	}
	return objfile.Pointer{}
}

// fatbin describes the NVIDIA fat binary at the start of data (nvcc's
// .fatbin, the contents of .nv_fatbin and __nv_relfatbin) with a node per
// entry, and returns how many bytes it covers.
func (w *walker) fatbin(data []byte, depth int) (*Node, int, error) {
	f, err := nvfatbin.Parse(data)
	if err != nil {
		// Report offsets in the file, not in data.
		if fe, ok := err.(*nvfatbin.Error); ok {
			base := w.offset(data)
			fe.Offset += base
			if fe.Entry >= 0 {
				fe.EntryOffset += base
			}
		}
		return nil, 0, err
	}
	size := int(f.Size()) // at most len(data)
	n := w.node("nv-fatbin", data[:size])
	n.Version = uint32(f.Version)
	for i := range f.Entries {
		e := &f.Entries[i]
		c, err := w.fatbinEntry(n, e, depth)
		if err != nil {
			return nil, 0, wrap(err, "NVIDIA fat binary at offset %#x: entry %d (%s %s) at offset %#x", n.Offset, i, e.Kind, e.Arch(), n.Offset+e.Offset)
		}
		n.Children = append(n.Children, c)
	}
	return n, size, nil
}

// fatbinEntry describes one fat binary entry: what the header says, and
// under it the payload, decompressed when it is LZ4-compressed (offsets
// below are then in the decompressed data). ZSTD and legacy-compressed
// payloads are not decoded.
func (w *walker) fatbinEntry(fb *Node, e *nvfatbin.Entry, depth int) (*Node, error) {
	c := w.node("nv-fatbin-entry", e.Data)
	if len(e.Data) == 0 {
		c.Offset = fb.Offset + e.PayloadOffset() // e's offsets count from the fat binary's start
	}
	c.Format = e.Kind.String()
	c.Arch = e.Arch()
	switch {
	case e.Flags&nvfatbin.FlagCUDA != 0:
		c.Producer = "cuda"
	case e.Flags&nvfatbin.FlagOpenCL != 0:
		c.Producer = "opencl"
	}
	c.Keys = map[string]string{
		"code-version": fmt.Sprintf("%d.%d", e.CodeMajor, e.CodeMinor),
		"flags":        fmt.Sprintf("%#x", uint64(e.Flags)),
	}
	if e.Identifier != "" {
		c.Keys["identifier"] = e.Identifier
	}
	if e.Options != "" {
		c.Keys["ptxas-options"] = e.Options
	}
	if e.Flags&nvfatbin.FlagDebug != 0 {
		c.Keys["debug"] = "true"
	}
	comp := e.Compression()
	inner, payload := w, e.Data
	switch comp {
	case nvfatbin.CompressionNone:
	case nvfatbin.CompressionLZ4:
		// Decompressed entries may hold more, so a crafted file could
		// nest its way to an exponential size: a walk decodes at most
		// inflateBudget bytes in all.
		if e.UncompressedSize > *w.inflate {
			return nil, fmt.Errorf("LZ4 payload of %d bytes exceeds the %d bytes left to decompress from this file (64 times its size, at least 256 MiB)",
				e.UncompressedSize, *w.inflate)
		}
		*w.inflate -= e.UncompressedSize
		out, err := e.Decompress()
		if err != nil {
			return nil, err
		}
		inner, payload = &walker{base: out, inflate: w.inflate}, out
	}
	if comp != nvfatbin.CompressionNone {
		c.Keys["compression"] = comp.String()
		c.Keys["compressed-size"] = strconv.FormatUint(uint64(e.CompressedSize), 10)
		c.Keys["uncompressed-size"] = strconv.FormatUint(e.UncompressedSize, 10)
		if comp != nvfatbin.CompressionLZ4 {
			return c, nil
		}
	}
	if len(payload) == 0 {
		return c, nil
	}
	if e.Kind == nvfatbin.KindPTX {
		// The header says PTX; the text may lack what isPTX looks for.
		c.Children = []*Node{inner.node("ptx", payload)}
		return c, nil
	}
	if err := inner.children(c, payload, depth); err != nil {
		return nil, err
	}
	return c, nil
}

// fatbinWrappers describes a .nvFatBinSegment section: the
// __fatBinC_Wrapper_t records the CUDA runtime registers, one per fat
// binary. objfile reads ELF64 little-endian files only, so pointers are 8
// bytes.
func (w *walker) fatbinWrappers(s objfile.Section) (*Node, error) {
	c := w.node("section", s.Data)
	c.Name = s.Name
	ws, err := nvfatbin.ParseWrappers(s.Data, binary.LittleEndian, 8)
	if err != nil {
		return nil, err
	}
	for i, fw := range ws {
		k := w.node("nv-fatbin-wrapper", s.Data[i*24:(i+1)*24])
		k.Version = fw.Version
		if fw.Data != 0 {
			k.Keys = map[string]string{"data": fmt.Sprintf("%#x", fw.Data)}
		}
		c.Children = append(c.Children, k)
	}
	return c, nil
}

// bundleSectionPrefix starts the name of each section of an object bundle.
const bundleSectionPrefix = "__CLANG_OFFLOAD_BUNDLE__"

// elfDescription names an ELF file's class, type and machine. An ET_DYN
// file is a "PIE executable" when isPIE says so, a "shared object"
// otherwise.
func elfDescription(b []byte) string {
	if len(b) < 20 {
		return "ELF"
	}
	class := map[byte]string{1: "ELF32", 2: "ELF64"}[b[4]]
	if class == "" {
		class = "ELF"
	}
	var order binary.ByteOrder = binary.LittleEndian
	if b[5] == 2 {
		order = binary.BigEndian
	}
	typ := map[uint16]string{1: "relocatable", 2: "executable", 3: "shared object", 4: "core"}[order.Uint16(b[16:])]
	if order.Uint16(b[16:]) == 3 && isPIE(b, order) {
		typ = "PIE executable"
	}
	if typ == "" {
		typ = fmt.Sprintf("type %d", order.Uint16(b[16:]))
	}
	m := order.Uint16(b[18:])
	machine := map[uint16]string{3: "i386", 20: "ppc", 21: "ppc64", 40: "arm", 62: "x86-64", 183: "aarch64", 190: "nvptx (cuda)", 224: "amdgpu", 243: "riscv"}[m]
	if machine == "" {
		machine = fmt.Sprintf("machine %d", m)
	}
	return class + " " + typ + " " + machine
}

func (w *walker) archive(data []byte, depth int) (*Node, error) {
	a, err := objfile.ParseArchive(data)
	if err != nil {
		return nil, wrap(err, "archive at offset %#x", w.offset(data))
	}
	n := w.node("archive", data)
	for _, m := range a.Members {
		kids, err := w.all(m.Data, depth+1)
		if err != nil {
			return nil, wrap(err, "archive member %s", m.Name)
		}
		if len(kids) == 1 {
			kids[0].Name = m.Name
		} else {
			kids = []*Node{{Kind: "sequence", Name: m.Name, Offset: w.offset(m.Data), Size: uint64(len(m.Data)), Children: kids}}
		}
		n.Children = append(n.Children, kids...)
	}
	return n, nil
}

// syclbin describes a bare SYCLBIN body; an offload binary around it
// marks it as encoding v1.
func (w *walker) syclbin(data []byte, depth int) (*Node, error) {
	f, err := syclbin.Parse(data)
	if err != nil {
		return nil, wrap(err, "at offset %#x", w.offset(data))
	}
	return w.syclbinNode(f, data, "bare", depth)
}

// syclbinNode describes the SYCLBIN f read from data in the given
// encoding ("bare", "v1", "v2"): its state, the global property sets, and
// per abstract module its kernels, property sets, IR modules and native
// images, with what the device code is under each. Property sets whose
// every key is already shown (the state, the IR type and target, the
// native arch and target, kernel names with value 1) are left out.
func (w *walker) syclbinNode(f *syclbin.File, data []byte, encoding string, depth int) (*Node, error) {
	n := w.node("syclbin", data)
	n.Version = f.Version
	n.Keys = map[string]string{"encoding": encoding}
	if st, ok := f.State(); ok {
		n.Keys["state"] = syclbin.StateName(st)
	}
	n.Children = propertySets(&f.GlobalMetadata)
	for i := range f.Modules {
		am := &f.Modules[i]
		c := &Node{Kind: "syclbin-module", Name: strconv.Itoa(i), Kernels: am.KernelNames()}
		c.Children = propertySets(&am.Metadata)
		for j := range am.IR {
			ir := &am.IR[j]
			k := w.node("syclbin-ir", ir.Data)
			k.Triple, _ = ir.Target()
			if t, ok := ir.Type(); ok {
				k.Format = irTypeName(t)
			}
			k.Children = propertySets(&ir.Metadata)
			if err := w.children(k, ir.Data, depth); err != nil {
				return nil, wrap(err, "SYCLBIN module %d: IR module %d", i, j)
			}
			c.Children = append(c.Children, k)
			c.Size += k.Size
		}
		for j := range am.Native {
			ni := &am.Native[j]
			k := w.node("syclbin-native", ni.Data)
			k.Triple, _ = ni.Target()
			k.Arch, _ = ni.Arch()
			k.Children = propertySets(&ni.Metadata)
			if err := w.children(k, ni.Data, depth); err != nil {
				return nil, wrap(err, "SYCLBIN module %d: native image %d", i, j)
			}
			c.Children = append(c.Children, k)
			c.Size += k.Size
		}
		n.Children = append(n.Children, c)
	}
	return n, nil
}

// shownType returns the value type with which key of the predefined
// SYCLBIN property set called set is shown as a node's state, format,
// triple or arch, and whether it is shown at all.
func shownType(set, key string) (syclbin.PropertyType, bool) {
	switch {
	case set == syclbin.GlobalMetadataSet && key == syclbin.StateKey,
		set == syclbin.IRModuleMetadataSet && key == syclbin.TypeKey:
		return syclbin.TypeUInt32, true
	case set == syclbin.IRModuleMetadataSet && key == syclbin.TargetKey,
		set == syclbin.NativeImageMetadataSet && (key == syclbin.ArchKey || key == syclbin.TargetKey):
		return syclbin.TypeByteArray, true
	}
	return 0, false
}

// propertySets returns a node per property set of r that holds something
// not shown elsewhere, its keys and values in Keys.
func propertySets(r *syclbin.PropertySetRegistry) []*Node {
	var nodes []*Node
	for _, s := range r.Sets {
		shown := len(s.Properties) > 0
		for _, p := range s.Properties {
			if s.Name == syclbin.KernelNamesSet {
				shown = shown && p.Value.Type == syclbin.TypeUInt32 && p.Value.UInt32 == 1
			} else if t, ok := shownType(s.Name, p.Key); !ok || t != p.Value.Type {
				shown = false
			}
		}
		if shown {
			continue
		}
		n := &Node{Kind: "syclbin-property-set", Name: s.Name}
		if len(s.Properties) > 0 {
			n.Keys = make(map[string]string, len(s.Properties))
		}
		for _, p := range s.Properties {
			n.Keys[p.Key] = propertyValue(p.Value)
		}
		nodes = append(nodes, n)
	}
	return nodes
}

// maxShownBytes is how many bytes of a byte-array property are shown.
const maxShownBytes = 64

// propertyValue shows a property value: a UINT32 in decimal, a byte array
// as its text when it is printable, otherwise in hex (at most
// maxShownBytes of it), with its bit length when that is not a whole
// number of bytes.
func propertyValue(v syclbin.PropertyValue) string {
	if v.Type == syclbin.TypeUInt32 {
		return strconv.FormatUint(uint64(v.UInt32), 10)
	}
	b := v.Bytes
	var s string
	if printable(b) {
		s = string(b)
	} else {
		s = "0x" + hex.EncodeToString(b[:min(len(b), maxShownBytes)])
		if len(b) > maxShownBytes {
			s += fmt.Sprintf("... (%d bytes)", len(b))
		}
	}
	if v.Bits() != 8*uint64(len(b)) {
		s += fmt.Sprintf(" (%d bits)", v.Bits())
	}
	return s
}

// printable reports whether b is UTF-8 text without control characters.
func printable(b []byte) bool {
	if !utf8.Valid(b) {
		return false
	}
	for _, r := range string(b) {
		if !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}

// irTypeName names a SYCLBIN IR module type.
func irTypeName(t uint32) string {
	switch t {
	case syclbin.IRTypeSPIRV:
		return "SPIR-V"
	case syclbin.IRTypePTX:
		return "PTX"
	case syclbin.IRTypeAMDGCN:
		return "AMDGCN"
	}
	return "type " + strconv.FormatUint(uint64(t), 10)
}

func (w *walker) poclProgram(data []byte, depth int) (*Node, error) {
	p, err := poclbin.ParseProgram(data)
	if err != nil {
		return nil, wrap(err, "at offset %#x", w.offset(data))
	}
	n := w.node("pocl-program", data)
	n.Version = p.Version
	n.Keys = map[string]string{
		"device-id":   fmt.Sprintf("%016x", p.DeviceID),
		"binary-type": p.BinaryType().String(),
		"build-hash":  p.BuildHash,
	}
	for _, r := range p.RootEntries {
		for _, f := range r.Files {
			c, err := w.fileEntry(f.Path, f.Data, depth)
			if err != nil {
				return nil, err
			}
			n.Children = append(n.Children, c)
		}
	}
	for _, k := range p.Kernels {
		// The kernel record: its struct_size bytes from where it starts.
		c := w.node("pocl-kernel", data[k.Offset:k.Offset+k.StructSize])
		c.Name = k.Name
		c.Keys = map[string]string{"args": strconv.Itoa(int(k.NumArgs))}
		for _, f := range k.Files {
			fc, err := w.fileEntry(f.Path, f.Data, depth)
			if err != nil {
				return nil, wrap(err, "pocl kernel %s", k.Name)
			}
			c.Children = append(c.Children, fc)
		}
		n.Children = append(n.Children, c)
	}
	return n, nil
}

func (w *walker) poclArchive(data []byte, depth int) (*Node, error) {
	a, err := poclbin.ParseArchive(data)
	if err != nil {
		return nil, wrap(err, "at offset %#x", w.offset(data))
	}
	n := w.node("poclbin-archive", data)
	n.Version = a.Version
	if a.BasePath != "" {
		n.Keys = map[string]string{"base-path": a.BasePath}
	}
	for _, e := range a.Entries {
		c, err := w.fileEntry(e.Path, e.Data, depth)
		if err != nil {
			return nil, err
		}
		n.Children = append(n.Children, c)
	}
	return n, nil
}

// fileEntry describes a stored file and what its contents are.
func (w *walker) fileEntry(path string, data []byte, depth int) (*Node, error) {
	n := w.node("file-entry", data)
	n.Name = path
	if err := w.children(n, data, depth); err != nil {
		return nil, wrap(err, "file %s", path)
	}
	if len(n.Children) == 1 && n.Children[0].Kind == "data" {
		n.Children = nil
	}
	return n, nil
}
