// Command gen writes offcc's man page, rendered by package manual, to the
// file -o names ("go generate ./manual" writes docs/offcc.1).
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/offcc/offcc/manual"
)

func main() {
	out := flag.String("o", "offcc.1", "the man page to write")
	flag.Parse()
	if err := os.WriteFile(*out, []byte(manual.Man()), 0o644); err != nil {
		fmt.Fprintf(os.Stderr, "gen: error: %v\n", err)
		os.Exit(1)
	}
}
