package progress

import (
	"os"
	"strings"

	"github.com/offcc/offcc/internal/term"
)

// Enabled reports whether a status line should be drawn on f: only when f
// is a terminal, env("TERM") is not "dumb" and make's output
// synchronisation (-O, --output-sync) is not on in env("MAKEFLAGS"), since
// make then holds the output of jobs back and would show the line's escape
// sequences out of place. env("OFFCC_PROGRESS") "0" turns the line off and
// "1" turns it on regardless, even when f is not a terminal. A nil env
// means os.Getenv.
func Enabled(f *os.File, env func(string) string) bool {
	if env == nil {
		env = os.Getenv
	}
	switch env("OFFCC_PROGRESS") {
	case "0":
		return false
	case "1":
		return true
	}
	if f == nil || !term.IsTerminal(f) || env("TERM") == "dumb" {
		return false
	}
	return !outputSync(env("MAKEFLAGS"))
}

// outputSync reports whether GNU make's MAKEFLAGS turn output
// synchronisation on. make 4.3 writes single-letter flags without arguments
// into the first word, without a dash ("ks"), then options with arguments
// as separate words ("-Otarget", "-Oline", "-Orecurse", "-Onone" for -O,
// --output-sync and --output-sync=...), then "--" and the command line's
// variable assignments: " -j2 -Otarget --jobserver-auth=3,4 -- V=x". Set by
// hand, MAKEFLAGS may also hold "-O" alone, flags folded together ("-sO",
// "-j4O") or "--output-sync" in long form, possibly abbreviated. The last
// setting wins; "none" is off.
func outputSync(makeflags string) bool {
	on := false
	for i, w := range strings.Fields(makeflags) {
		switch {
		case w == "--":
			return on // variable assignments follow
		case strings.HasPrefix(w, "--"):
			name, val, hasVal := strings.Cut(w, "=")
			// getopt_long takes unambiguous abbreviations: "--ou" is the
			// shortest (--old-file shares "--o").
			if len(name) >= len("--ou") && strings.HasPrefix("--output-sync", name) {
				on = !hasVal || val != "none"
			}
		case strings.HasPrefix(w, "-"):
			on = shortFlags(w[1:], on)
		case i == 0 && !strings.Contains(w, "="):
			on = shortFlags(w, on)
		}
	}
	return on
}

// shortFlags scans a word of folded single-letter make flags and returns
// whether output sync is on after it, on being the setting before it.
func shortFlags(w string, on bool) bool {
	for i := 0; i < len(w); i++ {
		switch w[i] {
		case 'O':
			// The rest of the word is -O's optional argument.
			return w[i+1:] != "none"
		case 'C', 'E', 'f', 'I', 'o', 'W':
			// The rest of the word is this flag's argument.
			return on
		case 'j', 'l':
			// An optional numeric argument.
			for i+1 < len(w) && (w[i+1] >= '0' && w[i+1] <= '9' || w[i+1] == '.') {
				i++
			}
		}
	}
	return on
}
