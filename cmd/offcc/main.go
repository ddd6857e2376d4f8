// Command offcc is a clang-compatible compiler driver for offload programs.
// Called as offcc (or offcc++ for C++) it compiles and links like clang,
// running independent offload jobs at once; "offcc <subcommand>" runs one of
// its tools (offload-binary, offload-bundler, inspect, offload-embed,
// linker-wrapper, syclbin) or manages the build cache (cache). Called
// through a link named llvm-offload-binary, clang-offload-packager or
// clang-offload-bundler (optionally with a version suffix such as -22) it
// behaves as that tool, having read offcc's configuration as every offcc
// command does.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/urfave/cli/v3"

	"github.com/offcc/offcc/actions"
	"github.com/offcc/offcc/bundler"
	"github.com/offcc/offcc/cmd/offcc/internal/services"
	"github.com/offcc/offcc/config"
	"github.com/offcc/offcc/driver"
	"github.com/offcc/offcc/farm"
	"github.com/offcc/offcc/inspect"
	"github.com/offcc/offcc/internal/atomicfile"
	"github.com/offcc/offcc/linkerwrapper"
	"github.com/offcc/offcc/manual"
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
	case "llvm-offload-binary", "clang-offload-packager", "clang-offload-bundler":
		return multiCall(name, argv[1:])
	}
	if len(argv) > 1 && argv[1] == "__farm-sandbox" {
		// A build-farm worker's job: confined, then the tool.
		return farm.SandboxMain(argv[2:])
	}
	if len(argv) > 1 && argv[1] == "config" {
		// It shows a bad configuration: it must run with one.
		return configMain(argv[2:], os.Environ(), os.Stdout, os.Stderr)
	}
	// The configuration file and the environment, checked once: a bad
	// setting fails every command; the rest read the merged result.
	cfg, err := config.Load(os.Environ())
	if err != nil {
		fmt.Fprintf(os.Stderr, "offcc: error: %s\n", oneLine(err.Error()))
		return 1
	}
	if len(argv) > 1 && isSubcommand(argv[1]) {
		return runSubcommand(argv, cfg)
	}
	if len(argv) > 1 {
		if msg := misspeltSubcommand(argv[1]); msg != "" {
			fmt.Fprintf(os.Stderr, "offcc: error: %s\n", msg)
			return 1
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	self, err := os.Executable()
	if err != nil {
		self = argv[0]
	}
	return driver.Main(ctx, &driver.Invocation{
		Argv0: argv[0], Args: argv[1:], Env: cfg.Environ(),
		Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Self: self,
		Exec: driver.ExecClang, Services: services.New(),
	})
}

// multiCall runs offcc called as the LLVM tool name names (args without
// the program name). It reads the configuration as "offcc offload-bundler"
// and every other offcc command does (config.Load): a bad configuration
// file or setting fails it as it fails them, with the tool's own "NAME:
// error: " (the tools read none of offcc's settings today; the bundler's
// OFFLOAD_BUNDLER_* variables are LLVM's, from the environment).
func multiCall(name string, args []string) int {
	cfg, err := config.Load(os.Environ())
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: error: %s\n", name, oneLine(err.Error()))
		return 1
	}
	if toolchain.ToolName(name) == "clang-offload-bundler" {
		return bundler.Main(name, args, cfg.Getenv, os.Stdout, os.Stderr)
	}
	return packager.Main(name, args, os.Stdout, os.Stderr)
}

// subcommand runs one of offcc's subcommands with its arguments and the
// configuration in force (config.Load), whose Getenv and Environ it reads
// instead of the process's environment, and returns the exit status.
type subcommand func(ctx context.Context, args []string, cfg *config.Config) int

// subcommands are offcc's subcommands by name (manual.Subcommands, less
// "version", which the cli package runs, has their usage lines), each
// parsing its own command line (that of the LLVM tool it stands in for).
func subcommands() map[string]subcommand {
	return map[string]subcommand{
		"offload-binary": func(_ context.Context, args []string, _ *config.Config) int {
			return packager.Main("offcc", args, os.Stdout, os.Stderr)
		},
		"offload-bundler": func(_ context.Context, args []string, cfg *config.Config) int {
			return bundler.Main("offcc offload-bundler", args, cfg.Getenv, os.Stdout, os.Stderr)
		},
		"inspect": func(_ context.Context, args []string, _ *config.Config) int {
			return inspect.Main("offcc", args, os.Stdout, os.Stderr)
		},
		"offload-embed": func(_ context.Context, args []string, _ *config.Config) int {
			return embedMain(args, os.Stdout, os.Stderr)
		},
		"linker-wrapper": linkerWrapperMain,
		"cache":          cacheMain,
		"key":            keyMain,
		"worker":         workerMain,
		"syclbin": func(ctx context.Context, args []string, _ *config.Config) int {
			return syclbinlink.Main(ctx, "offcc", args, os.Stdout, os.Stderr)
		},
		"config": func(_ context.Context, args []string, cfg *config.Config) int {
			return configMain(args, cfg.Environ(), os.Stdout, os.Stderr)
		},
	}
}

func isSubcommand(s string) bool {
	_, ok := subcommands()[s]
	return ok || s == "version"
}

func runSubcommand(argv []string, cfg *config.Config) int {
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
					return printVersion(ctx, os.Stdout, cfg.Getenv)
				},
			},
		},
	}
	runs := subcommands()
	for _, sc := range manual.Subcommands() {
		name, _, _ := strings.Cut(sc.Name, " ") // "syclbin link" is syclbin's
		run := runs[name]
		if run == nil {
			continue // version, above
		}
		app.Commands = append(app.Commands, &cli.Command{
			Name: name, Usage: sc.Doc, SkipFlagParsing: true,
			Action: func(ctx context.Context, c *cli.Command) error { return setStatus(run(ctx, c.Args().Slice(), cfg)) },
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
func printVersion(ctx context.Context, w io.Writer, getenv func(string) string) error {
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
	llvm, err := toolchain.Find("", getenv)
	if err != nil {
		return err
	}
	sh := actions.NewShell(actions.ShellOptions{})
	out, err := sh.Output(ctx, llvm.Clang(), "--version")
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

func linkerWrapperMain(ctx context.Context, args []string, cfg *config.Config) int {
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
	llvm, err := toolchain.Find(llvmDir, cfg.Getenv)
	if err != nil {
		fmt.Fprintf(os.Stderr, "offcc: error: %v\n", err)
		return 1
	}
	return linkerwrapper.Main(ctx, linkerwrapper.Config{
		Clang: llvm.Clang(), LinkerWrapper: llvm.Tool("clang-linker-wrapper"), LLC: llvm.Tool("llc"), Release: llvm.Profile,
		Jobs: runtime.NumCPU(), Stdout: os.Stdout, Stderr: os.Stderr,
	}, args)
}
