package target

import (
	"runtime"
	"strings"
)

// This file models the parts of llvm::Triple that offcc depends on: parsing
// each component to its canonical kind, Triple::normalize's reordering and
// Triple equality. Tables are LLVM 22's; a name missing from them parses as
// unknown, as in LLVM.

var archNames = map[string]string{
	"i386": "x86", "i486": "x86", "i586": "x86", "i686": "x86", "i786": "x86", "i886": "x86", "i986": "x86",
	"amd64": "x86_64", "x86_64": "x86_64", "x86_64h": "x86_64",
	"powerpc": "ppc", "powerpcspe": "ppc", "ppc": "ppc", "ppc32": "ppc",
	"powerpcle": "ppcle", "ppcle": "ppcle", "ppc32le": "ppcle",
	"powerpc64": "ppc64", "ppu": "ppc64", "ppc64": "ppc64",
	"powerpc64le": "ppc64le", "ppc64le": "ppc64le",
	"xscale": "arm", "xscaleeb": "armeb",
	"aarch64": "aarch64", "aarch64_be": "aarch64_be", "aarch64_32": "aarch64_32",
	"arc": "arc", "arm64": "aarch64", "arm64_32": "aarch64_32", "arm64e": "aarch64", "arm64ec": "aarch64",
	"arm": "arm", "armeb": "armeb", "thumb": "thumb", "thumbeb": "thumbeb",
	"avr": "avr", "m68k": "m68k", "msp430": "msp430",
	"mips": "mips", "mipseb": "mips", "mipsallegrex": "mips", "mipsisa32r6": "mips", "mipsr6": "mips",
	"mipsel": "mipsel", "mipsallegrexel": "mipsel", "mipsisa32r6el": "mipsel", "mipsr6el": "mipsel",
	"mips64": "mips64", "mips64eb": "mips64", "mipsn32": "mips64", "mipsisa64r6": "mips64", "mips64r6": "mips64", "mipsn32r6": "mips64",
	"mips64el": "mips64el", "mipsn32el": "mips64el", "mipsisa64r6el": "mips64el", "mips64r6el": "mips64el", "mipsn32r6el": "mips64el",
	"r600": "r600", "amdgcn": "amdgcn", "riscv32": "riscv32", "riscv64": "riscv64",
	"hexagon": "hexagon", "s390x": "systemz", "systemz": "systemz",
	"sparc": "sparc", "sparcel": "sparcel", "sparcv9": "sparcv9", "sparc64": "sparcv9",
	"tce": "tce", "tcele": "tcele", "xcore": "xcore",
	"nvptx": "nvptx", "nvptx64": "nvptx64",
	"amdil": "amdil", "amdil64": "amdil64", "hsail": "hsail", "hsail64": "hsail64",
	"spir": "spir", "spir64": "spir64",
	"spirv": "spirv", "spirv32": "spirv32", "spirv64": "spirv64",
	"spirv1.0": "spirv", "spirv1.1": "spirv", "spirv1.2": "spirv", "spirv1.3": "spirv", "spirv1.4": "spirv", "spirv1.5": "spirv", "spirv1.6": "spirv",
	"spirv32v1.0": "spirv32", "spirv32v1.1": "spirv32", "spirv32v1.2": "spirv32", "spirv32v1.3": "spirv32", "spirv32v1.4": "spirv32", "spirv32v1.5": "spirv32", "spirv32v1.6": "spirv32",
	"spirv64v1.0": "spirv64", "spirv64v1.1": "spirv64", "spirv64v1.2": "spirv64", "spirv64v1.3": "spirv64", "spirv64v1.4": "spirv64", "spirv64v1.5": "spirv64", "spirv64v1.6": "spirv64",
	"kalimba": "kalimba", "kalimba3": "kalimba", "kalimba4": "kalimba", "kalimba5": "kalimba",
	"lanai": "lanai", "shave": "shave", "wasm32": "wasm32", "wasm64": "wasm64",
	"renderscript32": "renderscript32", "renderscript64": "renderscript64",
	"ve": "ve", "csky": "csky", "loongarch32": "loongarch32", "loongarch64": "loongarch64",
	"dxil": "dxil", "xtensa": "xtensa",
	"bpf": "bpfel", "bpf_le": "bpfel", "bpfel": "bpfel", "bpf_be": "bpfeb", "bpfeb": "bpfeb",
}

