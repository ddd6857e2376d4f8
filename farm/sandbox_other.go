//go:build !linux

package farm

import (
	"fmt"
	"os"
)

// SandboxABI returns 0: Landlock is Linux's.
func SandboxABI() int { return 0 }

// SandboxMain fails: there is no sandbox on this system.
func SandboxMain(args []string) int {
	fmt.Fprintln(os.Stderr, "offcc: error: __farm-sandbox: no sandbox on this system")
	return 2
}
