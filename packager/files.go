package packager

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/offcc/offcc/internal/mmapfile"
	"github.com/offcc/offcc/objfile"
)

// FileImage names a file to pack as one image: its offload kind and its
// string entries, as an --image= option gives them.
type FileImage struct {
	Path    string
	Offload OffloadKind
	Strings []KeyValue
}

// WriteFiles writes one offload binary per file to w, in order, each
// image's kind taken from its file (ImageKindFor). The files are mapped, so
// large images are written without a copy.
func WriteFiles(w io.Writer, files []FileImage) error {
	images := make([]Image, 0, len(files))
	for _, fi := range files {
		in, err := mmapfile.Open(fi.Path)
		if err != nil {
			return err
		}
		defer in.Close()
		images = append(images, Image{
			Kind:    ImageKindFor(fi.Path, in.Data),
			Offload: fi.Offload,
			Strings: fi.Strings,
			Data:    in.Data,
		})
	}
	return WriteImages(w, images)
}

// FileImagesFromSpecs turns --image= values (without the prefix) into
// FileImages, one per comma-separated file, as llvm-offload-binary packs
// them.
func FileImagesFromSpecs(specs []string) ([]FileImage, error) {
	var out []FileImage
	for _, spec := range specs {
		file, kind, strs, err := ParseImageSpec(spec)
		if err != nil {
			return nil, err
		}
		for _, f := range strings.Split(file, ",") {
			out = append(out, FileImage{Path: f, Offload: ParseOffloadKind(kind), Strings: strs})
		}
	}
	return out, nil
}

// Embed writes to w the ELF object obj with the offload binaries blobs
// added, back to back, as its .llvm.offloading section (type
// SHT_LLVM_OFFLOADING, flag SHF_EXCLUDE, alignment 8), as clang's
// -fembed-offload-object does. Every blob's size is a multiple of 8, so
// each stays 8-aligned in the section.
func Embed(w io.Writer, obj []byte, blobs [][]byte) error {
	var section []byte
	for i, b := range blobs {
		if !IsOffloadBinary(b) {
			return fmt.Errorf("blob %d is not an offload binary", i+1)
		}
		if i == 0 {
			section = b // the usual case: one blob, no copy
			continue
		}
		section = append(section[:len(section):len(section)], b...)
	}
	return objfile.WriteWithSection(w, obj, objfile.NewSection{
		Name:  ".llvm.offloading",
		Type:  objfile.SHTLLVMOffloading,
		Flags: objfile.SHFExclude,
		Align: 8,
		Data:  section,
	})
}

// EmbedFiles is Embed for a host object file and offload binary files. A
// host object compiled with an empty offload binary
// (-fembed-offload-object=/dev/null) has an empty .llvm.offloading
// section: it is filled with the blobs, laid out as if the object had been
// compiled with them (objfile.ReplaceSection), which is the object clang
// writes. Where that layout cannot be had, the empty section is dropped
// and the blobs are added as Embed does.
func EmbedFiles(w io.Writer, hostObj string, blobs []string) error {
	obj, err := mmapfile.Open(hostObj)
	if err != nil {
		return err
	}
	defer obj.Close()
	data := make([][]byte, len(blobs))
	for i, b := range blobs {
		f, err := mmapfile.Open(b)
		if err != nil {
			return err
		}
		defer f.Close()
		if !IsOffloadBinary(f.Data) {
			return fmt.Errorf("%s: not an offload binary", b)
		}
		data[i] = f.Data
	}
	host := obj.Data
	if hasEmptyOffloadSection(host) {
		merged, err := objfile.ReplaceSection(host, ".llvm.offloading", bytes.Join(data, nil))
		var re *objfile.ReplaceError
		switch {
		case err == nil:
			_, err = w.Write(merged)
			return err
		case !errors.As(err, &re):
			return fmt.Errorf("%s: %v", hostObj, err)
		}
		if host, err = objfile.RemoveSections(host, func(name string) bool { return name == ".llvm.offloading" }); err != nil {
			return fmt.Errorf("%s: %v", hostObj, err)
		}
	}
	if err := Embed(w, host, data); err != nil {
		return fmt.Errorf("%s: %v", hostObj, err)
	}
	return nil
}

