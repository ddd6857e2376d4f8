//go:build !(linux || darwin || dragonfly || freebsd || netbsd || openbsd)

package term

import "os"

// IsTerminal reports false: terminals are only recognised on Unix.
func IsTerminal(*os.File) bool { return false }

// Width returns 0: unknown.
func Width(*os.File) int { return 0 }
