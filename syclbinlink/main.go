package syclbinlink

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/offcc/offcc/internal/atomicfile"
	"github.com/offcc/offcc/syclbin"
)

const usage = `usage: %[1]s syclbin link [options] A.syclbin B.syclbin... -o OUT.syclbin

Link SYCLBIN files in object (or input) state into one file in executable
state. The SPIR-V modules of the inputs that share a target triple are linked
with spirv-link into one module; an imported symbol that no input defines, or
a kernel or symbol defined twice, is an error. Native device images cannot be
linked.

options:
  -o FILE, --output=FILE  write the linked file to FILE (required)
  --syclbin-version=N     write SYCLBIN version N, 1 or 2 (default: that of
                          the first input)
  -v                      print the spirv-link commands on standard error
  --help                  print this help
`

// Main runs "offcc syclbin": args are the arguments after "syclbin", the
// first of which names the subcommand (only "link" exists). prog is the
// name for messages ("offcc"). It returns the exit status: 0 on success
// (and for --help), 1 with "prog: error: ..." lines on standard error
// otherwise. The output file is written atomically, so that a failed link
// leaves no file, or the old one, behind.
func Main(ctx context.Context, prog string, args []string, stdout, stderr io.Writer) int {
	fail := func(err error) int {
		for _, line := range strings.Split(err.Error(), "\n") {
			fmt.Fprintf(stderr, "%s: error: %s\n", prog, line)
		}
		return 1
	}
	if len(args) == 0 {
		return fail(errors.New("missing syclbin subcommand; the only one is 'link' (see --help)"))
	}
	switch args[0] {
	case "link":
	case "--help", "-help", "-h", "help":
		fmt.Fprintf(stdout, usage, prog)
		return 0
	default:
		return fail(fmt.Errorf("unknown syclbin subcommand '%s'; the only one is 'link'", args[0]))
	}
	opts, err := parseArgs(args[1:])
	if err != nil {
		return fail(err)
	}
	if opts.help {
		fmt.Fprintf(stdout, usage, prog)
		return 0
	}

	files := make([]*syclbin.File, len(opts.inputs))
	enc := opts.encoding
	for i, name := range opts.inputs {
		data, err := os.ReadFile(name)
		if err != nil {
			var pe *fs.PathError
			if errors.As(err, &pe) {
				err = pe.Err
			}
			return fail(fmt.Errorf("cannot read %s: %v", name, err))
		}
		f, e, err := syclbin.Decode(data)
		if err != nil {
			return fail(fmt.Errorf("%s: %s", name, oneLine(err)))
		}
		files[i] = f
		if i == 0 && enc == 0 {
			enc = e
		}
	}
	cfg := Config{Stderr: stderr, Verbose: opts.verbose}
	out, err := Link(ctx, cfg, files, opts.inputs)
	if err != nil {
		return fail(err)
	}
	data, err := syclbin.Encode(out, enc)
	if err != nil {
		return fail(fmt.Errorf("cannot encode %s: %s", opts.output, oneLine(err)))
	}
	if err := atomicfile.Write(opts.output, data, 0o666); err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return fail(fmt.Errorf("cannot write %s: %v", opts.output, err))
	}
	return 0
}

// oneLine joins the lines of err's message with "; ".
func oneLine(err error) string {
	return strings.ReplaceAll(err.Error(), "\n", "; ")
}

type options struct {
	output   string
	encoding syclbin.Encoding // 0: the first input's
	verbose  bool
	help     bool
	inputs   []string
}

// parseArgs parses link's arguments: -o FILE, -oFILE, --output=FILE,
// --output FILE, --syclbin-version=N (or N as the next argument), -v,
// --help, "--" (the rest are inputs) and input files.
func parseArgs(args []string) (*options, error) {
	o := &options{}
	setOutput := func(name string) error {
		if o.output != "" {
			return fmt.Errorf("more than one output file: '%s' and '%s'", o.output, name)
		}
		if name == "" {
			return errors.New("empty output file name")
		}
		o.output = name
		return nil
	}
	setVersion := func(v string) error {
		switch v {
		case "1":
			o.encoding = syclbin.EncodingV1
		case "2":
			o.encoding = syclbin.EncodingV2
		default:
			return fmt.Errorf("invalid value '%s' in '--syclbin-version': want 1 or 2", v)
		}
		return nil
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		var err error
		switch {
		case a == "--":
			o.inputs = append(o.inputs, args[i+1:]...)
			i = len(args)
		case a == "-o" || a == "--output":
			if i+1 >= len(args) {
				return nil, fmt.Errorf("argument to '%s' is missing (expected 1 value)", a)
			}
			i++
			err = setOutput(args[i])
		case strings.HasPrefix(a, "--output="):
			err = setOutput(strings.TrimPrefix(a, "--output="))
		case strings.HasPrefix(a, "-o") && !strings.HasPrefix(a, "--"):
			err = setOutput(strings.TrimPrefix(a, "-o"))
		case a == "--syclbin-version":
			if i+1 >= len(args) {
				return nil, fmt.Errorf("argument to '%s' is missing (expected 1 value)", a)
			}
			i++
			err = setVersion(args[i])
		case strings.HasPrefix(a, "--syclbin-version="):
			err = setVersion(strings.TrimPrefix(a, "--syclbin-version="))
		case a == "-v":
			o.verbose = true
		case a == "--help" || a == "-help" || a == "-h":
			o.help = true
		case a == "-":
			err = errors.New("reading an input from standard input ('-') is not supported")
		case strings.HasPrefix(a, "-"):
			err = fmt.Errorf("unknown argument: '%s'", a)
		default:
			o.inputs = append(o.inputs, a)
		}
		if err != nil {
			return nil, err
		}
	}
	if o.help {
		return o, nil
	}
	if len(o.inputs) == 0 {
		return nil, errors.New("no input files")
	}
	if o.output == "" {
		return nil, errors.New("no output file; use -o FILE")
	}
	return o, nil
}