// hasEmptyOffloadSection reports whether the ELF object obj has an empty
// .llvm.offloading section.
func hasEmptyOffloadSection(obj []byte) bool {
	secs, err := objfile.Sections(obj)
	if err != nil {
		return false
	}
	for _, s := range secs {
		if s.Name == ".llvm.offloading" && len(s.Data) == 0 {
			return true
		}
	}
	return false
}

// FatbinSection returns the section a HIP (hip true) or CUDA host object
// holds its fat binary in: .hip_fatbin or .nv_fatbin.
func FatbinSection(hip bool) string {
	if hip {
		return ".hip_fatbin"
	}
	return ".nv_fatbin"
}

// fatbinWrapper returns the symbol of the fat binary wrapper clang's
// CodeGen gives a HIP (hip true) or CUDA host object that registers device
// code (CGNVCUDARuntime::makeModuleCtorFunction): a 24-byte struct in
// .hipFatBinSegment or .nvFatBinSegment whose second word points to the
// fat binary.
func fatbinWrapper(hip bool) string {
	if hip {
		return "__hip_fatbin_wrapper"
	}
	return "__cuda_fatbin_wrapper"
}

// fatbinSections returns the sections clang puts a HIP or CUDA fat binary
// in: CUDA's relocatable device code (-fgpu-rdc with the old offload
// driver) goes to __nv_relfatbin.
func fatbinSections(hip bool) []string {
	if hip {
		return []string{".hip_fatbin"}
	}
	return []string{".nv_fatbin", "__nv_relfatbin"}
}

// EmbedFatbinFile writes to w the HIP or CUDA host object hostObj, compiled
// with an empty fat binary (-fcuda-include-gpubinary /dev/null), with the
// fat binary file fatbin where clang would have put it, laid out as if
// compiled with it (objfile.ExtendSection).
//
// The fat binary is the last thing in its section (FatbinSection, or
// __nv_relfatbin for CUDA's old-driver relocatable device code), aligned
// after whatever the translation unit itself put there with top-level asm
// (CUDA's crt/link.stub puts nvlink's fat binary in .nv_fatbin): the
// wrapper's pointer (fatbinWrapper) says which section and where, and
// offcc appends the fat binary there only when that is the section's
// end, which the empty one left. An object that does not read so gives an
// *objfile.ReplaceError, and the caller compiles it with the fat binary.
// An object without the wrapper registers nothing and is written as it is.
func EmbedFatbinFile(w io.Writer, hostObj, fatbin string, hip bool) error {
	obj, err := os.ReadFile(hostObj)
	if err != nil {
		return err
	}
	fb, err := os.ReadFile(fatbin)
	if err != nil {
		return err
	}
	merged, err := embedFatbin(obj, fb, hip)
	if err != nil {
		return err
	}
	_, err = w.Write(merged)
	return err
}

// embedFatbin returns the host object obj, compiled with an empty fat
// binary, with the fat binary fb in its place (see EmbedFatbinFile).
func embedFatbin(obj, fb []byte, hip bool) ([]byte, error) {
	secs, err := objfile.Sections(obj)
	if err != nil {
		return nil, err
	}
	wrapper := fatbinWrapper(hip)
	at, found, err := objfile.PointerInSymbol(obj, wrapper, 8)
	switch {
	case err != nil:
		return nil, &objfile.ReplaceError{Section: FatbinSection(hip), Reason: fmt.Sprintf("reading %s: %v", wrapper, err)}
	case !found:
		// A translation unit with no kernels and no device variables
		// registers nothing: clang's CodeGen then emits no wrapper and
		// no fat binary (what top-level asm put in a fat binary section
		// is the user's), so the object compiled with an empty one is
		// the object clang writes.
		return obj, nil
	case !slices.Contains(fatbinSections(hip), at.Section):
		return nil, &objfile.ReplaceError{Section: at.Section, Reason: wrapper + " points into it, not into a fat binary section"}
	}
	for _, s := range secs {
		if s.Name == at.Section && uint64(len(s.Data)) != at.Offset {
			return nil, &objfile.ReplaceError{Section: at.Section, Reason: fmt.Sprintf("the empty fat binary is at offset %d of %d bytes, not at the end", at.Offset, len(s.Data))}
		}
	}
	return objfile.ExtendSection(obj, at.Section, fb)
}
