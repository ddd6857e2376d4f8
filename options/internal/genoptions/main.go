// Command genoptions writes offcc's copy of clang's option table
// (options/clang_records.go) and its lookup index (options/clang_index.go)
// from the Options.inc that Debian's libclang-22-dev installs. Run it with `go generate ./options` after
// moving to another LLVM; options' tests fail until it has run.
package main

import (
	"fmt"
	"os"

	"github.com/offcc/offcc/internal/atomicfile"
	"github.com/offcc/offcc/options/internal/gen"
)

func main() {
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: genoptions OPTIONS.INC RECORDS.go INDEX.go")
		os.Exit(2)
	}
	inc, err := os.ReadFile(os.Args[1])
	if err == nil {
		recs := must(gen.Parse(inc))
		src := must(gen.Source("options", "clangRecords", gen.Origin, recs))
		index := must(gen.IndexSource("options", "clangIndex", "clangRecords", gen.Origin, recs))
		if err = atomicfile.Write(os.Args[2], src, 0o644); err == nil {
			err = atomicfile.Write(os.Args[3], index, 0o644)
		}
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "genoptions: error: %v\n", err)
		os.Exit(1)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		fmt.Fprintf(os.Stderr, "genoptions: error: %v\n", err)
		os.Exit(1)
	}
	return v
}
