// Command genoptions writes offcc's copy of clang's option table
// (options/clang_records.go) and its lookup index (options/clang_index.go)
// from the Options.inc that Debian's libclang-22-dev installs, and those
// of other LLVM releases (options/clang19_records.go from
// libclang-19-dev's) under the names -name gives (clang19: clang19Records
// and clang19Index). Run it with `go generate ./options` after moving to
// another LLVM; options' tests fail until it has run.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/offcc/offcc/internal/atomicfile"
	"github.com/offcc/offcc/options/internal/gen"
)

func main() {
	name := flag.String("name", "clang", "the variables' `prefix`: PREFIXRecords and PREFIXIndex")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: genoptions [-name PREFIX] OPTIONS.INC RECORDS.go INDEX.go")
		os.Exit(2)
	}
	flag.Parse()
	if flag.NArg() != 3 {
		flag.Usage()
	}
	origin := flag.Arg(0)
	inc, err := os.ReadFile(origin)
	if err == nil {
		recs := must(gen.Parse(inc))
		src := must(gen.Source("options", *name+"Records", origin, recs))
		index := must(gen.IndexSource("options", *name+"Index", *name+"Records", origin, recs))
		if err = atomicfile.Write(flag.Arg(1), src, 0o644); err == nil {
			err = atomicfile.Write(flag.Arg(2), index, 0o644)
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
