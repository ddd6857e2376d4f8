package linkerwrapper

import (
	"crypto/sha256"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/offcc/offcc/objfile"
	"github.com/offcc/offcc/packager"
	"github.com/offcc/offcc/target"
)

// ompKernelPrefix starts the name of every OpenMP kernel (and the offload
// entry that registers it): __omp_offloading_<device>_<file>_<function>_l<line>.
const ompKernelPrefix = "__omp_offloading_"

// checkKernelNames refuses a program in which two objects define one
// OpenMP kernel name for one target with different device code. clang
// names a kernel after the file its target region is in (its inode, or a
// hash of its name) and the line, so two files that share a name, or one
// file compiled twice under different macros, give two kernels one name;
// the device link keeps one of them, and the program runs it for both.
// Kernels compiled alike (one header's, in several objects) are the same
// code and link as they always do. Device code that is not an ELF object
// (LLVM bitcode for LTO) is not compared.
func checkKernelNames(images []deviceImage, symbols imageSymbols) error {
	type key struct {
		t    target.Target
		name string
	}
	// The names first (cheap): only an image that shares a kernel name
	// with another has its code compared.
	count := map[key]int{}
	names := make([][]string, len(images))
	for i := range images {
		im := &images[i]
		if im.image.Offload != packager.OffloadOpenMP || !objfile.IsELF(im.image.Data) {
			continue
		}
		syms, _, err := symbols.of(im.image.Data)
		if err != nil {
			return fmt.Errorf("%s: the %s device image: %v", im.where(), im.id(), err)
		}
		for _, s := range syms {
			if !s.Undefined && strings.HasPrefix(s.Name, ompKernelPrefix) {
				names[i] = append(names[i], s.Name)
				count[key{im.id(), s.Name}]++
			}
		}
	}
	type seen struct {
		digest [sha256.Size]byte
		im     *deviceImage
	}
	kernels := map[key]seen{}
	for i := range images {
		im := &images[i]
		if !slices.ContainsFunc(names[i], func(n string) bool { return count[key{im.id(), n}] > 1 }) {
			continue
		}
		digests, err := objfile.CodeDigests(im.image.Data, ompKernelPrefix)
		if err != nil {
			return fmt.Errorf("%s: the %s device image: %v", im.where(), im.id(), err)
		}
		for name, d := range digests {
			k := key{im.id(), name}
			first, ok := kernels[k]
			if !ok {
				kernels[k] = seen{d, im}
				continue
			}
			if first.digest != d {
				return &KernelCollisionError{Kernel: name, First: first.im.where(), Second: im.where(),
					FirstSource: first.im.sourceFile, SecondSource: im.sourceFile}
			}
		}
	}
	return nil
}

// where names the object an image came from.
func (d *deviceImage) where() string {
	if d.object != "" {
		return d.object
	}
	return d.source
}

// KernelCollisionError is a program whose objects define one OpenMP kernel
// name with different device code (see checkKernelNames).
type KernelCollisionError struct {
	// Kernel is the kernel's name; First and Second the objects, and
	// FirstSource and SecondSource the source files they were compiled
	// from ("" if unknown).
	Kernel, First, Second, FirstSource, SecondSource string
}

func (e *KernelCollisionError) Error() string {
	what := "an OpenMP kernel"
	if m := kernelNameRE.FindStringSubmatch(e.Kernel); m != nil {
		what = fmt.Sprintf("the OpenMP kernel of %s at line %s", m[1], m[2])
	}
	from := func(obj, src string) string {
		if src == "" {
			return obj
		}
		return obj + " (from " + src + ")"
	}
	return fmt.Sprintf("%s has different device code in %s and in %s under one name (%s), and the program would run one of them for both: "+
		"compile a kernel alike in every object that has it, or rebuild the objects with offcc, whose kernel names differ for different files and options",
		what, from(e.First, e.FirstSource), from(e.Second, e.SecondSource), e.Kernel)
}

// kernelNameRE reads the enclosing function's (mangled) name and the line
// from an OpenMP kernel name.
var kernelNameRE = regexp.MustCompile(`^__omp_offloading_[0-9a-f]+_[0-9a-f]+_(.+)_l(\d+)$`)
