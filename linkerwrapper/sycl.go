package linkerwrapper

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/offcc/offcc/actions"
	"github.com/offcc/offcc/packager"
	"github.com/offcc/offcc/target"
)

// offloadKind returns the one offload kind of a group's images.
func (g *group) offloadKind() (packager.OffloadKind, error) {
	kind := g.images[0].image.Offload
	for _, im := range g.images[1:] {
		if im.image.Offload != kind {
			return 0, fmt.Errorf("linking %s and %s device images for %s together is not supported yet", kind, im.image.Offload, g.id)
		}
	}
	return kind, nil
}

// linkable reports whether clang-linker-wrapper 22 links device code for
// triple: of the SPIR-V targets only spirv64 ("spirv32 linking is not
// supported").
func linkable(triple string) bool {
	return !target.IsSPIRV(triple) || target.ArchName(triple) == "spirv64"
}

// syclImage is one device image of a SYCL link, as the registration code
// describes it.
type syclImage struct {
	triple   string
	offload  uint8  // the offload kind the device link recorded
	format   uint8  // its image kind
	symbols  string // newline-separated kernel names
	dataPath string // absolute path of the raw image bytes
	size     int
}

// syclWrapActions plans the SYCL wrapping: an in-process action that reads
// the offload binaries clang-sycl-linker wrote (one per device link),
// writes each image's bytes to a file and generates the registration
// module, and the clang command that compiles it. clang-linker-wrapper 22
// registers only the first device link's images; offcc registers the
// images of every link, in clang-linker-wrapper's order.
func (l *linkPlan) syclWrapActions(devs []*deviceLink) (wrap, compile *actions.Action, err error) {
	wrap, compile = l.wrapperActions(actions.SYCL)
	irFile := wrap.Outputs[0].Path
	var imgs []string
	for _, d := range clangImageOrder(devs) {
		wrap.Inputs = append(wrap.Inputs, d.link.Outputs[0])
		imgs = append(imgs, d.link.Outputs[0].Path)
	}
	printIR := l.o.printWrapped
	triple := l.o.hostTriple
	// The image files are named when the wrap runs (their number depends
	// on what clang-sycl-linker wrote); they live in the link's private
	// temporary directory, or in the working directory with --save-temps.
	dataDir, saveTemps := l.tmpDir, l.o.saveTemps
	outBase := l.outBase
	wrap.Run = func(_ context.Context, sh *actions.Shell) error {
		var images []syclImage
		for _, p := range imgs {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			ims, err := packager.Parse(data)
			if err != nil {
				return fmt.Errorf("%s: %v", p, err)
			}
			for _, im := range ims {
				name := fmt.Sprintf("%s.sycl.%d.data", outBase, len(images))
				if !saveTemps {
					f, err := os.CreateTemp(dataDir, fmt.Sprintf("%s.sycl.%d-*.data", outBase, len(images)))
					if err != nil {
						return err
					}
					name = f.Name()
					f.Close()
				}
				if err := sh.WriteFile(name, im.Data, 0o666); err != nil {
					return err
				}
				abs, err := filepath.Abs(name)
				if err != nil {
					return err
				}
				triple, _ := im.Get("triple")
				symbols, _ := im.Get("symbols")
				images = append(images, syclImage{
					triple: triple, offload: uint8(im.Offload), format: uint8(im.Kind),
					symbols: symbols, dataPath: abs, size: len(im.Data),
				})
			}
		}
		if len(images) == 0 {
			return fmt.Errorf("no binary descriptors created")
		}
		return writeModule(sh, irFile, syclWrapperIR(triple, images), printIR)
	}
	return wrap, compile, nil
}

