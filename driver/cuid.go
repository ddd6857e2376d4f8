package driver

import (
	"crypto/md5"
	"encoding/binary"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/offcc/offcc/options"
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
// Before that, Driver::TranslateInputArgs rewrites a few arguments:
// -Wl, and -Xlinker values --no-demangle become -Z-Xlinker-no-demangle
// (the other values one -Xlinker each), -Wp,-MD,FILE becomes -MD -MF FILE,
// -lstdc++ (without -nostdlib, -nodefaultlibs or -nostdlib++) and
// -lcc_kext become -Z-reserved-lib-*, and the values of "--" become inputs.
//
// Arg::getAsString (llvm/lib/Option/Arg.cpp) renders each argument by its
// option's kind and flags (see options.Arg.String): -DFOO and -D FOO both
// hash as "-D FOO", an alias renders as typed. Which option an argument
// is comes from clang's own option table (package options), so every
// argument clang accepts has its CUID; an argument clang rejects (unknown,
// or missing its value) fails clang's own planning first.

// cuidOfArgs returns the CUID clang 22 computes for the CUDA or HIP source
// input (as spelled on the command line) when its driver runs with args
// (the parsed arguments after argv[0], inputs included, as clang's driver
// sees them: a configuration file's first, --driver-mode=g++ for clang++).
// It returns "" when it cannot be sure: a command line clang rejects, a
// response file it could not read, -fuse-cuid= other than hash, an
// --offload-arch clang resolves by running a tool (native), or input not
// among the inputs. It does not see CCC_OVERRIDE_OPTIONS, whose arguments
// clang hashes too. random reports -fuse-cuid=random: any ID clang's
// driver prints is as good as another.
func cuidOfArgs(input string, args []*options.Arg) (id string, random bool) {
	return cuidOfRelease(22, input, args)
}

// cuidOfRelease is cuidOfArgs for the clang of LLVM release major. LLVM
// 19's driver (Driver.cpp, OffloadingActionBuilder) hashes the real path
// of the input (llvm::sys::fs::real_path, ~ expanded) and the arguments
// as the command line has them: no --offload-arch= is erased nor
// -Xarch_ synthesized; -dumpdir is appended as in 22.
func cuidOfRelease(major int, input string, args []*options.Arg) (id string, random bool) {
	cl, ok := readCUIDArgs(args, major >= 20)
	if !ok || !slices.Contains(cl.inputs, input) {
		return "", false
	}
	switch {
	case cl.fixed != "":
		return cl.fixed, false // -cuid=<id> wins over any -fuse-cuid=
	case cl.method == "random":
		return "", true
	case cl.method != "" && cl.method != "hash":
		return "", false
	}
	first := input
	if major < 20 {
		real, err := realPath(input)
		if err != nil {
			return "", false
		}
		first = real
	}
	return strconv.FormatUint(md5Low(first, cl.hashed()), 16), false
}

// realPath is llvm::sys::fs::real_path with expand_tilde: the absolute
// path with symbolic links resolved, a leading ~ the home directory.
func realPath(p string) (string, error) {
	if p == "~" || strings.HasPrefix(p, "~/") {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		p = filepath.Join(home, p[1:])
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(abs)
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

// cuidDriverModes are the --driver-mode= values that leave the option table
// as it is (cl, cpp, flang and dxc change it).
var cuidDriverModes = map[string]bool{"gcc": true, "g++": true}

// readCUIDArgs reads a parsed driver command line as clang's derived
// argument list has it. ok is false where clang fails or offcc cannot
// know the argument list clang builds.
//
// inferArchs says that the driver replaces --offload-arch= by synthesized
// -Xarch_ arguments (LLVM 20 and later; 19 hashes them as given).
func readCUIDArgs(args []*options.Arg, inferArchs bool) (cl cuidCommandLine, ok bool) {
	cl.archs = map[string]bool{}
	cl.link = true
	noStdLib := false
	for _, a := range args {
		switch a.Option.ID {
		case "nostdlib", "nodefaultlibs", "nostdlibxx":
			noStdLib = true
		}
	}
	for _, a := range args {
		opt := a.Option
		switch {
		case a.IsUnknown():
			return cl, false // clang: unknown argument
		case a.IsInput():
			if strings.HasPrefix(a.Value(), "@") && len(a.Value()) > 1 {
				return cl, false // a response file offcc could not read
			}
			cl.inputs = append(cl.inputs, a.Value())
			continue
		}
		switch opt.ID {
		case "c", "S", "E":
			cl.link = false
		case "o":
			cl.output = a.Value()
		case "cuid_EQ":
			cl.fixed = a.Value()
		case "fuse_cuid_EQ":
			cl.method = a.Value()
		case "driver_mode":
			if !cuidDriverModes[a.Value()] {
				return cl, false
			}
		case "offload_arch_EQ":
			if !inferArchs {
				for _, arch := range strings.Split(a.Value(), ",") {
					if offloadTripleArch(arch) == "" {
						return cl, false // native, empty or unknown
					}
				}
				break
			}
			for _, arch := range a.Values {
				if offloadTripleArch(arch) == "" {
					return cl, false // native, empty or unknown
				}
				cl.archs[arch] = true
			}
			continue // erased from the hashed list
		case "no_offload_arch_EQ":
			if !inferArchs {
				break
			}
			// It removes archs named before it (a later --offload-arch=
			// adds them back); "all" is not modelled.
			for _, arch := range a.Values {
				if arch == "all" || offloadTripleArch(arch) == "" {
					return cl, false
				}
				delete(cl.archs, arch)
			}
			continue // erased from the hashed list
		case "Wl_COMMA", "Xlinker":
			if slices.Contains(a.Values, "--no-demangle") {
				cl.rendered = append(cl.rendered, "-Z-Xlinker-no-demangle")
				for _, v := range a.Values {
					if v != "--no-demangle" {
						cl.rendered = append(cl.rendered, "-Xlinker "+v)
					}
				}
				continue
			}
		case "Wp_COMMA":
			if len(a.Values) > 0 && (a.Values[0] == "-MD" || a.Values[0] == "-MMD") {
				cl.rendered = append(cl.rendered, a.Values[0])
				if len(a.Values) == 2 {
					cl.rendered = append(cl.rendered, "-MF "+a.Values[1])
				}
				continue
			}
		case "l":
			switch v := a.Value(); {
			case v == "stdc++" && !noStdLib:
				cl.rendered = append(cl.rendered, "-Z-reserved-lib-stdc++")
				continue
			case v == "cc_kext":
				cl.rendered = append(cl.rendered, "-Z-reserved-lib-cckext")
				continue
			}
		case "_DASH_DASH":
			cl.inputs = append(cl.inputs, a.Values...)
			continue
		}
		cl.rendered = append(cl.rendered, a.String())
	}
	return cl, true
}

// (Compiled on first use, not by every process at start.)
var (
	amdArchRE    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^gfx[0-9a-z]+(-[0-9a-z]+)*(:[0-9a-z-]+[+-])*$`) })
	nvidiaArchRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^sm_[0-9]+[af]?$`) })
)

// offloadTripleArch returns the architecture part of the device triple clang
// infers for an --offload-arch value (the Xarch_ suffix it synthesizes), or ""
// when offcc does not know it. NVIDIA's assumes a 64-bit host.
func offloadTripleArch(arch string) string {
	switch {
	case amdArchRE().MatchString(arch):
		return "amdgcn"
	case nvidiaArchRE().MatchString(arch):
		return "nvptx64"
	}
	return ""
}
