// Command offcc is a clang-compatible compiler driver for offload programs.
// Called as offcc (or offcc++ for C++) it compiles and links like clang,
// running independent offload jobs at once; "offcc <subcommand>" runs one of
// its tools (offload-binary, offload-bundler, inspect, offload-embed,
// linker-wrapper, syclbin) or manages the build cache (cache). Called
// through a link named llvm-offload-binary, clang-offload-packager or
// clang-offload-bundler (optionally with a version suffix such as -22) it
// behaves as that tool.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/urfave/cli/v3"

	"github.com/offcc/offcc/bundler"
	"github.com/offcc/offcc/driver"
	"github.com/offcc/offcc/farm"
	"github.com/offcc/offcc/inspect"
	"github.com/offcc/offcc/internal/atomicfile"
	"github.com/offcc/offcc/linkerwrapper"
	"github.com/offcc/offcc/packager"
	"github.com/offcc/offcc/syclbinlink"
	"github.com/offcc/offcc/toolchain"
)

// version is offcc's own version, printed by "offcc version".
const version = "0.1.0"

func main() {
	os.Exit(run(os.Args))
}

func run(argv []string) int {
	name := filepath.Base(argv[0])
	switch toolchain.ToolName(name) {
	case "llvm-offload-binary", "clang-offload-packager":
		return packager.Main(name, argv[1:], os.Stdout, os.Stderr)
	case "clang-offload-bundler":
		return bundler.Main(name, argv[1:], os.Getenv, os.Stdout, os.Stderr)
	}
	if len(argv) > 1 && argv[1] == "__farm-sandbox" {
		// A build-farm worker's job: confined, then the tool.
		return farm.SandboxMain(argv[2:])
	}
	if len(argv) > 1 && isSubcommand(argv[1]) {
		return runSubcommand(argv)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	self, err := os.Executable()
	if err != nil {
		self = argv[0]
	}
	return driver.Main(ctx, &driver.Invocation{
		Argv0: argv[0], Args: argv[1:], Env: os.Environ(),
		Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Self: self,
		Exec: driver.ExecClang,
	})
}

// tools are the subcommands that parse their own command line (that of
// the LLVM tool they stand in for) and return an exit status.
var tools = []struct {
	name, usage string
	run         func(ctx context.Context, args []string) int
}{
	{"offload-binary", "pack or extract offload binaries (llvm-offload-binary's command line)",
		func(_ context.Context, args []string) int { return packager.Main("offcc", args, os.Stdout, os.Stderr) }},
	{"offload-bundler", "bundle, unbundle or list clang offload bundles (clang-offload-bundler's command line)",
		func(_ context.Context, args []string) int {
			return bundler.Main("offcc offload-bundler", args, os.Getenv, os.Stdout, os.Stderr)
		}},
	{"inspect", "describe the offload containers in files (--json for tools)",
		func(_ context.Context, args []string) int { return inspect.Main("offcc", args, os.Stdout, os.Stderr) }},
	{"offload-embed", "offcc offload-embed [--hip-fatbin|--cuda-fatbin] -o OUT HOST.o BLOB...: add offload binaries as OUT's .llvm.offloading section (or a HIP or CUDA fat binary as its .hip_fatbin or .nv_fatbin)",
		func(_ context.Context, args []string) int { return embedMain(args, os.Stdout, os.Stderr) }},
	{"linker-wrapper", "link stage: extract, link and register device images (clang-linker-wrapper's command line)",
		linkerWrapperMain},
	{"cache", "manage the build cache: stats, clear, trim, explain, export, import (offcc cache --help)",
		cacheMain},
	{"key", "make and show signing keys for the shared cache, cache archives and the build farm: generate NAME [--dir DIR], show FILE (offcc key --help)",
		keyMain},
	{"worker", "serve the build farm: run device jobs for offcc clients through Redis (offcc worker --help); offcc worker status lists workers and queues",
		workerMain},
	{"syclbin", "offcc syclbin link A.syclbin B.syclbin -o OUT.syclbin: link object-state SYCLBIN files into an executable-state one",
		func(ctx context.Context, args []string) int {
			return syclbinlink.Main(ctx, "offcc", args, os.Stdout, os.Stderr)
		}},
}

func isSubcommand(s string) bool {
	if s == "version" {
		return true
	}
	for _, t := range tools {
		if s == t.name {
			return true
		}
	}
	return false
}

func runSubcommand(argv []string) int {
	status := 0
	setStatus := func(rc int) error {
		status = rc
		return nil
	}
	app := &cli.Command{
		Name:      "offcc",
		Usage:     "offload compiler driver tools",
		Writer:    os.Stdout,
		ErrWriter: os.Stderr,
		Commands: []*cli.Command{
			{
				Name:  "version",
				Usage: "print offcc's version",
				Action: func(ctx context.Context, _ *cli.Command) error {
					return printVersion(ctx, os.Stdout)
				},
			},
		},
	}
	for _, t := range tools {
		app.Commands = append(app.Commands, &cli.Command{
			Name: t.name, Usage: t.usage, SkipFlagParsing: true,
			Action: func(ctx context.Context, c *cli.Command) error { return setStatus(t.run(ctx, c.Args().Slice())) },
		})
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := app.Run(ctx, argv); err != nil {
		fmt.Fprintf(os.Stderr, "offcc: error: %v\n", err)
		return 1
	}
	return status
}

// printVersion prints offcc's version (with the commit it was built from,
// when known) and the LLVM installation it drives, as found for a build.
// clang's own text stays with "offcc --version", which CMake and cgo read.
func printVersion(ctx context.Context, w io.Writer) error {
	rev := ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				rev = ", commit " + s.Value[:12]
			}
			if s.Key == "vcs.modified" && s.Value == "true" && rev != "" {
				rev += "+dirty"
			}
		}
	}
	fmt.Fprintf(w, "offcc version %s (%s%s)\n", version, runtime.Version(), rev)
	llvm, err := toolchain.Find("", os.Getenv)
	if err != nil {
		return err
	}
	out, err := exec.CommandContext(ctx, llvm.Clang(), "--version").Output()
	if err != nil {
		return fmt.Errorf("cannot run %s --version: %v", llvm.Clang(), err)
	}
	first, _, _ := strings.Cut(string(out), "\n")
	fmt.Fprintf(w, "drives LLVM %d: %s\nclang: %s\n", llvm.Major, first, llvm.Clang())
	return nil
}

