package target

import "strings"

// Target is a device target as the driver and the link stage group code
// by: a triple and an architecture. Arch is a full target ID
// ("gfx90a:xnack+", "sm_80"), "generic" (code for any processor of the
// triple) or "" (none given).
type Target struct {
	Triple string
	Arch   string
}

// Processor returns the part of Arch before the first ':' ("gfx90a" for
// "gfx90a:xnack+").
func (t Target) Processor() string {
	p, _, _ := strings.Cut(t.Arch, ":")
	return p
}

// String returns Triple + "-" + Arch ("amdgcn-amd-amdhsa-gfx90a:xnack+"),
// as in clang's -save-temps file names, or Triple alone when Arch is "".
func (t Target) String() string {
	if t.Arch == "" {
		return t.Triple
	}
	return t.Triple + "-" + t.Arch
}

// Compatible is llvm::object::areTargetsCompatible, by which
// clang-linker-wrapper adds code of one target to the device link of
// another. Equal targets are not compatible: they are the same link.
// Otherwise the triples must be the same string, and either arch is
// "generic", or the triple is AMDGPU, the processors are the same and the
// target IDs do not set xnack or sramecc with opposite signs ("gfx90a" and
// "gfx90a:xnack+" are compatible, "gfx90a:xnack+" and "gfx90a:xnack-" are
// not). As in LLVM, the signs are found by substring ("xnack+" anywhere in
// Arch).
func Compatible(a, b Target) bool {
	if a == b || a.Triple != b.Triple {
		return false
	}
	if a.Arch == "generic" || b.Arch == "generic" {
		return true
	}
	if !IsAMDGPU(a.Triple) || a.Processor() != b.Processor() {
		return false
	}
	for _, f := range []string{"xnack", "sramecc"} {
		if (strings.Contains(a.Arch, f+"+") && strings.Contains(b.Arch, f+"-")) ||
			(strings.Contains(a.Arch, f+"-") && strings.Contains(b.Arch, f+"+")) {
			return false
		}
	}
	return true
}
