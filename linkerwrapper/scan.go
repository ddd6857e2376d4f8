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
}

// id is the (triple, arch) pair images are grouped by.
func (d *deviceImage) id() target.Target { return target.Target{Triple: d.triple, Arch: d.arch} }

// lazyMember is an archive member that is linked only when it resolves a
// symbol that is undefined so far. Its offload images are read only then.
type lazyMember struct {
	name, stem, source string
	data               []byte
	defined, undefined []string
	loaded             bool
}

// images returns the offload images embedded in the member.
func (m *lazyMember) images() ([]deviceImage, error) {
	return objectImages(m.name, m.data, m.stem, m.source)
}

// scanResult is what the input scan found.
type scanResult struct {
	images []deviceImage
	// bitcode lists host inputs that are LLVM bitcode (LTO): offcc cannot
	// read offload images from them.
	bitcode []string
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
// images. Objects and whole archives contribute all their images; other
// archive members only when, like a linker, they define a symbol that the
// objects and members loaded so far leave undefined (to a fixed point), and
// only for (triple, arch) pairs some regular input has, or whose arch was
// named by --should-extract.
func scanInputs(o *options) (*scanResult, error) {
	var libPaths []string
	for _, it := range o.items {
		if it.kind == itemLibraryPath {
			libPaths = append(libPaths, it.value)
		}
	}
	res := &scanResult{}
	defined := map[string]bool{}
	undefined := map[string]bool{}
	addSyms := func(def, undef []string) {
		for _, s := range def {
			defined[s] = true
		}
		for _, s := range undef {
			undefined[s] = true
		}
	}
	var lazy []*lazyMember
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
		case itemInput:
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
			if def, undef, err := objfile.Symbols(data); err == nil {
				addSyms(def, undef)
			}
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
				member := &lazyMember{name: fmt.Sprintf("%s(%s)", path, m.Name), stem: stemOf(m.Name), source: path, data: m.Data}
				member.defined, member.undefined, _ = objfile.Symbols(m.Data)
				if whole {
					imgs, err := member.images()
					if err != nil {
						return nil, err
					}
					res.images = append(res.images, imgs...)
					addSyms(member.defined, member.undefined)
					continue
				}
				lazy = append(lazy, member)
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

	// Regular inputs decide which targets archive images may join.
	have := map[target.Target]bool{}
	for i := range res.images {
		have[res.images[i].id()] = true
	}
	for changed := true; changed; {
		changed = false
		for _, m := range lazy {
			if m.loaded || !resolvesUndefined(m.defined, defined, undefined) {
				continue
			}
			m.loaded, changed = true, true
			addSyms(m.defined, m.undefined)
			imgs, err := m.images()
			if err != nil {
				return nil, err
			}
			for _, im := range imgs {
				if have[im.id()] || o.shouldExtract[im.arch] {
					res.images = append(res.images, im)
				}
			}
		}
	}
	return res, nil
}

// resolvesUndefined reports whether a member defining defs resolves a symbol
// that is referenced and not yet defined.
func resolvesUndefined(defs []string, defined, undefined map[string]bool) bool {
	for _, s := range defs {
		if undefined[s] && !defined[s] {
			return true
		}
	}
	return false
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
	for _, im := range imgs {
		triple, _ := im.Get("triple")
		arch, _ := im.Get("arch")
		out = append(out, deviceImage{image: im, triple: triple, arch: arch, stem: stem, source: source})
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
