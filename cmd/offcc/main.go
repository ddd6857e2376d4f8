// Command offcc is a clang-compatible compiler driver for offload programs.
// Called as offcc (or offcc++ for C++) it compiles and links like clang,
// running independent offload jobs at once; "offcc <subcommand>" runs one of
// its tools (offload-binary, offload-bundler, inspect, offload-embed,
// linker-wrapper). Called through a link named llvm-offload-binary,
// clang-offload-packager or clang-offload-bundler (optionally with a
// version suffix such as -22) it behaves as that tool.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"

	"github.com/urfave/cli/v3"

	"github.com/offcc/offcc/bundler"
	"github.com/offcc/offcc/driver"
	"github.com/offcc/offcc/inspect"
	"github.com/offcc/offcc/linkerwrapper"
	"github.com/offcc/offcc/packager"
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
		Stdout: os.Stdout, Stderr: os.Stderr, Self: self,
		Exec: driver.ExecClang,
	})
}

var subcommands = []string{"offload-binary", "offload-bundler", "inspect", "offload-embed", "linker-wrapper", "version"}

func isSubcommand(s string) bool {
	for _, c := range subcommands {
		if s == c {
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
				Name:            "offload-binary",
				Usage:           "pack or extract offload binaries (llvm-offload-binary's command line)",
				SkipFlagParsing: true,
				Action: func(_ context.Context, c *cli.Command) error {
					return setStatus(packager.Main("offcc", c.Args().Slice(), os.Stdout, os.Stderr))
				},
			},
			{
				Name:            "offload-bundler",
				Usage:           "bundle, unbundle or list clang offload bundles (clang-offload-bundler's command line)",
				SkipFlagParsing: true,
				Action: func(_ context.Context, c *cli.Command) error {
					return setStatus(bundler.Main("offcc offload-bundler", c.Args().Slice(), os.Getenv, os.Stdout, os.Stderr))
				},
			},
			{
				Name:            "inspect",
				Usage:           "describe the offload containers in files (--json for tools)",
				SkipFlagParsing: true,
				Action: func(_ context.Context, c *cli.Command) error {
					return setStatus(inspect.Main("offcc", c.Args().Slice(), os.Stdout, os.Stderr))
				},
			},
			{
				Name:            "offload-embed",
				Usage:           "offcc offload-embed -o OUT HOST.o BLOB...: add offload binaries as OUT's .llvm.offloading section",
				SkipFlagParsing: true,
				Action: func(_ context.Context, c *cli.Command) error {
					return setStatus(embedMain(c.Args().Slice(), os.Stdout, os.Stderr))
				},
			},
			{
				Name:            "linker-wrapper",
				Usage:           "link stage: extract, link and register device images (clang-linker-wrapper's command line)",
				SkipFlagParsing: true,
				Action: func(ctx context.Context, c *cli.Command) error {
					return setStatus(linkerWrapperMain(ctx, c.Args().Slice()))
				},
			},
			{
				Name:  "version",
				Usage: "print offcc's version",
				Action: func(context.Context, *cli.Command) error {
					fmt.Fprintf(os.Stdout, "offcc version %s (drives LLVM %d)\n", version, toolchain.RequiredMajor)
					return nil
				},
			},
		},
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := app.Run(ctx, argv); err != nil {
		fmt.Fprintf(os.Stderr, "offcc: error: %v\n", err)
		return 1
	}
	return status
}

func embedMain(args []string, stdout, stderr io.Writer) int {
	var out string
	var inputs []string
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "-h" || a == "--help":
			fmt.Fprintln(stdout, "USAGE: offcc offload-embed -o OUT HOST.o BLOB...")
			return 0
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
	if out == "" || len(inputs) < 2 {
		fmt.Fprintln(stderr, "offcc: error: offload-embed: usage: offcc offload-embed -o OUT HOST.o BLOB...")
		return 1
	}
	if err := driver.EmbedOffload(out, inputs[0], inputs[1:]); err != nil {
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
		Clang: llvm.Clang(), Jobs: runtime.NumCPU(), Stdout: os.Stdout, Stderr: os.Stderr,
	}, args)
}
