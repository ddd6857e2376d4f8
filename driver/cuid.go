package driver

import (
	"crypto/md5"
	"encoding/binary"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// This file recomputes the compilation unit ID (CUID) that clang 22's driver
// gives a CUDA or HIP source under the default -fuse-cuid=hash. offcc plans
// from `clang -### <args>`, and -### is itself one of the hashed arguments, so
// the -cuid= that -### prints is not the one `clang <args>` uses.
//
// The algorithm (clang/lib/Driver/Driver.cpp, CUIDOptions::getCUID, called
// from Driver::BuildActions with InputArg->getValue() and C.getArgs()):
//
//	MD5 over: the input as spelled on the command line, then, for every
//	argument of the driver's DerivedArgList that is not an input, its
//	Arg::getAsString (the rendered argument, values joined by one space);
//	the CUID is utohexstr(MD5Result::low(), lower case): the first 8 digest
//	bytes as a little-endian uint64, in hex without leading zeros.
//
// The DerivedArgList is not quite the command line: before the actions are
// built, Driver::CreateOffloadingDeviceToolChains (inferOffloadToolchains)
// erases every --offload-arch= (and its alias --cuda-gpu-arch=) and appends,
// for each distinct architecture in sorted order, a synthesized
// `-Xarch_<triple arch> --offload-arch=<arch>`; and when the compilation
// links (no -c, -S or -E), Driver::handleArguments appends `-dumpdir <out>-`
// where <out> is the last -o value, or "a" (the stem of a.out).
//
// Arg::getAsString (llvm/lib/Option/Arg.cpp) renders Flag, Joined and
// CommaJoined options, and aliases, as they were typed, but Separate and
// JoinedOrSeparate options as two words: -DFOO and -D FOO both hash as
// "-D FOO". Which option an argument is, and so how it renders and whether
// it takes the next argument as its value, is in clang's option table, which
// offcc does not have; cuidOptions keeps the few options whose kind was
// checked against clang 22, and any other argument makes clangCUID give up.

// clangCUID returns the CUID clang 22 computes for the CUDA or HIP source
// input (as spelled on the command line) when its driver runs with args
// (the arguments after argv[0], inputs included, as clang's driver sees
// them: clang++ adds --driver-mode=g++ in front). It returns "" when it
// cannot be sure: an argument it does not know, a response file, -fuse-cuid=
// other than hash, or input not among the inputs. It does not see clang's
// configuration files or CCC_OVERRIDE_OPTIONS, whose arguments clang hashes
// too; a caller must not use it where those apply.
func clangCUID(input string, args []string) string {
	cl, ok := parseCUIDArgs(args)
	if !ok || !slices.Contains(cl.inputs, input) {
		return ""
	}
	if cl.fixed != "" {
		return cl.fixed // -cuid=<id> wins over any -fuse-cuid=
	}
	if cl.method != "" && cl.method != "hash" {
		return ""
	}
	return strconv.FormatUint(md5Low(input, cl.hashed()), 16)
}

// md5Low returns llvm::MD5Result::low() of the MD5 of first followed by rest:
// the first 8 bytes of the digest as a little-endian integer.
func md5Low(first string, rest []string) uint64 {
	h := md5.New()
	h.Write([]byte(first))
	for _, s := range rest {
		h.Write([]byte(s))
	}
	return binary.LittleEndian.Uint64(h.Sum(nil))
}

// cuidCommandLine is what clangCUID reads from a driver command line.
type cuidCommandLine struct {
	rendered []string        // the non-input arguments as clang renders them, in order
	archs    map[string]bool // --offload-arch= values (erased from rendered)
	inputs   []string        // positional arguments
	fixed    string          // the last -cuid= value
	method   string          // the last -fuse-cuid= value
	link     bool            // no -c, -S or -E: clang appends -dumpdir
	output   string          // the last -o value
}

// hashed returns the arguments clang hashes after the input: the rendered
// command line, then the synthesized -Xarch_ and -dumpdir arguments.
func (cl *cuidCommandLine) hashed() []string {
	out := slices.Clone(cl.rendered)
	archs := make([]string, 0, len(cl.archs))
	for a := range cl.archs {
		archs = append(archs, a)
	}
	sort.Strings(archs) // clang collects them in a std::set<std::string>
	for _, a := range archs {
		out = append(out, "-Xarch_"+offloadTripleArch(a)+" --offload-arch="+a)
	}
	if cl.link {
		stem := "a" // llvm::sys::path::stem("a.out")
		if cl.output != "" {
			stem = cl.output
		}
		out = append(out, "-dumpdir "+stem+"-")
	}
	return out
}

// cuidStyle is how clang renders an option for the hash.
type cuidStyle int

const (
	// cuidAsTyped is a Flag, a Joined or CommaJoined option, or an alias:
	// rendered as typed. For a prefix its value must not be empty.
	cuidAsTyped cuidStyle = iota
	// cuidSeparate is a Separate or JoinedOrSeparate option: rendered as
	// its spelling, a space and its value, however it was typed.
	cuidSeparate
	// cuidJoinedOrSeparate is cuidSeparate that may also be typed joined
	// (-DFOO), because no longer clang option starts with its spelling.
	cuidJoinedOrSeparate
)

// cuidOption is one row of cuidOptions.
type cuidOption struct {
	style  cuidStyle
	prefix bool // the spelling is followed by a value (-std=c++17)
}

// cuidOptions are the driver options whose kind in clang 22's table was
// checked, by spelling. Spellings ending in = and -Wno- are prefixes.
var cuidOptions = map[string]cuidOption{
	// Flags.
	"-c": {}, "-S": {}, "-E": {}, "-v": {}, "-###": {}, "-w": {}, "-g": {}, "-g0": {},
	"-O": {}, "-O0": {}, "-O1": {}, "-O2": {}, "-O3": {}, "-Os": {}, "-Oz": {}, "-Og": {}, "-Ofast": {},
	"-Wall": {}, "-Wextra": {}, "-Werror": {},
	"-nogpuinc": {}, "-nogpulib": {}, "-nocudainc": {}, "-nocudalib": {},
	"-fgpu-rdc": {}, "-fno-gpu-rdc": {}, "-fPIC": {}, "-fpic": {}, "-fPIE": {}, "-fpie": {},
	"-emit-llvm": {}, "-MD": {}, "-MMD": {}, "-MP": {}, "-nostdlib": {}, "-shared": {},
	"--offload-device-only": {}, "--offload-host-only": {}, "--offload-host-device": {},
	"--cuda-device-only": {}, "--cuda-host-only": {},
	"--offload-new-driver": {}, "--no-offload-new-driver": {},
	"--offload-compress": {}, "--no-offload-compress": {},
	// Joined and CommaJoined.
	"-std=": {prefix: true}, "-Wno-": {prefix: true}, "-Werror=": {prefix: true},
	"-cuid=": {prefix: true}, "-fuse-cuid=": {prefix: true}, "--driver-mode=": {prefix: true},
	"--offload-arch=": {prefix: true}, "--cuda-gpu-arch=": {prefix: true},
	"--cuda-feature=": {prefix: true}, "--cuda-path=": {prefix: true},
	"--no-offload-arch=": {prefix: true},
	// Separate and JoinedOrSeparate.
	"-o": {style: cuidJoinedOrSeparate}, "-x": {style: cuidJoinedOrSeparate},
	"-D": {style: cuidJoinedOrSeparate}, "-U": {style: cuidJoinedOrSeparate},
	"-I":  {style: cuidJoinedOrSeparate},
	"-MF": {style: cuidJoinedOrSeparate}, "-MT": {style: cuidJoinedOrSeparate},
	"-include": {style: cuidSeparate}, "-isystem": {style: cuidSeparate},
	"-Xclang": {style: cuidSeparate}, "-mllvm": {style: cuidSeparate},
}

// cuidDriverModes are the --driver-mode= values that leave the option table
// as it is (cl, cpp, flang and dxc change it).
var cuidDriverModes = map[string]bool{"gcc": true, "g++": true}

// parseCUIDArgs reads args with cuidOptions. ok is false when an argument is
// not in the table or has a value it cannot be sure of.
func parseCUIDArgs(args []string) (cl cuidCommandLine, ok bool) {
	cl.archs = map[string]bool{}
	cl.link = true
	for i := 0; i < len(args); i++ {
		a := args[i]
		if strings.HasPrefix(a, "@") {
			return cl, false // a response file
		}
		if a == "-" || !strings.HasPrefix(a, "-") {
			cl.inputs = append(cl.inputs, a)
			continue
		}
		name, value, consumed, ok := matchCUIDOption(a, args[i+1:])
		if !ok {
			return cl, false
		}
		i += consumed
		switch name {
		case "-c", "-S", "-E":
			cl.link = false
		case "-o":
			cl.output = value
		case "-cuid=":
			cl.fixed = value
		case "-fuse-cuid=":
			cl.method = value
		case "--driver-mode=":
			if !cuidDriverModes[value] {
				return cl, false
			}
		case "--offload-arch=", "--cuda-gpu-arch=":
			// --offload-arch= is CommaJoined; its alias --cuda-gpu-arch= is
			// Joined, so a list there is one (bad) architecture.
			archs := []string{value}
			if name == "--offload-arch=" {
				archs = strings.Split(value, ",")
			}
			for _, arch := range archs {
				if offloadTripleArch(arch) == "" {
					return cl, false // native, empty or unknown
				}
				cl.archs[arch] = true
			}
			continue // erased from the hashed list
		case "--no-offload-arch=":
			// It removes archs named before it (a later --offload-arch=
			// adds them back); "all" is not modelled.
			for _, arch := range strings.Split(value, ",") {
				if arch == "all" || offloadTripleArch(arch) == "" {
					return cl, false
				}
				delete(cl.archs, arch)
			}
			continue // erased from the hashed list
		}
		if opt := cuidOptions[name]; opt.style == cuidAsTyped {
			cl.rendered = append(cl.rendered, a)
		} else {
			cl.rendered = append(cl.rendered, name+" "+value)
		}
	}
	return cl, true
}

// matchCUIDOption finds the option a spells, with its value and how many of
// the following arguments it takes.
func matchCUIDOption(a string, rest []string) (name, value string, consumed int, ok bool) {
	if opt, found := cuidOptions[a]; found {
		switch {
		case opt.style != cuidAsTyped:
			if len(rest) == 0 {
				return "", "", 0, false
			}
			return a, rest[0], 1, true
		case !opt.prefix:
			return a, "", 0, true
		}
	}
	// The longest spelling that a starts with, as clang's OptTable does.
	for n := len(a) - 1; n >= 2; n-- {
		name, value := a[:n], a[n:]
		opt, found := cuidOptions[name]
		switch {
		case !found:
			continue
		case opt.prefix:
			return name, value, 0, true
		case opt.style == cuidJoinedOrSeparate && joinedValueOK(name, value):
			return name, value, 0, true
		}
		return "", "", 0, false
	}
	return "", "", 0, false
}

// joinedValueOK reports whether clang reads name+value as the
// JoinedOrSeparate option name, not as a longer option that starts with it:
// -I- is its own flag, and -object-file-name= and -objcmt-* start with -o.
func joinedValueOK(name, value string) bool {
	switch name {
	case "-I":
		return value != "-"
	case "-o":
		return !strings.HasPrefix(value, "b")
	}
	return true
}

var (
	amdArchRE    = regexp.MustCompile(`^gfx[0-9a-z]+(-[0-9a-z]+)*(:[0-9a-z-]+[+-])*$`)
	nvidiaArchRE = regexp.MustCompile(`^sm_[0-9]+[af]?$`)
)

// offloadTripleArch returns the architecture part of the device triple clang
// infers for an --offload-arch value (the Xarch_ suffix it synthesizes), or ""
// when offcc does not know it. NVIDIA's assumes a 64-bit host.
func offloadTripleArch(arch string) string {
	switch {
	case amdArchRE.MatchString(arch):
		return "amdgcn"
	case nvidiaArchRE.MatchString(arch):
		return "nvptx64"
	}
	return ""
}