const embedUsage = `USAGE: offcc offload-embed -o OUT HOST.o BLOB...
       offcc offload-embed --hip-fatbin|--cuda-fatbin -o OUT HOST.o FATBIN

Without --hip-fatbin or --cuda-fatbin: OUT is HOST.o with the offload
binaries BLOB... in its .llvm.offloading section, as clang's
-fembed-offload-object adds them (filling an empty section, as a compile
with -fembed-offload-object=/dev/null leaves, in place).
With --hip-fatbin (--cuda-fatbin): OUT is HOST.o, a HIP (CUDA) host object
compiled with -fcuda-include-gpubinary /dev/null, with FATBIN in its
.hip_fatbin (.nv_fatbin) section, laid out as if compiled with
-fcuda-include-gpubinary FATBIN.`

func embedMain(args []string, stdout, stderr io.Writer) int {
	var out string
	var inputs []string
	fatbin, hip := false, false
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "-h" || a == "--help":
			fmt.Fprintln(stdout, embedUsage)
			return 0
		case a == "--hip-fatbin" || a == "--cuda-fatbin":
			fatbin, hip = true, a == "--hip-fatbin"
		case a == "-o" && i+1 < len(args):
			out = args[i+1]
			i++
		case strings.HasPrefix(a, "-o") && len(a) > 2:
			out = a[2:]
		case strings.HasPrefix(a, "-") && a != "-":
			fmt.Fprintf(stderr, "offcc: error: offload-embed: unknown argument '%s'\n", a)
			return 1
		default:
			inputs = append(inputs, a)
		}
	}
	if out == "" || len(inputs) < 2 || (fatbin && len(inputs) != 2) {
		fmt.Fprintln(stderr, "offcc: error: offload-embed: usage: offcc offload-embed [--hip-fatbin|--cuda-fatbin] -o OUT HOST.o BLOB...")
		return 1
	}
	err := atomicfile.WriteFunc(out, 0o666, func(w io.Writer) error {
		if fatbin {
			return packager.EmbedFatbinFile(w, inputs[0], inputs[1], hip)
		}
		return packager.EmbedFiles(w, inputs[0], inputs[1:])
	})
	if err != nil {
		fmt.Fprintf(stderr, "offcc: error: %v\n", err)
		return 1
	}
	return 0
}

const linkerWrapperUsage = `USAGE: offcc linker-wrapper [--llvm-dir=DIR] [options] <host linker arguments>

The link stage of an offload build, with clang-linker-wrapper's command line:
it extracts the offload images from the objects and archive members the link
uses, links them per (triple, arch), registers them with the offload runtime
and runs the host linker.

OPTIONS:
  --host-triple=<triple>    host target triple
  --linker-path=<path>      host linker to run
  -o <path>                 output file
  --device-linker=[<triple>=]<arg>    argument for the device link
  --device-compiler=[<triple>=]<arg>  argument for the device compile
  --should-extract=<arch>   always extract this architecture from archives
  --wrapper-jobs=<N|jobserver>        concurrent device links
  --dry-run                 print the commands, run nothing
  --wrapper-verbose         print the commands as they run
  --save-temps              keep intermediate files
`

func linkerWrapperMain(ctx context.Context, args []string) int {
	for _, a := range args {
		if a == "--help" || a == "-help" || a == "-h" {
			fmt.Fprint(os.Stdout, linkerWrapperUsage)
			return 0
		}
		if a == "--" {
			break
		}
	}
	llvmDir := ""
	if len(args) > 0 && strings.HasPrefix(args[0], "--llvm-dir=") {
		llvmDir = strings.TrimPrefix(args[0], "--llvm-dir=")
		args = args[1:]
	}
	llvm, err := toolchain.Find(llvmDir, os.Getenv)
	if err != nil {
		fmt.Fprintf(os.Stderr, "offcc: error: %v\n", err)
		return 1
	}
	return linkerwrapper.Main(ctx, linkerwrapper.Config{
		Clang: llvm.Clang(), LinkerWrapper: llvm.Tool("clang-linker-wrapper"),
		Jobs: runtime.NumCPU(), Stdout: os.Stdout, Stderr: os.Stderr,
	}, args)
}