// parseArch returns the canonical architecture of an arch component, or ""
// when LLVM would not recognise it. ARM sub-architectures (armv7a, thumbv7m,
// ...) are recognised by prefix.
func parseArch(s string) string {
	if a, ok := archNames[s]; ok {
		return a
	}
	if strings.HasPrefix(s, "dxilv1.") {
		return "dxil"
	}
	for _, p := range []struct{ prefix, arch string }{
		{"armv", "arm"}, {"armebv", "armeb"}, {"thumbv", "thumb"}, {"thumbebv", "thumbeb"},
		{"aarch64", "aarch64"}, {"arm64", "aarch64"},
	} {
		if strings.HasPrefix(s, p.prefix) && len(s) > len(p.prefix) {
			return p.arch
		}
	}
	return ""
}

var vendorNames = map[string]string{
	"apple": "apple", "pc": "pc", "scei": "scei", "sie": "scei", "fsl": "fsl", "ibm": "ibm",
	"img": "img", "mti": "mti", "nvidia": "nvidia", "csr": "csr", "amd": "amd", "mesa": "mesa",
	"suse": "suse", "oe": "oe", "intel": "intel",
}

func parseVendor(s string) string { return vendorNames[s] }

// osPrefixes are matched with strings.HasPrefix, in order, like LLVM's
// StringSwitch::StartsWith.
var osPrefixes = []string{
	"darwin", "dragonfly", "freebsd", "fuchsia", "ios", "kfreebsd", "linux", "lv2", "macos",
	"managarm", "netbsd", "openbsd", "solaris", "uefi", "win32", "windows", "zos", "haiku",
	"rtems", "aix", "cuda", "nvcl", "amdhsa", "ps4", "ps5", "elfiamcu", "tvos", "watchos",
	"bridgeos", "driverkit", "xros", "visionos", "mesa3d", "amdpal", "hermit", "hurd", "wasi",
	"emscripten", "shadermodel", "liteos", "serenity", "vulkan", "firmware", "qurt", "chipstar",
}

// ParseOS returns the OS a triple's OS component names, as LLVM 22's
// Triple::getOSTypeName spells it ("linux", "amdhsa", "cuda", "windows" for
// "win32...", "macosx" for "macos..."), or "" when LLVM does not recognise
// it. Components are matched by prefix, so "linux6.1" is "linux".
func ParseOS(component string) string { return parseOS(component) }

func parseOS(s string) string {
	for _, p := range osPrefixes {
		if strings.HasPrefix(s, p) {
			switch p {
			case "win32":
				return "windows"
			case "macos":
				return "macosx"
			case "visionos":
				return "xros"
			}
			return p
		}
	}
	return ""
}

var envPrefixes = []string{
	"eabihf", "eabi", "gnuabin32", "gnuabi64", "gnueabihft64", "gnueabihf", "gnueabit64", "gnueabi",
	"gnuf32", "gnuf64", "gnusf", "gnux32", "gnu_ilp32", "code16", "gnut64", "gnu", "android",
	"muslabin32", "muslabi64", "musleabihf", "musleabi", "muslf32", "muslsf", "muslx32", "muslwali", "musl",
	"msvc", "itanium", "cygnus", "coreclr", "simulator", "macabi", "pixel", "vertex", "geometry",
	"hull", "domain", "compute", "library", "raygeneration", "intersection", "anyhit",
	"closesthit", "miss", "callable", "mesh", "amplification", "rootsignature", "opencl", "ohos",
	"pauthtest", "llvm", "mlibc",
}

func parseEnv(s string) string {
	for _, p := range envPrefixes {
		if strings.HasPrefix(s, p) {
			return p
		}
	}
	return ""
}

var formatSuffixes = []string{"xcoff", "coff", "elf", "goff", "macho", "wasm", "dxcontainer", "spirv"}

func parseFormat(s string) string {
	for _, f := range formatSuffixes {
		if strings.HasSuffix(s, f) {
			return f
		}
	}
	return ""
}

// Normalize is llvm::Triple::normalize(triple) with CanonicalForm::ANY:
// components are moved to arch-vendor-os-environment(-format) order, empty
// ones become "unknown", MinGW, Cygwin and Windows triples get their
// canonical OS and environment, and the result has as many components as
// that leaves ("x86_64-linux-gnu" is "x86_64-unknown-linux-gnu",
// "x86_64--linux" is "x86_64-unknown-linux", "amdgcn-amd-amdhsa" is
// unchanged).
func Normalize(triple string) string { return normalize(triple, 0) }

