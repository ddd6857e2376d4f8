// Package inspect identifies the offload containers in a file (ELF objects
// and their offload sections, ar archives, offload binaries, clang offload
// bundles in binary, text and compressed form, NVIDIA fat binaries,
// SYCLBIN and poclbin files), nested in any combination, and describes
// them as a tree of Nodes.
package inspect

import (
	"fmt"
	"unsafe"
)

// Node is one recognised piece of a file.
type Node struct {
	// Kind names what the bytes are: "elf", "section", "archive",
	// "offload-binary", "image", "bundle", "bundle-entry",
	// "compressed-bundle", "nv-fatbin", "nv-fatbin-entry",
	// "nv-fatbin-wrapper", "syclbin", "syclbin-module", "syclbin-ir",
	// "syclbin-native", "syclbin-property-set", "pocl-program",
	// "pocl-kernel", "poclbin-archive", "file-entry", "bitcode", "spirv",
	// "ptx" or "data".
	//
	// An "elf" node's Format names an ET_DYN file with DF_1_PIE a "PIE
	// executable", other ET_DYN files a "shared object". A "pocl-kernel"
	// node covers its kernel record (struct_size bytes), with the key
	// "args" and its files as children.
	//
	// A "syclbin" node (Version 1 or 2) has the keys "encoding" ("bare",
	// "v1": in an offload binary image, "v2": spread over the entries of
	// a version 2 offload binary, its parent) and "state". Its
	// "syclbin-module" children (abstract modules, named by index) and
	// "syclbin-property-set" nodes (named by set, keys and values in
	// Keys) have no bytes of their own: Offset is 0, and a module's Size
	// is the sum of its IR modules and native images.
	Kind string `json:"kind"`
	// Name is the file, archive member, section, bundle ID, entry path,
	// SYCLBIN module index or property set.
	Name string `json:"name,omitempty"`
	// Offset is where the node starts in the file, or in the decompressed
	// data for nodes under a compressed bundle or under an LZ4-compressed
	// fat binary entry.
	Offset uint64 `json:"offset"`
	// Size is the node's length in bytes.
	Size uint64 `json:"size"`
	// Version is the container's format version, where it has one.
	Version uint32 `json:"version,omitempty"`
	// Format qualifies Kind: the ELF type and machine, an offload image's
	// kind ("elf", "llvm ir", ...), a bundle's form ("binary", "text //"),
	// a compression method, a fat binary entry's kind ("PTX", "ELF").
	Format string `json:"format,omitempty"`
	// Producer is the offload kind: "openmp", "hip", "sycl", ... ("cuda"
	// or "opencl" for fat binary entries whose flags say so).
	Producer string `json:"producer,omitempty"`
	// Triple and Arch name the target of device code.
	Triple string `json:"triple,omitempty"`
	Arch   string `json:"arch,omitempty"`
	// Keys holds further metadata (string entries, header fields). A fat
	// binary entry has "code-version" (the PTX ISA version of PTX, the
	// cubin version of ELF), "flags" and, where they apply, "compression"
	// ("lz4", "zstd", "legacy"), "compressed-size", "uncompressed-size",
	// "identifier", "ptxas-options" and "debug".
	Keys map[string]string `json:"keys,omitempty"`
	// Kernels lists a SYCLBIN module's kernels ("SYCL/kernel names").
	Kernels []string `json:"kernels,omitempty"`
	// Error is set, on a root node of kind "error" only, when the file
	// could not be read or parsed (Main's JSON output).
	Error string `json:"error,omitempty"`
	// Children are the nodes found inside this one.
	Children []*Node `json:"children,omitempty"`
}

// MaxDepth bounds the nesting of containers Inspect follows; deeper
// content is reported as an error (a crafted file could nest forever).
const MaxDepth = 32

// Inspect describes data, the contents of the file called name. The root
// node is named name. Malformed input anywhere in the tree gives an error
// that names the path to it, the structure and its offset.
func Inspect(name string, data []byte) (*Node, error) {
	budget := inflateBudget(len(data))
	w := &walker{base: data, inflate: &budget}
	nodes, err := w.all(data, 0)
	if err != nil {
		return nil, err
	}
	if len(nodes) == 1 {
		nodes[0].Name = name
		return nodes[0], nil
	}
	// Several containers back to back (e.g. a dumped .hip_fatbin section).
	return &Node{Kind: "sequence", Name: name, Size: uint64(len(data)), Children: nodes}, nil
}

// walker turns byte slices into nodes. base is the buffer offsets are
// measured in: the file, or the output of a decompression.
type walker struct {
	base []byte
	// inflate is what LZ4-compressed fat binary entries may still
	// decompress to in this walk (see inflateBudget), shared by the
	// walkers of one Inspect call.
	inflate *uint64
}

// inflateBudget is how many bytes the LZ4-compressed fat binary entries of
// an n-byte file may decompress to in all: 64 times the file size, at
// least 256 MiB. Real fat binaries compress PTX a few times over.
func inflateBudget(n int) uint64 { return max(256<<20, 64*uint64(n)) }

// offset returns where b starts in w.base (0 when b is not inside it).
func (w *walker) offset(b []byte) uint64 {
	if cap(b) == 0 || len(w.base) == 0 {
		return 0
	}
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	start := uintptr(unsafe.Pointer(unsafe.SliceData(w.base)))
	if p < start || p-start > uintptr(len(w.base)) {
		return 0
	}
	return uint64(p - start)
}

// node makes a node covering b.
func (w *walker) node(kind string, b []byte) *Node {
	return &Node{Kind: kind, Offset: w.offset(b), Size: uint64(len(b))}
}

// wrap prefixes err with where it happened.
func wrap(err error, format string, args ...any) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), err)
}