// syclWrapperIR returns the registration module clang-linker-wrapper 22
// generates for SYCL (llvm/lib/Frontend/Offloading/OffloadWrapper.cpp,
// SYCLWrapper) as LLVM IR text: per image a __sycl.tgt_device_image
// (version 3) naming its triple, empty compile and link options, its bytes
// in section .llvm.offloading and one offload entry per kernel name; the
// __sycl.tgt_bin_desc (version 1) over them; and the constructor and
// destructor (priority 1) that pass it to __sycl_register_lib and
// __sycl_unregister_lib. The image bytes enter through .incbin.
func syclWrapperIR(triple string, images []syclImage) string {
	var b strings.Builder
	b.WriteString("; ModuleID = 'offload.wrapper.module'\n")
	b.WriteString("source_filename = \"offload.wrapper.module\"\n")
	fmt.Fprintf(&b, "target triple = \"%s\"\n\n", irAsmEscape(triple))
	for i, im := range images {
		sym := syclDataSymbol(i)
		b.WriteString("module asm \".pushsection .llvm.offloading,\\22a\\22,@llvm_offloading\"\n")
		b.WriteString("module asm \".p2align 4\"\n")
		fmt.Fprintf(&b, "module asm \"%s:\"\n", sym)
		fmt.Fprintf(&b, "module asm \".incbin \\22%s\\22\"\n", irAsmEscape(im.dataPath))
		fmt.Fprintf(&b, "module asm \".size %s, %d\"\n", sym, im.size)
		b.WriteString("module asm \".popsection\"\n")
	}
	b.WriteString(`
%struct.__tgt_offload_entry = type { i64, i16, i16, i32, ptr, ptr, i64, i64, ptr }
%__sycl.tgt_device_image = type { i16, i8, i8, ptr, ptr, ptr, ptr, ptr, ptr, ptr, ptr, ptr }
%__sycl.tgt_bin_desc = type { i16, i16, ptr, ptr, ptr }

`)
	nameID := 0
	// A kernel in several images gets one entry symbol each; LLVM names
	// the later ones with a numeric suffix.
	seen := map[string]int{}
	var wrapped []string
	for i, im := range images {
		fmt.Fprintf(&b, "@.sycl_offloading.target.%d = internal unnamed_addr constant %s\n", i, irCString(im.triple))
		fmt.Fprintf(&b, "@.sycl_offloading.opts.compile.%d = internal unnamed_addr constant [1 x i8] zeroinitializer\n", i)
		fmt.Fprintf(&b, "@.sycl_offloading.opts.link.%d = internal unnamed_addr constant [1 x i8] zeroinitializer\n", i)
		fmt.Fprintf(&b, "@%s = external dso_local constant [0 x i8]\n", syclDataSymbol(i))
		var entries []string
		for _, name := range strings.Split(im.symbols, "\n") {
			if name == "" {
				continue
			}
			nameVar := fmt.Sprintf("@.offloading.entry_name.%d", nameID)
			nameID++
			entry := fmt.Sprintf("%%struct.__tgt_offload_entry { i64 0, i16 1, i16 8, i32 0, ptr null, ptr %s, i64 0, i64 0, ptr null }", nameVar)
			fmt.Fprintf(&b, "%s = internal unnamed_addr constant %s, section \".llvm.rodata.offloading\", align 1\n", nameVar, irCString(name))
			sym := ".offloading.entry." + name
			if n := seen[name]; n > 0 {
				sym = fmt.Sprintf("%s.%d", sym, n)
			}
			seen[name]++
			fmt.Fprintf(&b, "@%s = weak constant %s, section \"llvm_offload_entries\", align 8\n", irName(sym), entry)
			entries = append(entries, entry)
		}
		arr := fmt.Sprintf("@.sycl_offloading.entries_arr.%d", i)
		fmt.Fprintf(&b, "%s = internal constant [%d x %%struct.__tgt_offload_entry] [%s]\n", arr, len(entries), strings.Join(entries, ", "))
		wrapped = append(wrapped, fmt.Sprintf("%%__sycl.tgt_device_image { i16 3, i8 %d, i8 %d, ptr @.sycl_offloading.target.%d, ptr @.sycl_offloading.opts.compile.%d, ptr @.sycl_offloading.opts.link.%d, ptr @%s, ptr getelementptr (i8, ptr @%s, i64 %d), ptr %s, ptr getelementptr ([%d x %%struct.__tgt_offload_entry], ptr %s, i64 0, i64 %d), ptr null, ptr null }",
			im.offload, im.format, i, i, i, syclDataSymbol(i), syclDataSymbol(i), im.size, arr, len(entries), arr, len(entries)))
	}
	fmt.Fprintf(&b, "@.sycl_offloading.device_images = internal unnamed_addr constant [%d x %%__sycl.tgt_device_image] [%s]\n", len(images), strings.Join(wrapped, ", "))
	fmt.Fprintf(&b, "@.sycl_offloading.descriptor = internal constant %%__sycl.tgt_bin_desc { i16 1, i16 %d, ptr @.sycl_offloading.device_images, ptr null, ptr null }\n", len(images))
	b.WriteString(`@llvm.global_ctors = appending global [1 x { i32, ptr, ptr }] [{ i32, ptr, ptr } { i32 1, ptr @sycl.descriptor_reg, ptr null }]
@llvm.global_dtors = appending global [1 x { i32, ptr, ptr }] [{ i32, ptr, ptr } { i32 1, ptr @sycl.descriptor_unreg, ptr null }]

define internal void @sycl.descriptor_reg() section ".text.startup" {
entry:
  call void @__sycl_register_lib(ptr @.sycl_offloading.descriptor)
  ret void
}

declare void @__sycl_register_lib(ptr)

define internal void @sycl.descriptor_unreg() section ".text.startup" {
entry:
  call void @__sycl_unregister_lib(ptr @.sycl_offloading.descriptor)
  ret void
}

declare void @__sycl_unregister_lib(ptr)
`)
	return b.String()
}

// syclDataSymbol names the local assembler symbol at the start of image i.
func syclDataSymbol(i int) string { return fmt.Sprintf(".sycl_offloading.%d.data", i) }