// NormalizeForm is Normalize with the result cut, or padded with
// "unknown", to the given number of components, as llvm::Triple::normalize
// does for CanonicalForm::THREE_IDENT, FOUR_IDENT and FIVE_IDENT (3, 4 and
// 5). Bundle IDs use 3 and 4. A count of 0 or less gives Normalize's
// result.
func NormalizeForm(triple string, components int) string { return normalize(triple, components) }

// normalize is llvm::Triple::normalize(s, form), with form the number of
// components to keep, or 0 or less for CanonicalForm::ANY.
func normalize(s string, form int) string {
	comps := strings.Split(s, "-")
	get := func(i int) string {
		if i < len(comps) {
			return comps[i]
		}
		return ""
	}
	arch, vendor, os, env, format := parseArch(get(0)), "", "", "", ""
	if len(comps) > 1 {
		vendor = parseVendor(comps[1])
	}
	isCygwin, isMinGW := false, false
	if len(comps) > 2 {
		os = parseOS(comps[2])
		isCygwin = strings.HasPrefix(comps[2], "cygwin") || strings.HasPrefix(comps[2], "msys")
		isMinGW = strings.HasPrefix(comps[2], "mingw")
	}
	if len(comps) > 3 {
		env = parseEnv(comps[3])
	}
	if len(comps) > 4 {
		format = parseFormat(comps[4])
	}
	found := [4]bool{arch != "", vendor != "", os != "", env != ""}
	for pos := 0; pos < 4; pos++ {
		if found[pos] {
			continue
		}
		for idx := 0; idx < len(comps); idx++ {
			if idx < 4 && found[idx] {
				continue
			}
			c := comps[idx]
			valid := false
			switch pos {
			case 0:
				arch = parseArch(c)
				valid = arch != ""
			case 1:
				vendor = parseVendor(c)
				valid = vendor != ""
			case 2:
				os = parseOS(c)
				isCygwin = strings.HasPrefix(c, "cygwin") || strings.HasPrefix(c, "msys")
				isMinGW = strings.HasPrefix(c, "mingw")
				valid = os != "" || isCygwin || isMinGW
			case 3:
				env = parseEnv(c)
				valid = env != ""
				if !valid {
					format = parseFormat(c)
					valid = format != ""
				}
			}
			if !valid {
				continue
			}
			if pos < idx {
				cur := ""
				cur, comps[idx] = comps[idx], cur
				for i := pos; cur != ""; i++ {
					for i < 4 && found[i] {
						i++
					}
					if i >= len(comps) {
						comps = append(comps, "")
					}
					cur, comps[i] = comps[i], cur
				}
			} else if pos > idx {
				for {
					cur := ""
					for i := idx; i < len(comps); {
						cur, comps[i] = comps[i], cur
						if cur == "" {
							break
						}
						for i++; i < 4 && found[i]; i++ {
						}
					}
					if cur != "" {
						comps = append(comps, cur)
					}
					for idx++; idx < 4 && found[idx]; idx++ {
					}
					if idx >= pos {
						break
					}
				}
			}
			found[pos] = true
			break
		}
	}
	if found[0] && !found[1] && !found[2] && found[3] && len(comps) > 2 && comps[1] == "none" && comps[2] == "" {
		comps[1], comps[2] = comps[2], comps[1]
	}
	for i, c := range comps {
		if c == "" {
			comps[i] = "unknown"
		}
	}
	if env == "android" && len(comps) > 3 && strings.HasPrefix(comps[3], "androideabi") {
		comps[3] = "android" + comps[3][len("androideabi"):]
	}
	if vendor == "suse" && env == "gnueabi" && len(comps) > 3 {
		comps[3] = "gnueabihf"
	}
	resize := func(n int) {
		for len(comps) < n {
			comps = append(comps, "unknown")
		}
		comps = comps[:n]
	}
	switch {
	case os == "windows":
		resize(4)
		comps[2] = "windows"
		if env == "" {
			if format == "" || format == "coff" {
				comps[3] = "msvc"
			} else {
				comps[3] = format
			}
		}
	case isMinGW:
		resize(4)
		comps[2], comps[3] = "windows", "gnu"
	case isCygwin:
		resize(4)
		comps[2], comps[3] = "windows", "cygnus"
	}
	if isMinGW || isCygwin || (os == "windows" && env != "") {
		if format != "" && format != "coff" {
			resize(5)
			comps[4] = format
		}
	}
	if form > 0 {
		resize(form)
	}
	return strings.Join(comps, "-")
}

