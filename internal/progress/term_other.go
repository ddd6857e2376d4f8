//go:build !(linux || darwin || dragonfly || freebsd || netbsd || openbsd)

package progress

import "os"

// isTerminal reports false: terminals are only recognised on Unix.
func isTerminal(*os.File) bool { return false }

// termWidth returns 0: unknown.
func termWidth(*os.File) int { return 0 }
