package linkerwrapper

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/offcc/offcc/objfile"
	"github.com/offcc/offcc/packager"
	"github.com/offcc/offcc/target"
)

// deviceImage is one offload image found in the host inputs.
type deviceImage struct {
	image  packager.Image
	triple string
	arch   string
	// stem names the file the image came from (object or archive member),
	// without directory and extension, for temporary file names.
	stem string
	// source is the input file (object or archive) that holds the image.
	source string
	// object names the object the image is embedded in: source, or
	// source(member) for an archive member; "" for an offload binary.
	object string
	// sourceFile is the source file that object was compiled from (its
	// STT_FILE symbol), or "".
	sourceFile string
}

// id is the (triple, arch) pair images are grouped by.
func (d *deviceImage) id() target.Target { return target.Target{Triple: d.triple, Arch: d.arch} }

// scanResult is what the input scan found.
type scanResult struct {
	images []deviceImage
	// bitcode lists host inputs that are LLVM bitcode (LTO): offcc cannot
	// read offload images from them.
	bitcode []string
	// unreadable lists archive device images whose symbols offcc cannot
	// read (bitcode without a current IR symbol table, which LLVM would
	// rebuild from the IR): LLVM's wrapper decides their extraction.
	unreadable []string
	// symbols are the images' symbols, read once for the extraction and
	// the kernel check.
	symbols imageSymbols
}

// imageSymbols holds what objfile.ImageSymbols said of each device image,
// by the address of its first byte, so that each is read once.
type imageSymbols map[*byte]imageSymbolsResult

type imageSymbolsResult struct {
	syms  []objfile.Symbol
	known bool
	err   error
}

// of returns objfile.ImageSymbols(data), read once per image.
func (c imageSymbols) of(data []byte) ([]objfile.Symbol, bool, error) {
	if len(data) == 0 {
		return objfile.ImageSymbols(data)
	}
	r, ok := c[&data[0]]
	if !ok {
		r.syms, r.known, r.err = objfile.ImageSymbols(data)
		c[&data[0]] = r
	}
	return r.syms, r.known, r.err
}

var (
	elfMagic     = []byte("\x7fELF")
	bitcodeMagic = []byte("BC\xc0\xde")
)

const (
	elfTypeRel = 1
	elfTypeDyn = 3
)

// scanInputs reads the host inputs in link order and returns their offload
// images as clang-linker-wrapper 22 selects them (getDeviceInput): every
// image of the objects, offload binaries and whole archives; of other
// archives, only the images that resolve a device symbol, per (triple,
// arch) that a regular input has (or whose arch --should-extract names).
// An archive image is extracted when, in the symbol table of its target,
// it defines a symbol still undefined and not weak, or a new global,
// non-hidden one (offload code may be called from the host), and the scan
// repeats until no image is extracted, as ld.lld's lenient order does.
// Symbols are the device images' own: a member whose host object defines
// nothing the host needs is still linked for its device code.
func scanInputs(o *options) (*scanResult, error) {
	var libPaths []string
	for _, it := range o.items {
		if it.kind == itemLibraryPath {
			libPaths = append(libPaths, it.value)
		}
	}
	res := &scanResult{symbols: imageSymbols{}}
	var archived []deviceImage // images of non-whole archive members, in order
	whole := false
	for _, it := range o.items {
		var path string
		switch it.kind {
		case itemWholeArchive:
			whole = true
			continue
		case itemNoWholeArchive:
			whole = false
			continue
		case itemInput, itemOptionValue:
			path = it.value
		case itemLibrary:
			p, err := searchLibrary(it.value, o.sysroot, libPaths)
			if err != nil {
				return nil, err
			}
			if p == "" { // a shared library: nothing to extract
				continue
			}
			path = p
		default:
			continue
		}
		st, err := os.Stat(path)
		if err != nil || st.IsDir() {
			continue
		}
		head, err := readHead(path, 20)
		if err != nil {
			return nil, err
		}
		switch {
		case bytes.HasPrefix(head, elfMagic):
			if len(head) >= 18 && head[16] == elfTypeDyn {
				continue
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return nil, err
			}
			imgs, err := objectImages(path, data, stemOf(path), path)
			if err != nil {
				return nil, err
			}
			res.images = append(res.images, imgs...)
		case objfile.IsArchive(head):
			data, err := os.ReadFile(path)
			if err != nil {
				return nil, err
			}
			ar, err := objfile.ParseArchive(data)
			if err != nil {
				return nil, fmt.Errorf("%s: %v", path, err)
			}
			for _, m := range ar.Members {
				if !objfile.IsELF(m.Data) {
					if bytes.HasPrefix(m.Data, bitcodeMagic) {
						res.bitcode = append(res.bitcode, path+"("+m.Name+")")
					}
					continue
				}
				imgs, err := objectImages(fmt.Sprintf("%s(%s)", path, m.Name), m.Data, stemOf(m.Name), path)
				if err != nil {
					return nil, err
				}
				if whole {
					res.images = append(res.images, imgs...)
				} else {
					archived = append(archived, imgs...)
				}
			}
		case bytes.HasPrefix(head, bitcodeMagic):
			res.bitcode = append(res.bitcode, path)
		case packager.IsOffloadBinary(head):
			// A packaged device compile, as clang passes HIP's
			// compile-time link (--emit-fatbin-only).
			data, err := os.ReadFile(path)
			if err != nil {
				return nil, err
			}
			imgs, err := packager.Parse(data)
			if err != nil {
				return nil, fmt.Errorf("%s: %v", path, err)
			}
			for _, im := range imgs {
				triple, _ := im.Get("triple")
				arch, _ := im.Get("arch")
				res.images = append(res.images, deviceImage{image: im, triple: triple, arch: arch, stem: stemOf(path), source: path})
			}
		}
	}

	for _, im := range extractArchived(res.images, archived, o.shouldExtract, res.symbols) {
		if im.unreadable {
			res.unreadable = append(res.unreadable, im.source+" ("+im.triple+" "+im.arch+")")
			continue
		}
		res.images = append(res.images, im.deviceImage)
	}
	return res, nil
}

