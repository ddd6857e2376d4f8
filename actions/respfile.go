package actions

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// maxArgStrlen is Linux's MAX_ARG_STRLEN: no single argument or
// environment string (with its NUL) may be longer.
const maxArgStrlen = 32 * 4096

// ArgLimit is the number of bytes of arguments and environment offcc lets
// one command have: half of what execve accepts (a quarter of the stack
// limit, at least 128 KiB), keeping room for what the child adds, as
// LLVM's commandLineFitsWithinSystemLimits does.
func ArgLimit() int {
	limit := 2 << 20
	var r syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_STACK, &r) == nil && r.Cur != ^uint64(0) {
		limit = int(min(r.Cur/4, 1<<30))
	}
	return max(limit, maxArgStrlen) / 2
}

// FitsCommandLine reports whether a command with argv and env stays within
// limit bytes (ArgLimit when limit is 0) and no argument is longer than
// execve allows.
func FitsCommandLine(argv, env []string, limit int) bool {
	if limit <= 0 {
		limit = ArgLimit()
	}
	total := 0
	for _, list := range [][]string{argv, env} {
		for _, s := range list {
			if len(s)+1 > maxArgStrlen {
				return false
			}
			total += len(s) + 1 + 8 // the string, its NUL and its pointer
		}
	}
	return total <= limit
}

// SupportsResponseFiles reports whether the program at path reads
// "@FILE" arguments with GNU quoting: clang and the LLVM tools, lld and
// GNU ld, and offcc itself. NVIDIA's tools (ptxas, fatbinary, nvlink) do
// not.
func SupportsResponseFiles(path string) bool {
	name := filepath.Base(path)
	for _, p := range []string{"clang", "llvm-", "ld", "lld", "offcc", "opt", "llc", "spirv-"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// QuoteResponseFileArg quotes arg for a response file read with GNU rules
// (llvm::cl::TokenizeGNUCommandLine): a backslash before every space, tab,
// newline, quote and backslash; the empty argument is "".
func QuoteResponseFileArg(arg string) string {
	if arg == "" {
		return `""`
	}
	var b strings.Builder
	b.Grow(len(arg) + 8)
	for i := 0; i < len(arg); i++ {
		switch c := arg[i]; c {
		case ' ', '\t', '\n', '\r', '\v', '\f', '"', '\'', '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// WriteResponseFile writes args, one per line in GNU quoting, to a new
// file in dir and returns its name. The caller removes it.
func WriteResponseFile(dir string, args []string) (string, error) {
	f, err := os.CreateTemp(dir, "args-*.rsp")
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, a := range args {
		b.WriteString(QuoteResponseFileArg(a))
		b.WriteByte('\n')
	}
	_, err = f.WriteString(b.String())
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}

// ResponseFileCommand returns argv itself when it fits the system's
// limits (limit as for FitsCommandLine), and otherwise, for a program that
// reads response files, argv[0] and "@FILE" with the other arguments in a
// new response file in dir. cleanup removes that file; it is never nil.
func ResponseFileCommand(path string, argv, env []string, dir string, limit int) (cmd []string, cleanup func(), err error) {
	cleanup = func() {}
	// LLVM's reader drops an empty argument, so a command with one keeps
	// its argument vector (and fails to start, saying it is too long).
	if len(argv) < 2 || FitsCommandLine(argv, env, limit) || !SupportsResponseFiles(path) || slices.Contains(argv[1:], "") {
		return argv, cleanup, nil
	}
	if dir == "" {
		dir = os.TempDir()
	}
	name, err := WriteResponseFile(dir, argv[1:])
	if err != nil {
		return nil, cleanup, err
	}
	return []string{argv[0], "@" + name}, func() { os.Remove(name) }, nil
}

// SplitResponseFile splits the text of a response file into arguments as
// clang does on Linux (llvm::cl::TokenizeGNUCommandLine): whitespace
// separates arguments; a backslash takes the next character literally,
// inside quotes too; single and double quotes group. Shell operators
// (&, ;, |, $) are ordinary characters, and an empty argument ("") is
// dropped, as LLVM drops it.
func SplitResponseFile(src string) []string {
	var args []string
	var tok strings.Builder
	isSpace := func(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch {
		case c == '\\' && i+1 < len(src):
			i++
			tok.WriteByte(src[i])
		case c == '"' || c == '\'':
			for i++; i < len(src) && src[i] != c; i++ {
				if src[i] == '\\' && i+1 < len(src) {
					i++
				}
				tok.WriteByte(src[i])
			}
		case isSpace(c):
			if tok.Len() > 0 {
				args = append(args, tok.String())
				tok.Reset()
			}
		default:
			tok.WriteByte(c)
		}
	}
	if tok.Len() > 0 {
		args = append(args, tok.String())
	}
	return args
}