// Equal reports whether triples a and b are equal as llvm::Triple values:
// each is parsed in place, without reordering, as llvm::Triple's
// constructor does (split on '-' at most three times), and their canonical
// arch, vendor, OS, environment and object format (LLVM's default format
// for the arch and OS when none is given) are compared. So
// "x86_64-unknown-linux-gnu" equals "amd64-unknown-linux-gnu" and
// "x86_64-unknown-linux-gnu-elf", and "x86_64-linux-gnu" differs from
// "x86_64-unknown-linux-gnu". Unlike LLVM it does not compare ARM
// sub-architectures, and it reads an object format from the fourth
// component only when that is not an environment.
func Equal(a, b string) bool { return parseTripleKey(a) == parseTripleKey(b) }

// tripleKey is the parsed form of a triple that llvm::Triple's equality
// compares: canonical arch, vendor, OS, environment and object format.
type tripleKey struct{ arch, vendor, os, env, format string }

// parseTripleKey parses the four components of a triple in place (no
// reordering), as llvm::Triple's constructor does.
func parseTripleKey(t string) tripleKey {
	c := strings.SplitN(t, "-", 4)
	for len(c) < 4 {
		c = append(c, "")
	}
	k := tripleKey{arch: parseArch(c[0]), vendor: parseVendor(c[1]), os: parseOS(c[2]), env: parseEnv(c[3])}
	if k.env == "" {
		k.format = parseFormat(c[3])
	}
	if k.format == "" {
		k.format = defaultFormat(k.arch, k.os)
	}
	return k
}

// defaultFormat is the object format LLVM assumes for a triple without one.
func defaultFormat(arch, os string) string {
	switch {
	case os == "darwin" || os == "ios" || os == "macosx" || os == "tvos" || os == "watchos" || os == "xros" || os == "driverkit" || os == "bridgeos":
		return "macho"
	case os == "windows":
		return "coff"
	case os == "aix":
		return "xcoff"
	case os == "zos":
		return "goff"
	case strings.HasPrefix(arch, "spirv"):
		return "spirv"
	case strings.HasPrefix(arch, "wasm"):
		return "wasm"
	case arch == "dxil":
		return "dxcontainer"
	}
	return "elf"
}

// KnownArch reports whether LLVM 22 recognises component as an architecture
// ("x86_64", "amd64", "armv7a", "spirv64v1.3"), as the first component of a
// triple.
func KnownArch(component string) bool { return parseArch(component) != "" }

// ArchName returns the first component of triple as written ("amdgcn" for
// "amdgcn-amd-amdhsa"), like llvm::Triple::getArchName.
func ArchName(triple string) string {
	a, _, _ := strings.Cut(triple, "-")
	return a
}

// IsAMDGPU reports whether triple's architecture is amdgcn or r600, like
// llvm::Triple::isAMDGPU.
func IsAMDGPU(triple string) bool {
	a := parseArch(ArchName(triple))
	return a == "amdgcn" || a == "r600"
}

// IsNVPTX reports whether triple's architecture is nvptx or nvptx64, like
// llvm::Triple::isNVPTX.
func IsNVPTX(triple string) bool {
	a := parseArch(ArchName(triple))
	return a == "nvptx" || a == "nvptx64"
}

// IsSPIRV reports whether triple's architecture is SPIR-V (spirv, spirv32
// or spirv64, with or without a version such as "spirv64v1.3"), like
// llvm::Triple::isSPIRV. SPIR (spir, spir64) is not SPIR-V; see IsSPIR.
func IsSPIRV(triple string) bool {
	a := parseArch(ArchName(triple))
	return a == "spirv" || a == "spirv32" || a == "spirv64"
}

// IsSPIR reports whether triple's architecture is SPIR (spir or spir64),
// like llvm::Triple::isSPIR.
func IsSPIR(triple string) bool {
	a := parseArch(ArchName(triple))
	return a == "spir" || a == "spir64"
}

// IsGPU reports whether triple is a GPU target: SPIR-V, NVPTX or AMDGPU,
// like llvm::Triple::isGPU.
func IsGPU(triple string) bool { return IsSPIRV(triple) || IsNVPTX(triple) || IsAMDGPU(triple) }

// DefaultHostTriple returns the host triple offcc assumes when none is
// given, from the architecture it was built for: "aarch64-unknown-linux-gnu"
// on arm64, "powerpc64le-unknown-linux-gnu" on ppc64le and
// "x86_64-pc-linux-gnu" otherwise.
func DefaultHostTriple() string {
	switch runtime.GOARCH {
	case "arm64":
		return "aarch64-unknown-linux-gnu"
	case "ppc64le":
		return "powerpc64le-unknown-linux-gnu"
	}
	return "x86_64-pc-linux-gnu"
}