// symbolState is what a device link's symbol table knows of a name.
type symbolState uint8

const (
	symUndefined symbolState = 1 << iota
	symWeak
)

// symbolTable is the symbol table of one device link (one target).
type symbolTable map[string]symbolState

// addImage merges the global symbols of an offload image into t as
// clang-linker-wrapper's getSymbols does, and reports whether the image
// should be extracted: always for a regular input; for an archive image
// when it defines a symbol that is undefined and not weak so far, or a
// new global one (not hidden, nor, in bitcode, omittable) of an offload
// language. The table changes only when the image is extracted. ok is
// false for images whose symbols cannot be read (see objfile.ImageSymbols).
func (t symbolTable) addImage(im *packager.Image, archive bool, symbols imageSymbols) (extract, ok bool) {
	syms, known, err := symbols.of(im.Data)
	if err != nil {
		return false, false
	}
	if !known {
		// Not an object or bitcode (PTX, SPIR-V, ...): LLVM extracts
		// nothing from it and reads no symbols.
		return false, true
	}
	extract = !archive
	tmp := symbolTable{}
	for _, sym := range syms {
		if !sym.Global || sym.FormatSpecific {
			continue
		}
		old, seen := t[sym.Name]
		resolvesStrong := old&symUndefined != 0 && old&symWeak == 0 && !sym.Undefined
		newGlobal := (!seen || old&symUndefined != 0) && !sym.Undefined && !sym.MayOmit &&
			im.Offload != packager.OffloadNone && !sym.Hidden
		extract = extract || resolvesStrong || newGlobal
		// As LLVM: each update starts from the table's state, the last wins.
		if old&symUndefined != 0 && !sym.Undefined {
			tmp[sym.Name] = old &^ symUndefined
		}
		if sym.Undefined && !seen {
			tmp[sym.Name] = old | symUndefined
		}
		if sym.Weak {
			tmp[sym.Name] = old | symWeak
		}
	}
	if extract {
		for name, st := range tmp {
			t[name] = st
		}
	}
	return extract, true
}

// archivedImage is an archive image chosen for the link.
type archivedImage struct {
	deviceImage
	// unreadable: its symbols could not be read, so offcc cannot decide.
	unreadable bool
}

