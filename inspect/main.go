package inspect

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/offcc/offcc/internal/mmapfile"
)

const usageText = `OVERVIEW: describe the offload containers in files

USAGE: %[1]s inspect [--json] FILE...

Recognises ELF objects, executables and shared objects (sections
.llvm.offloading, __CLANG_OFFLOAD_BUNDLE__*, .hip_fatbin, .nv_fatbin,
__nv_relfatbin, .nvFatBinSegment), static archives, offload binaries
(versions 1 and 2), clang offload bundles (binary, text, compressed),
NVIDIA fat binaries (PTX and cubin entries; LZ4-compressed ones are
decoded, ZSTD ones are shown with their sizes), SYCLBIN files (a bare
body, the v1 offload binary envelope, the v2 multi-entry offload binary:
state, abstract modules with their kernels, IR modules, native images and
property sets) and poclbin files, nested in any combination, and prints a
tree: kind, target triple and arch, producer, size, offset and metadata
keys. "-" reads standard input.

OPTIONS:
  --json       print one JSON array with a tree per file
  -h, --help   print this help
`

// Main runs "offcc inspect" (args excludes the program name) and returns
// the exit status: 0, or 1 when a file could not be read or parsed (the
// other files are still described; errors go to stderr as
// "<prog>: error: <file>: <what, where>").
func Main(prog string, args []string, stdout, stderr io.Writer) int {
	var files []string
	asJSON := false
	for i, a := range args {
		switch {
		case a == "--":
			files = append(files, args[i+1:]...)
		case a == "--json" || a == "-json":
			asJSON = true
			continue
		case a == "-h" || a == "--help" || a == "-help":
			fmt.Fprintf(stdout, usageText, prog)
			return 0
		case len(a) > 1 && a[0] == '-':
			fmt.Fprintf(stderr, "%s: error: unknown argument '%s'; try '%s inspect --help'\n", prog, a, prog)
			return 1
		default:
			files = append(files, a)
			continue
		}
		break
	}
	if len(files) == 0 {
		fmt.Fprintf(stderr, "%s: error: no input files; try '%s inspect --help'\n", prog, prog)
		return 1
	}
	status := 0
	var roots []*Node
	for i, name := range files {
		n, err := inspectFile(name)
		if err != nil {
			msg := strings.ReplaceAll(err.Error(), "\n", " ")
			fmt.Fprintf(stderr, "%s: error: %s: %s\n", prog, name, msg)
			status = 1
			roots = append(roots, &Node{Kind: "error", Name: name, Error: msg})
			continue
		}
		roots = append(roots, n)
		if !asJSON {
			if i > 0 {
				fmt.Fprintln(stdout)
			}
			WriteTree(stdout, n)
		}
	}
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(roots); err != nil {
			fmt.Fprintf(stderr, "%s: error: %v\n", prog, err)
			return 1
		}
	}
	return status
}

func inspectFile(name string) (*Node, error) {
	f, err := mmapfile.Open(name)
	if err != nil {
		return nil, unwrapPathError(err)
	}
	defer f.Close()
	return Inspect(name, f.Data)
}

// unwrapPathError drops the operation and file name os adds, since Main
// prints the name.
func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
