package linkerwrapper

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/offcc/offcc/actions"
	"github.com/offcc/offcc/objfile"
	"github.com/offcc/offcc/packager"
	"github.com/offcc/offcc/spirv"
	"github.com/offcc/offcc/syclbin"
	"github.com/offcc/offcc/syclbinlink"
	"github.com/offcc/offcc/target"
)

// This file is the link stage's SYCLBIN mode (--syclbin=STATE, what
// offcc -fsyclbin runs): instead of a program it writes one .syclbin file
// holding the SYCL device images of its inputs. The inputs are offload
// binaries (the driver's packaged device compiles), objects and archives
// with embedded SYCL images, and .syclbin files.
//
// In executable state the images of each (triple, arch) are linked by
// clang-sycl-linker (clang --sycl-link), as a program's link stage does;
// unresolved symbols are errors. In input and object state each image is
// compiled by itself and keeps its imports. Every device link output
// becomes one abstract module: its SPIR-V an IR module (no arch) or a
// native image (an arch), its kernels the module's "SYCL/kernel names".
// .syclbin inputs join as they are (input and object state), or are linked
// with the rest by offcc's SYCLBIN link (executable state).

// syclbinInput is a .syclbin file named on the command line.
type syclbinInput struct {
	path string
	file *syclbin.File
}

// planSYCLBIN plans the SYCLBIN mode: the device links and the action
// that writes the file.
func (l *linkPlan) planSYCLBIN() ([]*actions.Action, error) {
	o := l.o
	state, err := syclbin.ParseState(o.syclbin)
	if err != nil {
		return nil, err
	}
	// The inputs in order: .syclbin files and offload binaries are read
	// here, objects and archives (every member: there is no host link to
	// pull members in) by the usual scan.
	var bins []syclbinInput
	var images []deviceImage
	for _, it := range o.items {
		if it.kind != itemInput {
			continue
		}
		head, err := readHead(it.value, 8)
		if err != nil {
			return nil, fmt.Errorf("cannot read %s: %v", it.value, err)
		}
		switch {
		case syclbin.IsFile(head) || packager.IsOffloadBinary(head):
			data, err := os.ReadFile(it.value)
			if err != nil {
				return nil, err
			}
			if f, _, err := syclbin.Decode(data); err == nil {
				bins = append(bins, syclbinInput{it.value, f})
				continue
			} else if syclbin.IsFile(data) {
				return nil, fmt.Errorf("%s: %v", it.value, err)
			}
			ims, err := packager.Parse(data)
			if err != nil {
				return nil, fmt.Errorf("%s: %v", it.value, err)
			}
			for _, im := range ims {
				triple, _ := im.Get("triple")
				arch, _ := im.Get("arch")
				images = append(images, deviceImage{image: im, triple: triple, arch: arch, stem: stemOf(it.value), source: it.value})
			}
		case bytes.HasPrefix(head, elfMagic) || objfile.IsArchive(head) || bytes.HasPrefix(head, bitcodeMagic):
			scan := *o
			scan.items = []item{{itemWholeArchive, ""}, it}
			res, err := scanInputs(&scan)
			if err != nil {
				return nil, err
			}
			if len(res.bitcode) > 0 {
				return nil, fmt.Errorf("cannot read SYCL device images from LLVM bitcode (%s)", strings.Join(res.bitcode, ", "))
			}
			images = append(images, res.images...)
		default:
			return nil, fmt.Errorf("%s: not an object file, archive, offload binary or .syclbin file", it.value)
		}
	}
	for _, im := range images {
		if im.image.Offload != packager.OffloadSYCL {
			return nil, fmt.Errorf("%s holds %s device images; a .syclbin file holds SYCL device code only", im.source, im.image.Offload)
		}
	}
	if len(images) == 0 && len(bins) == 0 {
		return nil, fmt.Errorf("no SYCL device code in the inputs")
	}
	for _, b := range bins {
		st, _ := b.file.State()
		if st == syclbin.StateExecutable && state != syclbin.StateExecutable {
			return nil, fmt.Errorf("%s is in executable state: it cannot be part of a file in %s state", b.path, syclbin.StateName(state))
		}
		if st == syclbin.StateExecutable && len(bins)+len(images) > 1 {
			return nil, fmt.Errorf("%s is in executable state: it cannot be linked again", b.path)
		}
	}

	// Device links: per group in executable state, per image otherwise.
	// With .syclbin inputs an executable is linked by offcc's SYCLBIN
	// link, from the sources' images compiled one by one.
	perImage := state != syclbin.StateExecutable || len(bins) > 0
	var groups []*group
	if !perImage {
		groups = groupImages(images)
	} else {
		for _, im := range images {
			groups = append(groups, &group{id: im.id(), images: []deviceImage{im}})
		}
	}
	var acts []*actions.Action
	var linked []*actions.Artifact
	for _, gr := range groups {
		d, err := l.deviceLink(gr, packager.OffloadSYCL)
		if err != nil {
			return nil, err
		}
		acts = append(acts, d.extract, d.link)
		linked = append(linked, d.link.Outputs[0])
	}

	enc := syclbin.EncodingV1
	if o.syclbinVersion == 2 {
		enc = syclbin.EncodingV2
	}
	write := &actions.Action{
		Kind: actions.SYCLBIN, Offload: actions.SYCL, Target: target.Target{Triple: o.hostTriple},
		Inputs:  linked,
		Outputs: []*actions.Artifact{l.out},
		Cost:    0.1,
		KeyArgs: []string{"syclbin", "--state=" + syclbin.StateName(state), fmt.Sprintf("--encoding=%d", enc),
			fmt.Sprintf("--per-image=%v", perImage), fmt.Sprintf("--compiled=%d", len(linked))},
	}
	for _, b := range bins {
		write.Inputs = append(write.Inputs, l.input(b.path))
	}
	out, tmpDir := o.output, l.tmpDir
	write.Run = func(ctx context.Context, sh *actions.Shell) error {
		f, err := syclbinFromLinks(linked, !perImage)
		if err != nil {
			return err
		}
		switch {
		case len(bins) == 1 && len(linked) == 0:
			// One .syclbin alone: rewritten in the requested state
			// (below) and encoding.
			f = bins[0].file
		case len(bins) > 0 && state == syclbin.StateExecutable:
			f.SetState(syclbin.StateObject)
			files, names := []*syclbin.File{f}, []string{"the compiled sources"}
			if len(linked) == 0 {
				files, names = nil, nil
			}
			for _, b := range bins {
				files = append(files, b.file)
				names = append(names, b.path)
			}
			f, err = syclbinlink.Link(ctx, syclbinlink.Config{TempDir: tmpDir, Shell: sh}, files, names)
			if err != nil {
				return err
			}
		case len(bins) > 0:
			for _, b := range bins {
				f.Modules = append(f.Modules, b.file.Modules...)
			}
		}
		f.SetState(state)
		data, err := syclbin.Encode(f, enc)
		if err != nil {
			return err
		}
		return sh.WriteFile(out, data, 0o666)
	}
	return append(acts, write), nil
}