// extractArchived returns the archive images the link takes, in the order
// clang-linker-wrapper 22 extracts them: the regular inputs' images fill
// one symbol table per target (and per compatible target); then, over and
// over until nothing changes, each archive image not yet taken is offered
// to its own target and each compatible one that a regular input has, in
// order, and a pass restarts after an extraction. Images whose arch
// --should-extract names are taken whatever they define.
func extractArchived(regular, archived []deviceImage, shouldExtract map[string]bool, symbols imageSymbols) []archivedImage {
	var ids []target.Target
	tables := map[target.Target]symbolTable{}
	compatible := func(id target.Target) []target.Target {
		out := []target.Target{id}
		for _, other := range ids {
			if target.Compatible(id, other) {
				out = append(out, other)
			}
		}
		return out
	}
	for i := range regular {
		im := &regular[i]
		for _, id := range compatible(im.id()) {
			if tables[id] == nil {
				tables[id] = symbolTable{}
				ids = append(ids, id)
			}
			tables[id].addImage(&im.image, false, symbols)
		}
	}
	var out []archivedImage
	taken := make([]bool, len(archived))
	for i := range archived {
		if shouldExtract[archived[i].arch] {
			taken[i] = true
			out = append(out, archivedImage{deviceImage: archived[i]})
		}
	}
	for again := true; again; {
		again = false
		for i := range archived {
			if taken[i] {
				continue
			}
			im := &archived[i]
			var extracted, chosen bool
			targets := compatible(im.id())
			for k, id := range targets {
				t := tables[id]
				if t == nil {
					continue // no regular input of this target
				}
				ex, ok := t.addImage(&im.image, true, symbols)
				if !ok {
					taken[i] = true
					out = append(out, archivedImage{deviceImage: *im, unreadable: true})
					break
				}
				extracted = ex
				if !ex {
					continue
				}
				if !chosen {
					chosen = true
					out = append(out, archivedImage{deviceImage: *im})
				}
				// LLVM moves the image into the last target that takes it.
				if k == len(targets)-1 {
					taken[i] = true
				}
			}
			if extracted {
				again = true
				break
			}
		}
	}
	return out
}

// objectImages returns the offload images embedded in the ELF object data.
func objectImages(name string, data []byte, stem, source string) ([]deviceImage, error) {
	imgs, err := packager.ImagesInELF(data)
	if errors.Is(err, packager.ErrNotReadableELF) {
		// Not an object we can read (e.g. 32-bit); the host linker decides.
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: invalid offloading section: %v", name, err)
	}
	var out []deviceImage
	file := ""
	if len(imgs) > 0 {
		file = objfile.SourceFile(data)
	}
	for _, im := range imgs {
		triple, _ := im.Get("triple")
		arch, _ := im.Get("arch")
		out = append(out, deviceImage{image: im, triple: triple, arch: arch, stem: stem, source: source, object: name, sourceFile: file})
	}
	return out, nil
}

// searchLibrary resolves -l<name> like clang-linker-wrapper: "-l:file"
// searches for the file name; otherwise, in each directory in turn,
// lib<name>.so wins over lib<name>.a. It returns "" for a shared library and
// an error when nothing is found.
func searchLibrary(name, sysroot string, dirs []string) (string, error) {
	find := func(dir, file string) string {
		var p string
		if strings.HasPrefix(dir, "=") {
			p = filepath.Join(sysroot, dir[1:], file)
		} else {
			p = filepath.Join(dir, file)
		}
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p
		}
		return ""
	}
	if strings.HasPrefix(name, ":") {
		for _, d := range dirs {
			if p := find(d, name[1:]); p != "" {
				return p, nil
			}
		}
	} else {
		for _, d := range dirs {
			if find(d, "lib"+name+".so") != "" {
				return "", nil
			}
			if p := find(d, "lib"+name+".a"); p != "" {
				return p, nil
			}
		}
	}
	return "", fmt.Errorf("unable to find library -l%s", name)
}

// readHead reads up to n bytes from the start of a file.
func readHead(path string, n int) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf := make([]byte, n)
	k, err := io.ReadFull(f, buf)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return nil, err
	}
	return buf[:k], nil
}

// stemOf is the file name without directory and last extension.
func stemOf(p string) string {
	b := filepath.Base(p)
	return strings.TrimSuffix(b, filepath.Ext(b))
}

// group is one device link: the images of one (triple, arch) plus the
// compatible ones ("generic", or a compatible AMD target ID).
type group struct {
	id     target.Target
	images []deviceImage
}

// groupImages groups images like clang-linker-wrapper: each image joins every
// group seen so far whose target is compatible with it (same triple and one
// arch is "generic", or compatible AMDGPU target IDs), and the group of its
// own (triple, arch), created on first sight. Groups keep first-seen order.
func groupImages(images []deviceImage) []*group {
	var groups []*group
	byID := map[target.Target]*group{}
	for _, im := range images {
		id := im.id()
		for _, g := range groups {
			if target.Compatible(id, g.id) {
				g.images = append(g.images, im)
			}
		}
		g := byID[id]
		if g == nil {
			g = &group{id: id}
			byID[id] = g
			groups = append(groups, g)
		}
		g.images = append(g.images, im)
	}
	return groups
}
