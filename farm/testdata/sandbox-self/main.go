// Command sandbox-self is offcc's "__farm-sandbox" step alone: the Self of
// the farm package's sandbox tests, so that they need not build cmd/offcc.
package main

import (
	"fmt"
	"os"

	"github.com/offcc/offcc/farm"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "__farm-sandbox" {
		os.Exit(farm.SandboxMain(os.Args[2:]))
	}
	fmt.Fprintln(os.Stderr, "usage: sandbox-self __farm-sandbox ...")
	os.Exit(2)
}