// syclbinFromLinks builds the .syclbin file's abstract modules from the
// device link outputs: the offload binaries clang-sycl-linker wrote. With
// checkImports, a SPIR-V module that still imports symbols is an error.
func syclbinFromLinks(linked []*actions.Artifact, checkImports bool) (*syclbin.File, error) {
	f := &syclbin.File{}
	var undefined []string
	for _, a := range linked {
		data, err := os.ReadFile(a.Path)
		if err != nil {
			return nil, err
		}
		ims, err := packager.Parse(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", a.Path, err)
		}
		for _, im := range ims {
			triple, _ := im.Get("triple")
			arch, _ := im.Get("arch")
			symbols, _ := im.Get("symbols")
			var am syclbin.AbstractModule
			if arch == "" || arch == "generic" {
				am.IR = append(am.IR, syclbin.NewIRModule(syclbin.IRTypeSPIRV, triple, im.Data))
			} else {
				am.Native = append(am.Native, syclbin.NewNativeImage(arch, triple, im.Data))
			}
			var kernels []string
			for _, k := range strings.Split(symbols, "\n") {
				if k != "" {
					kernels = append(kernels, k)
				}
			}
			am.SetKernelNames(kernels)
			f.Modules = append(f.Modules, am)
			if checkImports && bytes.HasPrefix(im.Data, []byte{0x03, 0x02, 0x23, 0x07}) {
				m, err := spirv.Parse(im.Data)
				if err != nil {
					return nil, fmt.Errorf("linked SPIR-V for %s: %v", triple, err)
				}
				undefined = append(undefined, m.Imports()...)
			}
		}
	}
	if len(undefined) > 0 {
		sort.Strings(undefined)
		return nil, fmt.Errorf("undefined symbol%s in SYCL device code: %s", plural(len(undefined)), strings.Join(undefined, ", "))
	}
	return f, nil
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
