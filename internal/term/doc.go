// Package term answers what offcc needs to know about a terminal: whether a
// file is one, how wide it is, and whether clang would colour its
// diagnostics on it. It uses the standard library's syscall package only.
package term

import "strings"

// HasColors reports whether clang, writing to a terminal with the
// environment env, colours its diagnostics by default: as LLVM's
// terminalHasColors, when TERM names a terminal type known to take ANSI
// colours.
func HasColors(env func(string) string) bool {
	t := env("TERM")
	switch t {
	case "ansi", "cygwin", "linux":
		return true
	}
	for _, p := range []string{"screen", "xterm", "vt100", "rxvt"} {
		if strings.HasPrefix(t, p) {
			return true
		}
	}
	return strings.HasSuffix(t, "color")
}
